"""One report folder from a run's records: results.json and results.csv, the
suites' figures, report.md (figures embedded) and report.html.

The plugin renders it at the end of a run; :mod:`pytest_chaosmining.tools.rebuild`
renders it again from results files (CI shards merged, or a committed run)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.core.storage.atomic import atomic_write_text
from pytest_chaosmining.reports.figures import EVERY
from pytest_chaosmining.reports.html import build_html
from pytest_chaosmining.reports.leaderboard import build_leaderboard
from pytest_chaosmining.reports.markdown import build_markdown, embed_figures, write_reports
from pytest_chaosmining.reports.reference import shipped_reference
from pytest_chaosmining.reports.report_folder import record_written
from pytest_chaosmining.reports.run_figures import run_figures

if TYPE_CHECKING:
    from pytest_chaosmining.reports.reported_suite import ReportedSuite
    from pytest_chaosmining.reports.run_results import RunResults
    from pytest_chaosmining.run_view import RunView


def figures(
    records: list[Record], out_dir: Path, run: RunView | None, suites: Sequence[ReportedSuite], every: bool
) -> list[str]:
    """The figures of ``suites`` (``every`` False: only those a failure needs; without a
    run, those drawn from its data are left out); a failure costs that suite's figures,
    not the report."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for suite in suites:
        try:
            written += [str(path) for path in suite.figures(records, out_dir, run, every)]
        except Exception as exc:  # noqa: BLE001 - the report must survive
            warnings.warn(
                f"chaosmining: {suite.name} figures not drawn: {type(exc).__name__}: {exc}",
                stacklevel=2,
                category=ChaosminingWarning,
            )
    return written


def render(
    out_dir: Path,
    results: RunResults,
    run: RunView | None,
    suites: Sequence[ReportedSuite],
    started: float | None = None,
    every_figure: bool = False,
) -> tuple[str, list[str]]:
    """Write the whole report folder; report.md's text and the paths written.  ``started``
    (a run's start, :func:`time.time`): its duration, the figures included, goes into the
    run's metadata before the reports that state it are written.  ``every_figure`` False
    (``--chaosmining-figures needed``): only the figures a failure needs, report.md naming
    the option that draws the others where it mentions them."""
    out_dir, shown = Path(out_dir), results.human_facing
    out_dir.mkdir(parents=True, exist_ok=True)
    board = build_leaderboard(shown.records, results.outcomes, suites).with_reference(shipped_reference(results.meta))
    drawn = run_figures(shown.records, board, out_dir, every_figure)
    drawn += figures(results.records, out_dir, run, suites, every_figure)  # maps: failing samples
    if started is not None:
        results.meta["duration_s"] = round(time.time() - started, 1)
    left_out = None if every_figure else f"not drawn: `--chaosmining-figures {EVERY}` draws it"
    markdown = embed_figures(build_markdown(shown, suites, board), [Path(f).name for f in drawn], left_out)
    written = write_reports(out_dir, results, markdown)
    html = out_dir / "report.html"
    atomic_write_text(html, build_html(shown, [Path(f) for f in drawn], board))
    everything = written + drawn + [str(html)]
    record_written(out_dir, everything)
    return markdown, everything
