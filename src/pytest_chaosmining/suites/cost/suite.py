"""The cost suite: time and peak memory of each explainer on one symbolic model
(ChaosMining Figure 5).  Its records feed the report's attribution-cost table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.suites import Calibration, SuiteDefaults, parametrize_cases
from pytest_chaosmining.suites.cost import report
from pytest_chaosmining.suites.symbolic.suite import SymbolicCase, SymbolicSuite, TrainedSymbolicModel, cost_case
from pytest_chaosmining.suites.symbolic.tiers import SYMBOLIC

if TYPE_CHECKING:
    import pandas as pd
    import pytest

    from pytest_chaosmining.core.results import Record
    from pytest_chaosmining.session import ChaosminingSession

SUITE = "cost"


class CostSuite(SuiteDefaults):
    """Times every explainer on the symbolic suite's formula-2 model; records, never judges."""

    report = report
    name = SUITE
    case_arg = None
    score_metric = None
    calibration = Calibration()

    def seeds(self, tier: str, seeds: Seeds | None) -> range | None:
        return None

    def plan(self, session: ChaosminingSession) -> list[SymbolicCase]:
        return [self.case(session)]

    def case(self, session: ChaosminingSession) -> SymbolicCase:
        """The symbolic model the explainers are timed on."""
        return cost_case(SYMBOLIC[session.tier])

    def model(self, session: ChaosminingSession) -> TrainedSymbolicModel:
        """The trained (cached) model of :meth:`case`."""
        return SymbolicSuite().model(session, self.case(session))
