"""The symbolic suite bound to its heavy half: the formulas testbed's models and scoring."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_chaosmining.suite_kit.judging import model_scored
from pytest_chaosmining.suites.symbolic.spec import SymbolicSpec
from pytest_chaosmining.testbeds.formulas import run_models
from pytest_chaosmining.testbeds.formulas.bound import FormulaModels
from pytest_chaosmining.testbeds.formulas.cases import SymbolicCase

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


class SymbolicSuite(FormulaModels, SymbolicSpec):
    """The symbolic suite as a run uses it: its spec, its testbed's models and scoring."""

    #: its explainer test scores on the model suites' path
    scored = model_scored

    def plan(self, run: RunView) -> list[SymbolicCase]:
        return run_models.planned_cases(run)
