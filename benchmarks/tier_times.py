"""Wall time of the default conformance run, as a CI runner sees it: cold (empty
directory, empty cache), warm (same cache), and warm with one user explainer
(captum's InputXGradient registered in a conftest under its own name); then a
library's gate, that explainer alone with the control (``--chaosmining-explainers
own``, on two xdist workers as the CI recipe runs it), cold from an empty cache
and warm; with the time per suite.

    python benchmarks/tier_times.py [--tier smoke] [--pack none] [-- extra pytest args]

A benchmark, not a test: the budgets (default run at most 10 min cold and 2 min
warm on 2 cores; a user explainer at most 3 min more) are read off its output.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

USER_CONFTEST = """
from captum.attr import InputXGradient


def pytest_chaosmining_explainers(config):
    return {"user-IxG": InputXGradient}  # a user's copy of the built-in IxG: never served from the cache
"""


def per_suite(junit: Path) -> Counter[str]:
    """Seconds of test time per suite (from the shipped test module of each test)."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").split(".")[-1]
        seconds[module.removeprefix("test_chaosmining_")] += float(case.get("time", 0))
    return seconds


#: the CI recipe's workers (docs/ci.md: ``chaosmining.sh run -n 2 --dist loadgroup``)
RECIPE_WORKERS = ("-n", "2", "--dist", "loadgroup")

#: the runs, in order: label, the cache folder (the own runs start from an empty one), the conftest
#: registering a user's explainer, and their extra arguments
RUNS: tuple[tuple[str, str, bool, tuple[str, ...]], ...] = (
    ("cold", "cache", False, ()),
    ("warm", "cache", False, ()),
    ("warm + InputXGradient", "cache", True, ()),
    ("own cold", "own-cache", True, ("--chaosmining-explainers", "own", *RECIPE_WORKERS)),
    ("own warm", "own-cache", True, ("--chaosmining-explainers", "own", *RECIPE_WORKERS)),
)


def run(tier: str, pack: str | None, extra: list[str], report: str | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        for i, (label, cache, user, args) in enumerate(RUNS):
            if user:
                (cwd / "conftest.py").write_text(USER_CONFTEST)
            junit = cwd / f"run-{i}.xml"
            cmd = [
                sys.executable,
                "-m",
                "pytest",
                "--chaosmining",
                "--chaosmining-tier",
                tier,
                "--chaosmining-cache",
                str(cwd / cache),
                "--junitxml",
                str(junit),
                "-q",
                "-p",
                "no:cacheprovider",
                *(["--chaosmining-pack", pack] if pack else []),
                *(["--chaosmining-report", report] if report and label == "cold" else []),
                *args,
                *extra,
            ]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            suites = ", ".join(f"{s} {v:.0f} s" for s, v in per_suite(junit).items()) if junit.exists() else ""
            print(f"{tier} {label}: {elapsed:.1f} s  (exit {proc.returncode}; {last})\n    {suites}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tier", default="smoke", choices=["smoke", "ci", "paper"])
    parser.add_argument("--pack", help="--chaosmining-pack for the runs (default: the shipped pack)")
    parser.add_argument("--report", help="--chaosmining-report of the cold run (an absolute path)")
    args, extra = parser.parse_known_args()
    run(args.tier, args.pack, [a for a in extra if a != "--"], args.report)


if __name__ == "__main__":
    main()
