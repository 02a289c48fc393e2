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
    """The README's "after" column is the committed own-merit mutation table's headline."""
    table = (ROOT / "benchmarks" / "mutations" / "results-own-merit.md").read_text()
    found = re.search(
        r"Harmful mutants caught: (\d+) of (\d+) by the bars alone, (\d+) of \d+ with the baseline, "
        r"(\d+) of \d+ by the drift check\. Benign mutants failing on a score: (\d+) of (\d+)",
        table,
    )
    assert found, "no headline in results-own-merit.md"
    bars, harmful, baseline, drift, benign, benigns = found.groups()
    readme = (ROOT / "README.md").read_text()
    for what, value in (
        (f"{harmful} harmful, by the bars alone", bars),
        (f"{harmful} harmful, with the baseline", baseline),
        (f"{harmful} harmful, by the drift check", drift),
    ):
        assert re.search(rf"\| {what} \| [^|]+ \| {value} of {harmful} \|", readme), what
    assert re.search(rf"\| benign, failing on a score[^|]*\| [^|]+ \| {benign} of {benigns} \|", readme)
