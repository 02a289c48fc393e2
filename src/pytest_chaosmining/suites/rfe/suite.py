"""The RFEwNA suite: feature selection by recursive elimination, scored against
the known informative features (ChaosMining §4, A.5).

Each :class:`RFECase` is one dataset × seed.  Every registered explainer
drives :class:`~pytest_chaosmining.suites.rfe.rfewna.RFEwNA`; scikit-learn's ``RFE`` with
statistical estimators runs beside it at the same step (50% of the remaining
features per round).  Scores:

- ``fprec``: |selected ∩ informative| / k with k = the number of informative
  features (where they are known);
- the test score of the final model: R², MAE and UScore (regression) or
  accuracy (classification).  *Uni-module*: the selecting estimator predicts;
  *bi-module*: a network trained on a statistical method's selection predicts.
- ``val_score`` per round (``n_remaining``): the curve of ChaosMining Figure 6.

RFEwNA runs of the built-in explainers and the statistical runs are cached like
trained models; runs of user explainers always run (their code is not part of
any key).  A case's built-in runs go side by side, round by round, and all of a
case's runs share its round networks (:mod:`pytest_chaosmining.suites.rfe.rounds`).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any

import pytest

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.explainers.context import TABULAR_CLASSIFICATION, TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.parametrize import parametrize_cases, sharded
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, Recorder, ScoreCheck, Scored
from pytest_chaosmining.suites.rfe import report
from pytest_chaosmining.suites.rfe.spec import (
    LINEAR,
    STATISTICAL,
    SUITE,
    RFECase,
    SelectionResult,
)
from pytest_chaosmining.suites.rfe.tiers import RFE_TIERS
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suites.rfe import data as rfe_data
    from pytest_chaosmining.suites.rfe import evaluation, rounds
else:  # the heavy halves (torch, scikit-learn), loaded on first use
    evaluation = lazy_module("pytest_chaosmining.suites.rfe.evaluation")
    rounds = lazy_module("pytest_chaosmining.suites.rfe.rounds")
    rfe_data = lazy_module("pytest_chaosmining.suites.rfe.data")


def plan_cases(tier: Any, seeds: Seeds | None = None, data_dir: str | None = None) -> list[RFECase]:
    """The tier's regression formulas, the generated classification set and,
    when its CSV is on disk, Santander."""
    n_seeds = seed_range(tier.seeds, seeds)
    cases = []
    for seed in n_seeds:
        for formula in tier.formulas:
            cases.append(
                RFECase(
                    f"f{formula:02d}",
                    "regression",
                    tier.n_samples,
                    tier.noise_features,
                    0,
                    tier.epochs,
                    tier.lr,
                    None,
                    tier.step,
                    seed,
                )
            )
        cases.append(
            RFECase(
                "generated",
                "classification",
                tier.clf_samples,
                tier.clf_features,
                tier.clf_informative,
                tier.clf_epochs,
                tier.lr,
                tier.clf_batch_size,
                tier.step,
                seed,
            )
        )
        if data_dir is not None:
            try:
                rfe_data.find_santander(data_dir)
            except FileNotFoundError:
                continue
            cases.append(
                RFECase(
                    "santander",
                    "classification",
                    tier.santander_rows,
                    369,
                    0,
                    tier.clf_epochs,
                    tier.lr,
                    tier.clf_batch_size,
                    tier.step,
                    seed,
                    data_dir,
                    tier.santander_select,
                )
            )
    return cases


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


def _dataset_key(fields: CaseFields) -> str:
    return str(fields["dataset"])


def _fprec_step(fields: CaseFields) -> float:
    return 1 / int(str(fields["k"]))


class RfeSuite(SuiteDefaults):
    """RFEwNA (recursive feature elimination with neural attribution): FPrec of the
    features each explainer keeps, beside scikit-learn's RFE with statistical estimators."""

    report = report
    name = SUITE
    shapes = (TABULAR_REGRESSION, TABULAR_CLASSIFICATION)
    case_arg = "rfe_case"
    score_metric = "fprec"
    #: FPrec of k selected features moves in steps of 1/k and is skewed against a floor: judged by order statistics
    metrics = (
        *judged("fprec", bar_key=_dataset_key),
        *judged("fprec_over_linear", "accuracy"),
        *reported("uscore", "r2", "bi_accuracy", "bi_uscore", "bi_r2", "val_score"),
        *reported("mae", "bi_mae", higher_is_better=False),
    )
    calibration = Calibration(judged=calibrated(metrics), steps={"fprec": _fprec_step})
    checks = (
        ScoreCheck("fprec", "RFEwNA-{what}", when_present=True),
        ScoreCheck("fprec_over_linear", "RFEwNA-{what} (linear RFE: FPrec {linear_fprec:.3f})", when_present=True),
        # where the truth is unknown (Santander): the selection's test accuracy against the quality gate
        ScoreCheck("accuracy", "RFEwNA-{what}", when_present=True, value="accuracy_without_truth", bar="quality_gate"),
    )

    #: the dataset (``f10``, ``generated``): a case's bar key, from its record fields
    bar_key = staticmethod(_dataset_key)

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

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(RFE_TIERS[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[RFECase]:
        return plan_cases(RFE_TIERS[run.plan.tier], run.plan.settings.seeds, run.plan.data_dir)

    def parametrize(self, metafunc: pytest.Metafunc, run: RunView | None) -> None:
        """Explainer-driven tests over cases × explainers; ``method`` tests over cases × statistical estimators."""
        if "method" not in metafunc.fixturenames:
            parametrize_cases(metafunc, run, self)
            return

        cases = sharded(run, self.name, self.plan(run)) if run is not None else []
        metafunc.parametrize(
            (self.case_arg, "method"),
            [pytest.param(case, f"RFE-{m}", id=f"{case.id}-RFE-{m}") for case in cases for m in STATISTICAL[case.task]],
        )

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
