"""The same gate on another stack, and a quiet cost gate on the same one (CPU).

    python benchmarks/stack_check.py [--workers 2] [--repeats 5] [--out DIR]

From empty caches (shipped models and results from the package's pack), each run's wall
time measured:

1. the default run on this stack (``matched``);
2. the default run as another torch and numpy release would make it (``other release``:
   version strings 99.0.0 in the installed metadata and ``torch.__version__``, the same
   numerics; a PYTHONPATH folder, as ``tests/test_pack_and_derived.py`` simulates it),
   compared with the first (``chaosmining-compare``), and its time over the first's;
3. a run with every built-in computed and timed (``--chaosmining-builtin-results
   recompute``), then ``--repeats`` more such runs against its results as the baseline:
   the cost findings (CPU time, peak memory) each raised, and its other failed tests.

It prints one Markdown table and writes it to ``stack_check.md`` beside this file (with
``--write``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
from pathlib import Path

from gpu_check import compared, run

HERE = Path(__file__).resolve().parent
COST = re.compile(r"(cpu_ms|peak_mem_mb) regressed")


def another_release(root: Path) -> Path:
    """A PYTHONPATH folder: torch and numpy 99.0.0 by their metadata and ``torch.__version__``."""
    site = root / "site"
    for name in ("torch", "numpy"):
        info = site / f"{name}-99.0.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 99.0.0\n")
    (site / "sitecustomize.py").write_text("import torch\ntorch.__version__ = '99.0.0'\n")
    return site


def cost_findings(results: Path) -> tuple[int, int]:
    """The failed tests of a run that hold a cost finding, and the others."""
    failures = json.loads(results.read_text())["failures"] if results.exists() else []
    cost = sum(bool(COST.search(f["message"])) for f in failures)
    return cost, len(failures) - cost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="chaosmining-stack-check-")))
    parser.add_argument("--write", action="store_true", help="write stack_check.md beside this file")
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    matched = run("matched", out, "cpu", args.workers)
    rows.append((matched, "", ""))
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(another_release(out)), *([saved] if saved else [])])
    try:
        other = run("other-release", out, "cpu", args.workers)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved
    ratio = f"{other['seconds'] / matched['seconds']:.2f}× matched" if matched["seconds"] else ""
    rows.append((other, ratio, "against matched: " + compared(matched["results"], other["results"])))
    recompute = "--chaosmining-builtin-results=recompute"
    base = run("recompute-baseline", out, "cpu", args.workers, recompute)
    rows.append((base, "", ""))
    for i in range(1, args.repeats + 1):
        again = run(f"recompute-{i}", out, "cpu", args.workers, recompute, f"--chaosmining-baseline={base['results']}")
        cost, other_failed = cost_findings(again["results"])
        rows.append((again, "", f"against recompute-baseline: {cost} cost findings, {other_failed} other failed tests"))
    lines = [f"# The gate on another stack, and its cost gate on this one (CPU, {args.workers} workers)", "",
             "| run | wall s | time | exit | outcome | failed tests | comparison |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for row, time_note, comparison in rows:
        lines.append(f"| {row['name']} | {row['seconds']} | {time_note} | {row['exit']} | {row['outcome']} | "
                     f"{len(row['failed'])} | {comparison} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    (out / "stack_check.md").write_text(table)
    if args.write:
        (HERE / "stack_check.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
