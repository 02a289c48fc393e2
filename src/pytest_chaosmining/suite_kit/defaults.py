"""What most suites do the same way (:class:`SuiteDefaults`): the one
parametrisation, and the report section and figures of the folder's ``report`` module."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from pytest_chaosmining.reports.figures import drawn
from pytest_chaosmining.suite_kit.parametrize import parametrize_cases
from pytest_chaosmining.suite_kit.seam import case_record

if TYPE_CHECKING:
    import pandas as pd
    import pytest

    from pytest_chaosmining.core.records import Record
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import Case, RecordedCase, Recorder


class SuiteDefaults:
    """What most suites do the same way: the one parametrisation, and the report
    section and figures of the folder's ``report`` module."""

    report: ModuleType  # the suite's report module (``sections``, ``FIGURES``)
    #: ``module:Class`` of the suite binding this spec to its heavy half (None: the spec is its own)
    binding: str | None = None
    #: whether its figures are drawn from the run's trained models (the report is then handed its suite)
    figures_need_models: bool = False

    name: str
    case_arg: str | None
    #: the scores an explainer test records beside its checks (none unless a suite says so)
    recorded: tuple[str, ...] = ()
    #: a model suite's explainers are also checked on the module-pattern networks (images: vision)
    module_patterns: bool = False

    def plan(self, run: RunView) -> Sequence[Case]:
        """The cases of this run (each suite plans its own)."""
        raise NotImplementedError

    def sweeps(self, tier: str) -> tuple[str, ...]:
        """None: a suite sweeps nothing unless it says so."""
        return ()

    def uncalibrated(self, run: RunView, case: Case) -> str | None:
        """Why ``case``'s bars were not calibrated for it, making its tests report-only
        (None: they were; a suite whose cases all lie in its calibrated condition)."""
        return None

    def parametrize(self, metafunc: pytest.Metafunc, run: RunView | None) -> None:
        parametrize_cases(metafunc, run, self)

    def records(self, case: RecordedCase, explainer: str) -> Recorder:
        """Records of ``case`` in this suite: its model, seed and reported fields."""
        return functools.partial(case_record, self.name, case, explainer)

    def sections(self, frame: pd.DataFrame) -> list[str]:
        sections: Callable[[pd.DataFrame], list[str]] = self.report.sections
        return sections(frame)

    def ranked(self, records: Sequence[Record]) -> list[Record]:
        """Every record: a suite without sweeps ranks by all of them."""
        return list(records)

    def figures(self, records: list[Record], out_dir: Path, run: RunView | None, every: bool) -> list[Path]:
        """The report module's ``FIGURES`` (summaries of a run, none a failure needs) under ``every``."""
        return drawn(records, out_dir, self.report.FIGURES) if every else []
