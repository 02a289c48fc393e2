"""``python -m pytest_chaosmining.tools.baseline_info BASELINE [REPORT_DIR]``: the recipe's line
about the baseline a run is judged against (``chaosmining: baseline …: tier T, run of D, N
judged results``), or, where the file is not a results.json (not JSON, another tool's
JSON, a newer format), one usage-error line naming it and what is wrong, with
``REPORT_DIR/stopped.json`` saying so, and exit status 4 (pytest's usage error).  Imports
nothing heavy."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_chaosmining.core.results_file import NotAResultsFile, read_results
from pytest_chaosmining.reports.report_folder import clear_previous, write_stopped

#: pytest's exit status for a usage error
USAGE_ERROR = 4


def main(argv: list[str] | None = None) -> int:
    """Command line: describe the baseline, or stop the run with a usage error."""
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print("usage: python -m pytest_chaosmining.tools.baseline_info BASELINE [REPORT_DIR]", file=sys.stderr)
        return 2
    baseline = Path(args[0])
    try:
        payload = read_results(baseline, samples=True)  # its samples file too: the baseline is both
    except NotAResultsFile as exc:
        reason = f"--chaosmining-baseline: {exc}"
        print(f"ERROR: chaosmining: {reason}", file=sys.stderr)
        if len(args) > 1:
            report = Path(args[1])
            clear_previous(report, baseline)
            write_stopped(report, reason)
        return USAGE_ERROR
    meta = payload.get("meta", {})
    judged = sum(1 for r in payload["records"] if r.get("threshold") is not None)
    run = f"tier {meta.get('tier')}, run of {meta.get('started')}"
    print(f"chaosmining: baseline {baseline}: {run}, {judged} judged results")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
