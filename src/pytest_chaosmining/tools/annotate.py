"""GitHub Actions annotations from a run's ``results.json``: one ``::error`` line per
failed conformance test (the run's failures, each once) and per error of the run itself,
one ``::warning`` line per test that passed with results that changed against the
baseline within what harmless changes do.  Where the plugin did not write the step
summary itself (no ``$GITHUB_STEP_SUMMARY`` during the run), the same failure table goes
there.  A run that stopped before its report (a usage error) left ``stopped.json``
beside it: its reason becomes the error.

``python -m pytest_chaosmining.tools.annotate chaosmining-report/results.json``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pytest_chaosmining.reports.failure_table import SUMMARY_REASON, SUMMARY_ROWS, failure_table, run_page
from pytest_chaosmining.reports.report_folder import STOPPED
from pytest_chaosmining.reports.run_counts import RunCounts


def _escape(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped as the runner expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _counts(payload: dict[str, object]) -> RunCounts | None:
    found = payload.get("counts")
    return RunCounts.from_dict(found) if isinstance(found, dict) else None


def error_lines(payload: dict[str, object]) -> list[str]:
    """The ``::error`` lines of a results.json payload: the run's own errors, then its
    failed tests."""
    failures = payload.get("failures", [])
    assert isinstance(failures, list)
    counts = _counts(payload)
    errors = [
        f"::error title={_escape('chaosmining: the run failed')}::{_escape(error)}"
        for error in (counts.errors if counts is not None else ())
    ]
    return errors + [
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
    """The run's one count and its failure table, as the plugin's step summary shows them."""
    failures = payload.get("failures", [])
    assert isinstance(failures, list)
    counts = _counts(payload) or RunCounts(failed=len(failures))
    page = run_page()
    lines = [f"**chaosmining: {counts.headline()}**", ""]
    lines += failure_table(failures, SUMMARY_ROWS, SUMMARY_REASON, f"report.md ({page})" if page else "report.md")
    return "\n".join(lines) + "\n"


def stopped_lines(report: Path) -> list[str]:
    """Why a run left no results.json in ``report``: its ``stopped.json``, or that it
    stopped before its report (the pytest step's log says why)."""
    stopped = report / STOPPED
    if stopped.is_file():
        reason = str(json.loads(stopped.read_text()).get("reason", "unknown"))
        return [f"::error title={_escape('chaosmining: the run stopped')}::{_escape(reason)}"]
    return [
        f"::error title=chaosmining::no {report / 'results.json'}: the run stopped before its report "
        "(the pytest step's log says why)"
    ]


def main(argv: list[str] | None = None) -> int:
    """Print the annotations; append the summary where ``GITHUB_STEP_SUMMARY`` is set and
    the run did not write it."""
    parser = argparse.ArgumentParser(description="GitHub annotations from a chaosmining results.json")
    parser.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    if not args.results.is_file():
        for line in stopped_lines(args.results.parent):
            print(line)
        return 0
    payload = json.loads(args.results.read_text())
    for line in error_lines(payload) + warning_lines(payload):
        print(line)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    meta = payload.get("meta")
    if target and not (isinstance(meta, dict) and meta.get("step_summary")):
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(summary(payload))
    return 0


if __name__ == "__main__":
    sys.exit(main())
