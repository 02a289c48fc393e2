"""The run's failures as one Markdown table: report.md shows it whole, the GitHub step
summary and the annotate step the same rows capped, each reason safe in a table cell.
Imports nothing heavy (the annotate step uses it)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

#: the failures a step summary lists (the rest: in report.md)
SUMMARY_ROWS = 25
#: the characters of a reason a step summary shows
SUMMARY_REASON = 400


def cell(text: str, most: int | None = None) -> str:
    """``text`` safe in one Markdown table cell: on one line, ``|`` escaped, at most
    ``most`` characters (cut with an ellipsis)."""
    one = " ".join(str(text).split())
    if most is not None and len(one) > most:
        one = one[: most - 1].rstrip() + "…"
    return one.replace("\\", "\\\\").replace("|", "\\|")


def failure_table(
    failures: Sequence[Mapping[str, str]], rows: int | None = None, reason: int | None = None, more: str = ""
) -> list[str]:
    """``## Failures (N)`` and a table of the failed tests (explainer, suite, test, why),
    the first ``rows`` of them with reasons of at most ``reason`` characters; ``more``
    says where the others are."""
    if not failures:
        return []
    shown = failures if rows is None else failures[:rows]
    lines = [f"## Failures ({len(failures)})", "", "| explainer | suite | test | why |", "|---|---|---|---|"]
    lines += [
        f"| {cell(f['explainer'])} | {cell(f['suite'])} | `{cell(f['nodeid'].rsplit('::', 1)[-1])}` "
        f"| {cell(f['message'], reason)} |"
        for f in shown
    ]
    if len(shown) < len(failures):
        lines.append(f"| … | | | {len(failures) - len(shown)} more{': ' + more if more else ''} |")
    return lines + [""]


def run_page(env: Mapping[str, str] = os.environ) -> str | None:
    """The GitHub Actions page of this run (its artifacts: the full report), None outside one."""
    server, repository, run_id = (env.get(k) for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    if not (server and repository and run_id):
        return None
    return f"{server}/{repository}/actions/runs/{run_id}"
