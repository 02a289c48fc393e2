"""What every report of a run is made from: its records, its metadata, its
outcome counts and its failures (one object for the writers of results.json,
report.md, report.html and the GitHub step summary)."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any

from pytest_chaosmining.core.records import Record, human_facing
from pytest_chaosmining.reports.run_counts import RunCounts


@dataclass(frozen=True)
class RunResults:
    """One run's results as the reports show them.

    ``outcomes`` counts tests by ``"suite|explainer|outcome"``; ``failures`` holds
    one dict per failed test (``nodeid``, ``suite``, ``explainer``, ``message``,
    ``kind``); ``counts``: the run's one count, which every report states."""

    records: list[Record]
    meta: dict[str, Any]
    outcomes: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    counts: RunCounts = field(default_factory=RunCounts)

    @functools.cached_property
    def human_facing(self) -> RunResults:
        """The same run without the maps' fingerprints (they go to results.json only),
        made once however many writers show it."""
        return dataclasses.replace(self, records=human_facing(self.records))
