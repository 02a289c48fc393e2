"""Wall time of a conformance run, cold (empty model cache) then warm.

    python benchmarks/tier_times.py --tier smoke [-- extra pytest args]

Runs ``pytest --chaosmining`` twice in an empty temporary directory with a
fresh cache and prints both times.  A benchmark, not a test: budgets
(smoke < 60 s cold; ci < 10 min cold, < 1 min warm) are checked by reading it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(tier: str, extra: list[str], keep: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        reports = keep or Path(tmp)
        cache = Path(tmp) / "cache"
        for label in ("cold", "warm"):
            cmd = [sys.executable, "-m", "pytest", "--chaosmining", "--chaosmining-tier", tier,
                   "--chaosmining-cache", str(cache), "--chaosmining-report", str(reports / label),
                   "-q", "-p", "no:cacheprovider", *extra]
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            print(f"{tier} {label}: {elapsed:.1f} s  (exit {proc.returncode}; {last})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", default="smoke", choices=["smoke", "ci", "paper"])
    parser.add_argument("--keep", type=Path, help="write the cold/ and warm/ reports here instead of a temp dir")
    args, extra = parser.parse_known_args()
    run(args.tier, [a for a in extra if a != "--"], args.keep.resolve() if args.keep else None)


if __name__ == "__main__":
    main()
