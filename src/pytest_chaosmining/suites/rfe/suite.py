"""The RFEwNA suite bound to its heavy halves (:mod:`.evaluation`, :mod:`.rounds`,
:mod:`.data`: torch, scikit-learn): its cases, selections and their records."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import pytest

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.suite_kit.seam import Recorder, Scored
from pytest_chaosmining.suites.rfe import evaluation, rounds
from pytest_chaosmining.suites.rfe.spec import (
    LINEAR,
    SUITE,
    RFECase,
    RfeSpec,
    SelectionResult,
)
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run_view import RunView


def selection_fields(case: RFECase) -> dict[str, Any]:
    """A selection's record fields on ``case``: its fields, the selection size k and the feature count."""
    k, total = _selection_size(case)
    return {**case.case_fields(), "k": k, "total_features": total}


def _selection_size(case: RFECase) -> tuple[int, int]:
    """k and the feature count of ``case``'s data."""
    data = evaluation.load(case)
    return evaluation.n_select(case, data), int(data.n_features)


def _selection_record(
    case: RFECase,
    fields: dict[str, Any],
    method: str,
    explainer: str,
    metric: str,
    value: float,
    **extra: str | int | float,
) -> Record:
    return Record(SUITE, method, explainer, case.seed, metric, float(value), {**fields, **extra})


def selection_records(case: RFECase, method: str, explainer: str, result: SelectionResult) -> list[Record]:
    """What a selection records: its test scores, its fitting time and its validation curve."""
    record = functools.partial(_selection_record, case, selection_fields(case), method, explainer)
    made = [record(m, v) for m, v in result.scores.items()]
    made.append(record("fit_seconds", result.seconds))
    return made + [record("val_score", score, n_remaining=n_remaining) for n_remaining, score in result.curve]


class RfeSuite(RfeSpec):
    """The RFEwNA suite as a run uses it: its spec, the selections, their round networks."""

    def records(self, case: RFECase, explainer: str) -> Recorder:  # type: ignore[override]
        """RFEwNA's records of ``case``: its fields with the selection size and the feature count."""
        return functools.partial(_selection_record, case, selection_fields(case), "RFEwNA", explainer)

    def scored(
        self,
        run: RunView,
        case: RFECase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """RFEwNA driven by the explainer (timed; the case's built-ins run side by side
        first, sharing round networks): FPrec and its margin over linear RFE, or the
        test accuracy where the truth is unknown; the selection's records."""
        self.run_side_by_side(run, case)  # the case's built-ins, once: shared round networks
        with run.runtime.timer(benchmark, SUITE, case.id, explainer), explainer_failures(node.config):
            result = self.selection(run, case, explainer)
        made = selection_records(case, "RFEwNA", explainer, result)
        if result.fprec is None:
            return Scored({"accuracy_without_truth": result.scores["accuracy"]}, made)
        linear = self.selection(run, case, f"RFE-{LINEAR[case.task]}")
        assert linear.fprec is not None  # the same data: the truth is known to both
        values = {"fprec": result.fprec, "fprec_over_linear": result.fprec - linear.fprec, "linear_fprec": linear.fprec}
        return Scored(values, made)

    def selection(self, run: RunView, case: RFECase, method: str) -> SelectionResult:
        """The selection of ``method`` (a registered explainer driving RFEwNA, or
        ``RFE-<estimator>``) on ``case``, computed at most once per process."""
        if method.startswith("RFE-"):
            return run.runtime.memo(
                ("rfe", case, method),
                lambda: evaluation.run_statistical(case, method[4:], run.runtime.device, run.runtime.cache),
            )
        return run.runtime.memo(
            ("rfe", case, method),
            lambda: evaluation.run_rfewna(
                case,
                run.explainers[method],
                run.runtime.cache,
                run.runtime.device,
                run.results.reuses_builtin_results,
                self.networks(run, case),
            ),
        )

    def networks(self, run: RunView, case: RFECase) -> rounds.RoundNetworks | None:
        """The round networks the case's RFEwNA runs share (None where each explainer
        is timed on its own: with pytest-benchmark results asked for)."""
        if run.results.fresh_timings:
            return None
        return run.runtime.memo(
            ("rfe-networks", case),
            lambda: rounds.RoundNetworks(ensemble=run.runtime.ensemble, store=run.runtime.cache),
        )

    def run_side_by_side(self, run: RunView, case: RFECase) -> None:
        """Before the case's first RFEwNA test: the run's selected built-in explainers
        on ``case`` run side by side (once per process; see :func:`.evaluation.run_side_by_side`)."""
        networks = self.networks(run, case)
        if networks is None or not run.results.reuses_builtin_results:
            return
        names = run.explainers.in_case(SUITE, case.id)
        explainers = [run.explainers[name] for name in names]
        run.runtime.memo(
            ("rfe-side-by-side", case),
            lambda: evaluation.run_side_by_side(case, explainers, run.runtime.cache, run.runtime.device, networks),
        )


def judge_statistical(run: RunView, suite: RfeSuite, case: RFECase, method: str, node: pytest.Item) -> None:
    """A statistical method's selection: its records; exactly k features and finite test scores."""
    result = suite.selection(run, case, method)
    for made in selection_records(case, method, MODEL_LEVEL, result):
        run.judge.record(node, made)
    fields = selection_fields(case)
    if result.fprec is not None:
        run.judge.record(node, _selection_record(case, fields, method, MODEL_LEVEL, "fprec", result.fprec))
    k = fields["k"]
    assert result.support.sum() == k, f"{method} kept {result.support.sum()} features, expected {k}"
    assert all(math.isfinite(v) for v in result.scores.values()), result.scores
