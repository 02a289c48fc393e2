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
    (harmful caught by the bars, with the baseline and by a score's drop; the held-out
    benign changes' whole runs failing against their baselines, with the exact bound)."""
    table = (ROOT / "benchmarks" / "mutations" / "benign.md").read_text()
    total = re.search(
        r"\| \*\*(\d+) harmful \(not partial\)\*\* \| \| \*\*(\d+) of \d+\*\* \| \*\*(\d+) of \d+\*\* \| "
        r"\*\*(\d+) of \d+\*\* \|",
        table,
    )
    assert total, "no harmful total in benign.md"
    n, bars, with_baseline, by_score = total.groups()
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"\| harmful, caught by the bars alone \| {bars} of {n} \|", readme)
    assert re.search(rf"\| harmful, caught with the baseline \| {with_baseline} of {n} \|", readme)
    assert re.search(rf"\| harmful, caught by a score's drop \| {by_score} of {n} \|", readme)
    held = re.search(r"\| held-out, whole runs \| (\d+) \| (\d+) \| ([0-9.]+) \|", table)
    assert held, "no held-out row in benign.md"
    changes, failed, bound = held.groups()
    percent = f"{100 * float(bound):.1f} %"
    assert re.search(
        rf"\| benign held-out changes, whole runs failing against their baseline \| {failed} of {changes} "
        rf"\(exact 95 % bound {re.escape(percent)}\) \|",
        readme,
    )
