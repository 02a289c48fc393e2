"""Write the built-ins' shipped reference results from the default run's results.json:
``python -m pytest_chaosmining.tools.reference reports/smoke/results.json``
(:mod:`pytest_chaosmining.reports.reference`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.reports.reference import SHIPPED, reference_payload
from pytest_chaosmining.suites import all_specs


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    results = read_results(Path(args[0]))
    SHIPPED.write_text(json.dumps(reference_payload(results, all_specs()), indent=1) + "\n")
    print(f"wrote {SHIPPED}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
