"""The symbolic suite bound to its heavy half: the formulas testbed's models and scoring."""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import model_scored
from pytest_chaosmining.suites.symbolic.spec import SymbolicSpec
from pytest_chaosmining.testbeds.formulas.bound import FormulaModels


class SymbolicSuite(FormulaModels, SymbolicSpec):
    """The symbolic suite as a run uses it: its spec, its testbed's models and scoring."""

    #: its explainer test scores on the model suites' path
    scored = model_scored
