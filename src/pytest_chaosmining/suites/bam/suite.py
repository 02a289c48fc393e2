"""The BAM suite bound to its heavy half (:mod:`.evaluation`: torch): the models of a
case, the premise, the scores and the relative-importance test."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.suite_kit.judging import timed_score
from pytest_chaosmining.suite_kit.seam import Recorder, Scored
from pytest_chaosmining.suites.bam import evaluation
from pytest_chaosmining.suites.bam.spec import (
    SUITE,
    BamCase,
    BamModels,
    BamSpec,
)
from pytest_chaosmining.suites.bam.tiers import BAM

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView


def relative_importance(models: BamModels, chance_margin: float, keep_margin: float) -> list[str]:
    """The premise of MCS and IDR, as a list of violations (empty: it holds):
    without the object f_o is near chance (within ``chance_margin`` of 10%) and
    f_s keeps its accuracy (within ``keep_margin``); without the scene f_s is
    near chance and f_o keeps its accuracy."""
    a, chance, out = models.accuracy, 1.0 / 10, []
    for model, removed, _kept, other in (("f_o", "no_object", "gray", "f_s"), ("f_s", "gray", "no_object", "f_o")):
        if a[f"{model}/{removed}"] > chance + chance_margin:
            out.append(
                f"{model} keeps {a[f'{model}/{removed}']:.3f} accuracy without its feature "
                f"({removed}; chance 0.100 + {chance_margin})"
            )
        if a[f"{other}/{removed}"] < a[f"{other}/images"] - keep_margin:
            out.append(f"{other} drops from {a[f'{other}/images']:.3f} to {a[f'{other}/{removed}']:.3f} on {removed}")
    return out


def _record(case: BamCase, explainer: str, metric: str, value: float, **extra: str | int | float) -> Record:
    return Record(SUITE, case.model_id, explainer, case.seed, metric, float(value), {**case.case_fields(), **extra})


class BamSuite(BamSpec):
    """The BAM suite as a run uses it: its spec, the models of a case, the premise, the scores."""

    def premise(self, run: RunView, models: BamModels) -> list[str]:
        """Why the premise of MCS and IDR does not hold on ``models`` (empty: it holds)."""
        section = run.judge.thresholds.section(SUITE, run.plan.tier)
        gate = float(section["quality_gate"])
        low = [
            f"{name} accuracy {models.accuracy[f'{name}/images']:.3f} < gate {gate:.3f}"
            for name in ("f_o", "f_s")
            if models.accuracy[f"{name}/images"] < gate
        ]
        return low + relative_importance(models, float(section["chance_margin"]), float(section["keep_margin"]))

    def scored(
        self,
        run: RunView,
        case: BamCase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """The explainer's MCS, IDR and IIR on the case's models (skipped where the
        premise does not hold), timed; the gains over their random-region baselines
        and the MCS_k series."""
        models = self.models(run, case)
        violations = self.premise(run, models)
        if violations:
            pytest.skip(f"BAM premise does not hold on {case.id}; nothing to score ({'; '.join(violations)})")
        out = timed_score(run, SUITE, case, explainer, benchmark, node, lambda e: self.score(run, models, e), record)
        values = {**out, "mcs_gain": out["mcs"] - out["mcs_baseline"], "idr_gain": out["idr"] - out["idr_baseline"]}
        return Scored(values, [_record(case, explainer, "mcs_k", v, k=k) for k, v in out["mcs_k"].items()])

    def score(self, run: RunView, models: BamModels, explainer: Explainer) -> dict[str, Any]:
        """:func:`evaluate` at the session's tier sizes (a built-in's scores from the derived cache)."""

        tier = BAM[run.plan.tier]
        sizes = {
            "n_explain": tier.n_explain,
            "internal_batch_size": tier.internal_batch_size,
            "delta_steps": tier.delta_steps,
        }
        weights = weights_digest(models.f_o, models.f_s, *models.f_k.values())
        self._neutral_patches(run, models, weights, min(tier.n_explain, len(models.val)), tier.delta_steps)
        return run.results.evaluated(
            SUITE,
            {"case": dataclasses.asdict(models.case), "weights": weights, **sizes},
            explainer,
            lambda: evaluation.evaluate(models, explainer, run.runtime.device, **sizes),
            (Cost,),
        )

    @staticmethod
    def _neutral_patches(run: RunView, models: BamModels, weights: str, n: int, steps: int) -> None:
        """Fill ``models.delta`` (:func:`neutral_patches`: 100 optimiser steps on f_s, the
        same for every explainer) from the derived-results cache, keyed by the models'
        weights, or compute and keep it there: every explainer of every run needs it."""
        if models.delta is not None and models.delta[0] == (n, steps):
            return

        def compute() -> dict[str, list[object]]:
            moved, same = evaluation.neutral_patches(models, n, run.runtime.device, steps)
            return {"moved": moved.tolist(), "same": same.tolist()}

        key = {"check": "neutral_patches", "case": dataclasses.asdict(models.case), "weights": weights}
        stored = run.results.reused(SUITE, {**key, "n": n, "steps": steps}, compute)
        models.delta = ((n, steps), np.asarray(stored["moved"], dtype=np.uint8), np.asarray(stored["same"], dtype=bool))

    def models(self, run: RunView, case: BamCase) -> BamModels:
        """The BAM models of ``case`` (f_o, f_s, every f_k), trained at most once (and cached on disk)."""
        return run.runtime.memo(
            ("bam", case),
            lambda: evaluation.trained_models(
                case,
                run.runtime.cache,
                run.runtime.device,
                lambda label: run.runtime.progress(f"bam {case.id} {label}"),
                lambda key, measure: run.results.reused(SUITE, key, measure),
            ),
        )


def judge_premise(run: RunView, suite: BamSuite, case: BamCase, node: pytest.Item) -> None:
    """The relative-importance test: the models' accuracies, CF drops and training
    times recorded; the premise holds or the test fails naming why."""
    models = suite.models(run, case)
    for key, value in models.accuracy.items():
        model, version = key.split("/")
        run.judge.record(node, _record(case, MODEL_LEVEL, "accuracy", value, role=model, version=version))
    for k, drop in models.cf_drop.items():
        run.judge.record(node, _record(case, MODEL_LEVEL, "cf_drop", drop, k=k))
    for role, seconds in models.train_seconds.items():
        run.judge.record(node, _record(case, MODEL_LEVEL, "train_seconds", seconds, role=role))
    violations = suite.premise(run, models)
    run.judge.record(node, _record(case, MODEL_LEVEL, "premise_holds", float(not violations)))
    if violations:
        pytest.fail(f"BAM premise does not hold on {case.id}: " + "; ".join(violations), pytrace=False)
