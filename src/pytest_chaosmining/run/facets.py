"""The run as the suites see it, in four faces besides the judge: what runs
(:class:`RunPlan`), the explainers judged (:class:`JudgedExplainers`), where the
work runs and is kept (:class:`~pytest_chaosmining.run.runtime.Runtime`, the heavy
one, in a module of its own), and the results reused
(:class:`~pytest_chaosmining.run.result_reuse.ResultReuse`, as it is).

Each face is a thin view over the session's collaborators: it owns no state of
its own, so the plugin side and the suites see the same run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from pytest_chaosmining.run.case_selection import CaseSelection
from pytest_chaosmining.run.roster import ExplainerRoster
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer

C = TypeVar("C")


class RunPlan:
    """What the run covers: its settings, tier and data, the selected cases, the training modes."""

    def __init__(self, settings: Settings, selection: CaseSelection):
        self.settings = settings
        self._selection = selection

    @property
    def tier(self) -> str:
        """The run's tier name."""
        return self.settings.tier

    @property
    def data_dir(self) -> str | None:
        """``--chaosmining-data`` as a string (None: the embedded data)."""
        return str(self.settings.data) if self.settings.data else None

    def cases(self, suite: str, cases: Sequence[C]) -> list[C]:
        """Those of ``cases`` with a selected test (all of them before collection ends)."""
        return self._selection.cases(suite, cases)

    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode (``--chaosmining-training``; None: standard)."""
        return [
            dataclasses.replace(case, guide=guide)  # type: ignore[type-var]
            for guide in self.settings.guides()
            for case in cases
        ]


class JudgedExplainers(Mapping[str, "Explainer"]):
    """The explainers the run judges, by name (a mapping), and which of them run where."""

    def __init__(self, roster: ExplainerRoster, selection: CaseSelection):
        self._roster = roster
        self._selection = selection

    def __getitem__(self, name: str) -> Explainer:
        return self._roster.selected[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._roster.selected)

    def __len__(self) -> int:
        return len(self._roster.selected)

    @property
    def registered(self) -> dict[str, Explainer]:
        """Every registered explainer, judged in this run or not (the built-ins included)."""
        return self._roster.registered

    def in_suite(self, suite: str) -> list[str]:
        """The names of those ``suite`` runs."""
        return self._roster.explainers_in(suite)

    def in_case(self, suite: str, case_id: str) -> list[str]:
        """The names of those with a selected test on ``suite``'s case ``case_id``."""
        return self._selection.explainers(suite, case_id)
