"""``python -m pytest_chaosmining.tools.save_baseline RESULTS BASELINE``: the recipe's
``baseline`` step: copy a run's results.json and its samples file (the maps a baseline
compares) to the baseline's path and the samples file beside it, and say which files to
commit.  Stops with a usage error where RESULTS is not a whole results.json.  Imports
nothing heavy."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_chaosmining.core.results_file import NotAResultsFile, copy_results, read_results

#: pytest's exit status for a usage error
USAGE_ERROR = 4


def main(argv: list[str] | None = None) -> int:
    """Command line: copy the run's results as the baseline."""
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 2:
        print("usage: python -m pytest_chaosmining.tools.save_baseline RESULTS BASELINE", file=sys.stderr)
        return 2
    source, target = Path(args[0]), Path(args[1])
    try:
        read_results(source, samples=True)  # whole: its samples file beside it, and the one it names
    except NotAResultsFile as exc:
        print(f"ERROR: chaosmining: not saved as the baseline: {exc}", file=sys.stderr)
        return USAGE_ERROR
    target.parent.mkdir(parents=True, exist_ok=True)
    written = copy_results(source, target)
    print(f"chaosmining: {source} is the new baseline {target}: commit {' and '.join(written)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
