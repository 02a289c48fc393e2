"""The symbolic-function suite: its cases, its models and its measurements.

A :class:`SymbolicCase` is one trained model (formula × condition × model
config × seed).  The pytest glue parametrises over cases × explainers and
calls its models (:mod:`~pytest_chaosmining.testbeds.formulas.run_models`) and its
:mod:`~pytest_chaosmining.suites.symbolic.evaluation` (torch: loaded on first use).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, measured_against_baseline, own_merit, reported
from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import uncalibrated_training
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suite_kit.verdict import model_scored
from pytest_chaosmining.suites.symbolic import report
from pytest_chaosmining.suites.symbolic.figure4 import in_default_condition
from pytest_chaosmining.testbeds.formulas.cases import (
    SUITE,
    SymbolicCase,
    TrainedSymbolicModel,
    plan_cases,
    swept_fields,
)
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

if TYPE_CHECKING:
    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe
    from pytest_chaosmining.suite_kit.seam import Case, DomainPick
    from pytest_chaosmining.suites.symbolic import evaluation
    from pytest_chaosmining.testbeds.formulas import run_models
else:  # the heavy halves, loaded on first use
    evaluation = lazy_module("pytest_chaosmining.suites.symbolic.evaluation")
    run_models = lazy_module("pytest_chaosmining.testbeds.formulas.run_models")


def _formula_key(fields: CaseFields) -> str:
    return f"f{int(str(fields['formula'])):02d}"


class SymbolicSuite(SuiteDefaults):
    """Symbolic functions (ChaosMining §3.1): FPrec of each explainer on MLPs
    trained per formula × noise condition × seed."""

    report = report
    name = SUITE
    shapes = (TABULAR_REGRESSION,)
    case_arg = "symbolic_case"
    score_metric = "fprec"
    metrics = (
        *judged("fprec", "training_gain", key=_formula_key),
        *judged("uscore"),
        *judged("sign_agreement"),
        *measured_against_baseline("map_agreement", "sample_agreement"),
        *own_merit("completeness", "truth_sign", "batch_consistency", "equivalence"),
        *reported("attr_uscore", "untrained_fprec", "fingerprint", "self_agreement"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("fprec"),
        ScoreCheck(
            "training_gain",
            "{what} (FPrec on the untrained model {untrained_fprec:.3f}: does the explainer depend on the model?)",
        ),
        ScoreCheck(
            "sign_agreement",
            "{what} (it declares completeness: do its attributions sum with the sign of f(x) - f(0)? "
            "0.5 is a map that ignores the sample, 0 a flipped sign)",
            when_present=True,
        ),
        ScoreCheck(
            "truth_sign",
            "{what} (its map is signed: does a feature that raises the output get a positive attribution, "
            "one that lowers it a negative one? 0.5 is a map of one sign, 0 a flipped sign)",
            when_present=True,
        ),
        ScoreCheck(
            "completeness",
            "{what} (it declares completeness: 1 - mean |sum of attributions - (f(x) - f(0))| / mean "
            "|f(x) - f(0)|; a rescaled or flipped map scores 0 or below)",
            when_present=True,
        ),
    )
    recorded = ("attr_uscore", "untrained_fprec")
    model_records = ("train_seconds",)
    #: for the saliency suite: prediction quality and the scores compared (the first is judged)
    quality_metric = "uscore"
    #: its explainer test scores on the model suites' path
    scored = model_scored
    compared = ("fprec",)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(SYMBOLIC[tier].seeds, seeds)

    def ranked(self, records: Sequence[Record]) -> list[Record]:
        """The records of the default condition (a sweep's others are report-only)."""
        return in_default_condition(records)

    def sweeps(self, tier: str) -> tuple[str, ...]:
        """The tier's one-factor sweeps (Figure 4)."""
        return tuple(SYMBOLIC[tier].sweeps)

    def plan(self, run: RunView) -> list[SymbolicCase]:
        return run_models.planned_cases(run)

    def model(self, run: RunView, case: SymbolicCase) -> TrainedSymbolicModel:
        """The trained model of ``case`` (shared with the cost and saliency suites)."""
        return run_models.run_model(run, case)

    def train_together(self, run: RunView, cases: Sequence[SymbolicCase]) -> None:
        """With ensembles on (``--chaosmining-ensemble``), train those of ``cases``
        not yet cached as batched ensembles, one per shape and training mode."""
        run_models.train_together(run, cases)

    def quality(self, model: TrainedSymbolicModel) -> float:
        """Prediction quality: UScore of the test predictions."""
        return float(model.uscore)

    def chance(self, model: TrainedSymbolicModel) -> float:
        """FPrec of a ranking that knows nothing: k / features."""
        return len(model.data.truth) / model.data.n_features

    def bar_key(self, fields: CaseFields) -> str:
        """The formula (``f03``)."""
        return _formula_key(fields)

    def uncalibrated(self, run: RunView, case: Case) -> str | None:
        """A sweep's condition (the bars were calibrated in the tier's default one) or
        a training mode other than standard; with no noise feature, FPrec is 1 on any map."""
        assert isinstance(case, SymbolicCase)
        found = swept_fields(SYMBOLIC[run.plan.tier], case) + uncalibrated_training(case.guide)
        if case.noise_features == 0:
            found.append("every feature predictive: FPrec is 1 on any map, the untrained model's too")
        return "; ".join(found) or None

    def unlearned_keys(self, case: SymbolicCase) -> tuple[str, ...]:
        """None: every symbolic model is expected to learn."""
        return ()

    def where(self, case: SymbolicCase) -> str:
        """The threshold key of ``case``: its formula (``f02``)."""
        return f"f{case.formula:02d}"

    def score(self, run: RunView, model: TrainedSymbolicModel, explainer: Explainer) -> dict[str, Any]:
        """:func:`.evaluation.evaluate` on the session's device."""

        return run.results.evaluated(
            SUITE,
            {"model": model.case.training_config(run.runtime.device.type), "weights": weights_digest(model.model)},
            explainer,
            lambda: evaluation.evaluate(model, explainer, run.runtime.device),
            (Cost,),
        )

    def probe(self, trained: TrainedSymbolicModel, samples: int) -> Probe:
        """The first ``samples`` test rows of ``trained`` (:func:`.evaluation.probe`)."""
        return evaluation.probe(trained, samples)

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score: none."""
        return ()

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[SymbolicCase]:
        """Seed-0 standard cases of the tier's default condition for the picked formulas."""
        return [c for c in plan_cases(SYMBOLIC[tier], 1) if self.where(c) in pick.keys]
