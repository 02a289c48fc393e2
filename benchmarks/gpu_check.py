"""The plugin's GPU check: do two runs on one device agree, and agree with the CPU reference?

    python benchmarks/gpu_check.py [--device cuda] [--workers 8] [--suites all] [--skip-ci] [--out DIR]

From empty caches, in order (each run's wall time measured):

1. the default run twice (shipped models), compared (``chaosmining-compare``: regressed
   and drift must be 0);
2. the first default run against the committed CPU reference
   (``reports/smoke/results.json``): scores and maps compared, no cost verdict across devices;
3. the default run on the same machine's CPU (``--chaosmining-device cpu``): its wall time
   beside the device's;
4. the cost gate live on the device: a run with every built-in computed and timed
   (``--chaosmining-builtin-results recompute``), then another against its results as the
   baseline (``--chaosmining-baseline``): it must fail no test (no cost finding either);
5. every suite with ``--chaosmining-pack none`` (models trained on the device) twice, each
   from an empty cache, compared; and their failed built-in tests;
6. the ``ci`` tier, all eight suites, from an empty cache (``--skip-ci`` leaves it out).

It prints one Markdown table (and writes it to ``--out``/gpu_check.md with the runs'
results.json files).  Run it on CPU first: ``--device cpu --workers 2 --suites symbolic
--skip-ci`` takes a few minutes; on one GPU the whole check is meant to end within 8.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_chaosmining.tools.compare import FAILING, compare_runs

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "reports" / "smoke" / "results.json"


def run(name: str, out: Path, device: str, workers: int, *args: str) -> dict[str, object]:
    """One ``pytest --chaosmining`` run from an empty cache; its report under ``out/name``."""
    report, cache = out / name, Path(tempfile.mkdtemp(prefix=f"chaosmining-{name}-"))
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "--chaosmining",
            "-m", "chaosmining", f"--chaosmining-device={device}", f"--chaosmining-cache={cache}",
            f"--chaosmining-report={report}", "-q", "-rN", "--no-header", *args]  # fmt: skip
    if workers > 1:
        argv += ["-n", str(workers), "--dist", "loadgroup"]
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    shutil.rmtree(cache, ignore_errors=True)
    last = [line for line in proc.stdout.splitlines() if line.strip()][-1:] or ["(no output)"]
    results = report / "results.json"
    failures = json.loads(results.read_text())["failures"] if results.exists() else []
    return {"name": name, "seconds": round(seconds, 1), "exit": proc.returncode, "outcome": last[0],
            "results": results, "failed": [f["nodeid"] for f in failures]}  # fmt: skip


def compared(old: Path, new: Path) -> str:
    """The comparison's counts per kind (the failing kinds and ``changed``)."""
    if not (old.exists() and new.exists()):
        return "no results to compare"
    findings = compare_runs(old, new)
    kinds = [k for k in (*FAILING, "changed") if k != "failed"]
    return ", ".join(f"{k} {sum(f.kind == k for f in findings)}" for k in kinds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--suites", default="", help="a comma list (default: all eight)")
    parser.add_argument("--skip-ci", action="store_true", help="leave out the ci tier")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="chaosmining-gpu-check-")))
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    suites = [f"--chaosmining-suites={args.suites}"] if args.suites else []
    rows = []
    first = run("default-1", out, args.device, args.workers, *suites)
    second = run("default-2", out, args.device, args.workers, *suites)
    rows += [(first, ""), (second, "against default-1: " + compared(first["results"], second["results"]))]
    rows.append(({**first, "name": "default-1 vs CPU reference", "seconds": 0.0},
                 "against reports/smoke: " + compared(REFERENCE, first["results"])))  # fmt: skip
    cpu = run("default-cpu", out, "cpu", args.workers, *suites)
    rows.append((cpu, f"{args.device} default-1 took {first['seconds']} s, the CPU {cpu['seconds']} s"))
    recompute = ["--chaosmining-builtin-results=recompute", *suites]
    timed = run("recompute-1", out, args.device, args.workers, *recompute)
    gated = run("recompute-2", out, args.device, args.workers, *recompute,
                f"--chaosmining-baseline={timed['results']}")  # fmt: skip
    rows += [
        (timed, ""),
        (gated, "live against recompute-1 (every cost gated): " + compared(timed["results"], gated["results"])),
    ]
    trained = [run(f"pack-none-{i}", out, args.device, args.workers, "--chaosmining-pack=none",
                   "--chaosmining-builtin-results=recompute", *suites) for i in (1, 2)]  # fmt: skip
    rows += [
        (trained[0], ""),
        (trained[1], "against pack-none-1: " + compared(trained[0]["results"], trained[1]["results"])),
    ]
    if not args.skip_ci:
        rows.append((run("ci", out, args.device, args.workers, "--chaosmining-tier=ci", *suites), ""))
    scope = f", suites {args.suites}" if args.suites else ""
    lines = [f"# GPU check ({args.device}, {args.workers} workers{scope})", "",
             "| run | wall s | exit | outcome | failed tests | comparison |", "|---|---|---|---|---|---|"]  # fmt: skip
    for row, comparison in rows:
        lines.append(f"| {row['name']} | {row['seconds']} | {row['exit']} | {row['outcome']} | "
                     f"{len(row['failed'])} | {comparison} |")  # fmt: skip
    table = "\n".join(lines) + "\n"
    (out / "gpu_check.md").write_text(table)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
