"""The symbolic-function suite's spec (light): its checks, bars, sweeps and report.

A :class:`SymbolicCase` is one trained model (formula × condition × model
config × seed).  The pytest glue parametrises over cases × explainers; the models
and their scoring are the formulas testbed's (declared by
:class:`~pytest_chaosmining.testbeds.formulas.testbed.FormulaTestbed`, bound by
:mod:`pytest_chaosmining.testbeds.formulas.bound`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.catalog import calibrated, drift_metrics, judged, own_merit, reported
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import uncalibrated_training
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck, training_gain_check
from pytest_chaosmining.suites.symbolic import report
from pytest_chaosmining.suites.symbolic.figure4 import in_default_condition
from pytest_chaosmining.testbeds.formulas.cases import SUITE, SymbolicCase, planned_cases, swept_fields
from pytest_chaosmining.testbeds.formulas.testbed import FormulaTestbed
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.verdict.rotation import ROTATION

if TYPE_CHECKING:
    from pytest_chaosmining.core.records import Record
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import Case


def _formula_key(fields: CaseFields) -> str:
    return f"f{int(str(fields['formula'])):02d}"


class SymbolicSpec(FormulaTestbed, SuiteDefaults):
    """Symbolic functions (ChaosMining §3.1): FPrec of each explainer on MLPs
    trained per formula × noise condition × seed."""

    report = report
    binding = "pytest_chaosmining.suites.symbolic.suite:SymbolicSuite"
    name = SUITE
    shapes = (TABULAR_REGRESSION,)
    case_arg = "symbolic_case"
    score_metric = "fprec"
    metrics = (
        *judged("fprec", "training_gain", bar_key=_formula_key),
        *judged("uscore"),
        *judged("sign_agreement"),
        *drift_metrics(),
        *own_merit("completeness", "truth_sign", "batch_consistency", "equivalence"),
        *reported(ROTATION),
        *reported("attr_uscore", "untrained_fprec"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("fprec"),
        training_gain_check("FPrec", "untrained_fprec"),
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

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(SYMBOLIC[tier].seeds, seeds)

    def ranked(self, records: Sequence[Record]) -> list[Record]:
        """The records of the default condition (a sweep's others are report-only)."""
        return in_default_condition(records)

    def plan(self, run: RunView) -> list[SymbolicCase]:
        return planned_cases(run)

    def sweeps(self, tier: str) -> tuple[str, ...]:
        """The tier's one-factor sweeps (Figure 4)."""
        return tuple(SYMBOLIC[tier].sweeps)

    #: the formula (``f03``): a case's bar key, from its record fields
    bar_key = staticmethod(_formula_key)

    def uncalibrated(self, run: RunView, case: Case) -> str | None:
        """A sweep's condition (the bars were calibrated in the tier's default one) or
        a training mode other than standard; with no noise feature, FPrec is 1 on any map."""
        assert isinstance(case, SymbolicCase)
        found = swept_fields(SYMBOLIC[run.plan.tier], case) + uncalibrated_training(case.guide)
        if case.noise_features == 0:
            found.append("every feature predictive: FPrec is 1 on any map, the untrained model's too")
        return "; ".join(found) or None
