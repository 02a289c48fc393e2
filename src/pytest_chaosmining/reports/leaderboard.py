"""The leaderboard: explainers × suites, each cell the headline score, its spread
over seeds and the verdict of the explainer's tests there.  One source for the
Markdown report, the HTML report and the GitHub step summary."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers import CONTROL_NAME, PAPER_NAMES
from pytest_chaosmining.reports.reported_suite import ReportedSuite
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, ranked_records
from pytest_chaosmining.verdict.skips import NOT_APPLICABLE

#: the verdicts of a cell, worst first
FAIL, PASS, EXPECTED_FAIL, CONTROL_PASSED = "fail", "pass", "fails (control)", "PASSES (control)"
NOT_JUDGED, NOT_APPLICABLE_VERDICT, NOT_RUN = "not judged", "not applicable", "not run"


@dataclass(frozen=True)
class Cell:
    """One explainer in one suite: mean headline score, its range over seeds (None:
    one seed) and the verdict of its tests there."""

    score: float | None
    spread: tuple[float, float] | None
    verdict: str
    counts: Mapping[str, int]

    def text(self) -> str:
        """The score, its range over seeds, and the verdict in words (``0.912 [0.90, 0.93] pass``)."""
        score = "—" if self.score is None else f"{self.score:.3f}"
        spread = "" if self.spread is None else f" [{self.spread[0]:.2f}, {self.spread[1]:.2f}]"
        return f"{score}{spread} {self.verdict}"


@dataclass(frozen=True)
class Leaderboard:
    """The columns (suite, headline metric) and a row of cells per explainer; the rows
    named in ``reference`` are the built-ins' shipped results of version ``source``
    (:mod:`pytest_chaosmining.reports.reference`), not this run's."""

    columns: list[tuple[str, str]]
    rows: list[tuple[str, list[Cell]]]
    reference: frozenset[str] = frozenset()
    source: str = ""

    def explainer_label(self, name: str) -> str:
        """The explainer's name, marked where it is the random control, one of the
        paper's four or a shipped reference row."""
        if name in self.reference:
            return f"{name} (reference {self.source}, not run)"
        if name == CONTROL_NAME:
            return f"{name} (control)"
        return f"{name} (paper)" if name in PAPER_NAMES else name

    def with_reference(self, reference: Leaderboard | None) -> Leaderboard:
        """This run's rows, then ``reference``'s rows of explainers it did not run, in
        this run's columns (a column the reference lacks: not run), each verdict
        marked as the reference's."""
        if reference is None or not self.rows:
            return self
        ran = {name for name, _ in self.rows}
        missing = Cell(None, None, NOT_RUN, {})

        def shown(cell: Cell) -> Cell:
            return Cell(cell.score, cell.spread, f"reference: {cell.verdict}", {})

        added = []
        for name, cells in reference.rows:
            if name not in ran:
                by_column = dict(zip(reference.columns, cells))
                added.append((name, [shown(by_column[c]) if c in by_column else missing for c in self.columns]))
        if not added:
            return self
        return Leaderboard(self.columns, self.rows + added, frozenset(n for n, _ in added), reference.source)


def _verdict(counts: Counter[str], control: bool) -> str:
    """The verdict of an explainer's tests in one suite from their outcome counts."""
    if control:
        if counts["xpassed"]:
            return CONTROL_PASSED
        return EXPECTED_FAIL if counts["xfailed"] else NOT_JUDGED if sum(counts.values()) else NOT_RUN
    if counts["failed"]:
        return FAIL
    if counts["passed"]:
        return PASS
    if not sum(counts.values()):
        return NOT_RUN
    return NOT_APPLICABLE_VERDICT if counts[NOT_APPLICABLE] == sum(counts.values()) else NOT_JUDGED


def build_leaderboard(
    records: Sequence[Record], outcomes: Mapping[str, int], suites: Sequence[ReportedSuite]
) -> Leaderboard:
    """The leaderboard of a run: its records' headline scores and its tests' outcomes
    (``suite|explainer|outcome`` counts)."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for key, n in outcomes.items():
        suite, explainer, outcome = key.split("|")
        counts.setdefault((suite, explainer), Counter())[outcome] += n
    scores: dict[tuple[str, str], dict[int, list[float]]] = {}
    metric_of = {s.name: s.score_metric for s in suites if s.score_metric}
    for r in ranked_records(suites, records):
        if r.explainer != MODEL_LEVEL and metric_of.get(r.suite) == r.metric and math.isfinite(r.value):
            scores.setdefault((r.suite, r.explainer), {}).setdefault(r.seed, []).append(r.value)
    names = [s.name for s in suites]
    used = {suite for suite, _ in counts} | {suite for suite, _ in scores}
    # a suite without a headline score (cost) ranks nothing: its verdicts are in the scorecards
    columns = [(name, metric_of[name]) for name in names if name in used and name in metric_of]
    rows = []
    for explainer in explainer_order([e for _, e in counts] + [e for _, e in scores]):
        cells = []
        for suite, _ in columns:
            per_seed = scores.get((suite, explainer), {})
            values = [v for vs in per_seed.values() for v in vs]
            means = [statistics.fmean(vs) for vs in per_seed.values()]
            cells.append(
                Cell(
                    statistics.fmean(values) if values else None,
                    (min(means), max(means)) if len(means) > 1 else None,
                    _verdict(counts.get((suite, explainer), Counter()), explainer == CONTROL_NAME),
                    dict(counts.get((suite, explainer), Counter())),
                )
            )
        rows.append((explainer, cells))
    return Leaderboard(columns, rows)


def leaderboard_markdown(board: Leaderboard, figure: str = "") -> list[str]:
    """The leaderboard as a Markdown section (naming ``figure``, its picture, after the table)."""
    if not board.rows:
        return []

    heads = ["explainer"] + [f"{suite} {metric}".strip() for suite, metric in board.columns]
    rows = [[board.explainer_label(e)] + [cell.text() for cell in cells] for e, cells in board.rows]
    return (
        [
            "## Leaderboard",
            "",
            "Per suite: the explainer's mean headline score (higher is better) over conditions and seeds, "
            "its range over seeds in brackets where there are several, and the verdict of its tests there: "
            f"*{PASS}* (all judged tests passed), *{FAIL}* (at least one failed), *{NOT_JUDGED}* (recorded: "
            f"no calibrated bar, a report-only suite or a model below its gate), *{NOT_APPLICABLE_VERDICT}*, "
            f"*{NOT_RUN}*.  The random control must fail.",
            "",
        ]
        + markdown_table(heads, rows)
        + [""]
        + ([f"At a glance: `{figure}`.", ""] if figure else [])
    )
