"""What a suite gives the report: the seam the report writers read suites through.

The report writers never import the suites: the plugin (or a tool) hands them
the registered suites as :class:`ReportedSuite` objects."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from pytest_chaosmining.core.records import Record
    from pytest_chaosmining.core.tiers import Seeds
    from pytest_chaosmining.run_view import RunView


class ReportedSuite(Protocol):
    """A suite as the report sees it: its name, headline metric, seeds, sections and figures."""

    @property
    def name(self) -> str:
        """Registry name, and ``Record.suite`` of the suite's records."""
        ...

    @property
    def score_metric(self) -> str | None:
        """The judged metric shown in the terminal summary (None: none)."""
        ...

    def seeds(self, tier: str, seeds: Seeds | None) -> range | None:
        """The seeds a run at ``tier`` uses (``--chaosmining-seeds`` as ``seeds``); None: not seeded."""
        ...

    def sections(self, frame: pd.DataFrame) -> list[str]:
        """The suite's sections of report.md, from the run's records as a frame."""
        ...

    def ranked(self, records: Sequence[Record]) -> list[Record]:
        """Those of the suite's ``records`` its leaderboard cell ranks by (all but a sweep's
        other conditions: the headline compares like with like)."""
        ...

    def figures(self, records: list[Record], out_dir: Path, run: RunView | None, every: bool) -> list[Path]:
        """Write the suite's figures into ``out_dir``; the paths written (``run`` None: a
        report rebuilt from results files, without the run's data).  ``every`` False: only
        those a failure needs (an example figure of the samples a failed test chose)."""
        ...
