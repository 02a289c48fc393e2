"""The IteROAR suite bound to its heavy halves (:mod:`.evaluation`, the digits testbed's
training: torch): its chains, their records and the reference chain's test."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.suite_kit.seam import Recorder, Scored
from pytest_chaosmining.suites.iteroar import evaluation
from pytest_chaosmining.suites.iteroar.spec import REFERENCE, SUITE, ChainResult, IteroarCase, IteroarSpec
from pytest_chaosmining.testbeds.digits import training as digit_models
from pytest_chaosmining.testbeds.digits.tiers import VISION
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run_view import RunView


def accuracy_drop(result: ChainResult) -> float:
    """Mean accuracy lost over the retrained models: ``acc_0 − mean(acc_1 … acc_I)``."""
    return float(result.accuracy[0] - np.mean(result.accuracy[1:]))


def chain_records(case: IteroarCase, name: str, result: ChainResult) -> list[Record]:
    """What a chain records: accuracy per iteration, each removed mask's share on the box
    and of the box, the mask metrics, leakage, the accuracy drop and the retraining time."""

    def record(metric: str, value: float, iteration: int | None = None) -> Record:
        fields = case.case_fields()
        if iteration is not None:
            fields["iteration"] = iteration
        return Record(SUITE, case.model_id, name, case.seed, metric, float(value), fields)

    made = [record("accuracy", acc, i) for i, acc in enumerate(result.accuracy)]
    for i, (share, covered) in enumerate(zip(result.box_share, result.box_covered)):
        made += [record("mask_on_box", share, i), record("box_removed", covered, i)]
    made += [record(m, getattr(result, m)) for m in ("mmo", "mamo", "cma", "leak_accuracy", "leak_random_accuracy")]
    return [*made, record("accuracy_drop", accuracy_drop(result)), record("train_seconds", sum(result.train_seconds))]


def _curve(accuracy: list[float]) -> str:
    return " → ".join(f"{a:.3f}" for a in accuracy)


class IteroarSuite(IteroarSpec):
    """The IteROAR suite as a run uses it: its spec, f_0 from the digits testbed, the chains."""

    def f0(self, run: RunView, case: IteroarCase) -> Any:
        """The trained vision model the chains of ``case`` start from (the vision suite's)."""
        return digit_models.run_model(run, case.base)

    def chain(self, run: RunView, case: IteroarCase, explainer: str | None) -> ChainResult:
        """The chain of ``explainer`` (None: the random-pixel reference) on ``case``,
        run at most once per process; its retrained models are cached on disk."""

        def chained() -> ChainResult:
            f0 = self.f0(run, case)
            batch = VISION[run.plan.tier].internal_batch_size

            def compute() -> ChainResult:
                train = run.runtime.memo(
                    ("vision-train", case.base), lambda: digit_models.data_split(case.base, "train", run.runtime.cache)
                )
                name = explainer or REFERENCE
                return evaluation.run_chain(
                    case,
                    f0,
                    train,
                    run.explainers[explainer] if explainer else None,
                    run.runtime.cache,
                    run.runtime.device,
                    batch,
                    run.runtime.progress(f"iteroar {case.id} {name}"),
                    stream=name,
                    remembered=lambda key, compute: run.results.reused(SUITE, key, compute),
                )

            parts = {
                "case": dataclasses.asdict(case),
                "weights": weights_digest(f0.model),
                "internal_batch_size": batch,
            }
            if explainer is not None:
                return run.results.evaluated(SUITE, parts, run.explainers[explainer], compute, (ChainResult,))
            return run.results.reused(SUITE, {**parts, "explainer": REFERENCE}, compute, (ChainResult,))

        return run.runtime.memo(("iteroar", case, explainer), chained)

    def gate(self, run: RunView, case: IteroarCase) -> float:
        """The IteROAR accuracy gate; the test skips where f_0 is below it."""
        trained = self.f0(run, case)
        gate = run.judge.thresholds.quality_gate(SUITE, run.plan.tier)
        if trained.accuracy < gate:
            pytest.skip(
                f"f_0 of {case.id} is below the IteROAR accuracy gate ({trained.accuracy:.3f} < {gate:.3f}): "
                "removing features from a model that has not learned measures nothing"
            )
        return gate

    def scored(
        self,
        run: RunView,
        case: IteroarCase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """The explainer's chain (timed) beside the reference chain: the drop gain and
        the training gain, and the chain's records."""
        self.gate(run, case)
        reference = self.chain(run, case, None)
        with run.runtime.timer(benchmark, SUITE, case.id, explainer), explainer_failures(node.config):
            result = self.chain(run, case, explainer)
        values = {
            "drop_gain": accuracy_drop(result) - accuracy_drop(reference),
            "training_gain": result.training_gain,
            "curve": _curve(result.accuracy),
            "reference_curve": _curve(reference.accuracy),
            "first_on_box": result.box_share[0],
            "untrained_box_share": result.untrained_box_share,
        }
        return Scored(values, chain_records(case, explainer, result))


def judge_reference(run: RunView, suite: IteroarSuite, case: IteroarCase, node: pytest.Item) -> None:
    """The reference chain's test: its records, and f_0's accuracy at least the gate."""
    gate = suite.gate(run, case)
    result = suite.chain(run, case, None)
    for made in chain_records(case, REFERENCE, result):
        run.judge.record(node, made)
    first = Record(SUITE, case.model_id, MODEL_LEVEL, case.seed, "accuracy", result.accuracy[0], {
        **case.case_fields(), "iteration": 0
    })  # fmt: skip
    run.judge.require(node, first, gate, f"f_0 of {case.id}")
