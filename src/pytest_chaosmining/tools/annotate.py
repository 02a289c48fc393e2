"""GitHub Actions annotations from a run's ``results.json``: one ``::error``
line per failed conformance test, naming the explainer, the suite and the test,
one ``::warning`` line per test whose results changed against the baseline within
what harmless changes do, and a table of them appended to the step summary (``$GITHUB_STEP_SUMMARY``).

``python -m pytest_chaosmining.tools.annotate chaosmining-report/results.json``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def _escape(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def error_lines(payload: dict[str, object]) -> list[str]:
    """The ``::error`` lines of the failed tests in a results.json payload."""
    failures = payload.get("failures", [])
    assert isinstance(failures, list)
    return [
        f"::error title={_escape('chaosmining: ' + f['explainer'] + ' failed ' + f['suite'])}::"
        f"{_escape(f['nodeid'] + ': ' + f['message'])}"
        for f in failures
    ]


def warning_lines(payload: dict[str, object]) -> list[str]:
    """The ``::warning`` lines of the tests whose results changed against the baseline
    within what harmless changes do (they passed: re-baseline if the change is intended)."""
    meta = payload.get("meta", {})
    baseline = meta.get("baseline") if isinstance(meta, dict) else None
    changed = baseline.get("changed", []) if isinstance(baseline, dict) else []
    return [
        f"::warning title={_escape('chaosmining: changed against the baseline')}::"
        f"{_escape(c['nodeid'] + ': ' + '; '.join(c['notes']))}"
        for c in changed
    ]


def summary(payload: dict[str, object]) -> str:
    """A Markdown table of the failed tests (or a line saying there were none)."""
    failures = payload.get("failures", [])
    assert isinstance(failures, list)
    if not failures:
        return "**chaosmining: no conformance test failed**\n"
    rows = [
        f"| {f['suite']} | {f['explainer']} | `{f['nodeid']}` | {f['message'].replace('|', '/')} |" for f in failures
    ]
    return "\n".join(
        [
            f"**chaosmining: {len(failures)} conformance test(s) failed**",
            "",
            "| suite | explainer | test | why |",
            "|---|---|---|---|",
            *rows,
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """Print the annotations; append the summary where ``GITHUB_STEP_SUMMARY`` is set."""
    parser = argparse.ArgumentParser(description="GitHub annotations from a chaosmining results.json")
    parser.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    payload = json.loads(args.results.read_text())
    for line in error_lines(payload) + warning_lines(payload):
        print(line)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(summary(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main())
