"""The numbers the README and the docs state are the committed reports' numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "reports" / "smoke" / "report.md"
LEADERBOARD_HEADER = "| explainer | symbolic fprec |"


def _table(text: str, header: str) -> list[str]:
    """The rows of the first Markdown table whose header starts with ``header`` (header included)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    assert start is not None, f"no table starting {header!r}"
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


@pytest.mark.parametrize("document", ["README.md", "docs/explainers.md"])
def test_the_leaderboard_shown_is_the_default_runs(document):
    """The leaderboard a document shows is, row for row, the one of reports/smoke/report.md."""
    shown = _table((ROOT / document).read_text(), LEADERBOARD_HEADER)
    assert shown == _table(REPORT.read_text(), LEADERBOARD_HEADER)


def test_the_readmes_mutation_figures_are_the_committed_tables():
    """The README's "What the gate catches" is the committed benign.md, number for number
    (harmful caught, benign failing against the baseline per half, before and after)."""
    table = (ROOT / "benchmarks" / "mutations" / "benign.md").read_text()
    total = re.search(
        r"\| \*\*(\d+) harmful\*\* \| \| \*\*(\d+) of \d+\*\* \| \*\*(\d+) of \d+\*\* \| \*\*(\d+) of", table
    )
    assert total, "no harmful total in benign.md"
    n, bars, before, after = total.groups()
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"\| harmful, caught by the bars alone \| {bars} of {n} \| {bars} of {n} \|", readme)
    assert re.search(rf"\| harmful, caught with the baseline \| {before} of {n} \| {after} of {n} \|", readme)
    for half in ("calibration", "held-out"):
        row = re.search(rf"\| {half} \| (\d+) \| (\d+) \| (\d+) \|", table)
        assert row, half
        changes, old, new = row.groups()
        line = rf"\| benign, failing against the baseline: {half} half \| {old} of {changes} \| {new} of {changes}"
        assert re.search(line, readme), half
