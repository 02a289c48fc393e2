"""ChaosMining's Figure 4 at the paper tier, in resumable chunks.

    python benchmarks/figure4/run.py [--factors noise_features,label_noise] [--seeds 0] [--cache DIR]
    python benchmarks/figure4/run.py --summary

A chunk is one swept factor at one seed: ``pytest --chaosmining --chaosmining-tier paper
--chaosmining-suites symbolic --chaosmining-sweep FACTOR --chaosmining-seeds S-S
--chaosmining-explainers SA,IG,DL,FA -n 2 --dist loadgroup`` (each model's tests on one
worker, so that the two workers train two models at once rather than wait for the same
one), its FPrec and UScore per condition and formula kept in ``chunks/<factor>-s<seed>.json``
with its wall time and the code it ran (``git describe``).  A chunk whose file exists is
skipped, so a stopped run resumes; commit the files as they come.  The models live in
``--cache`` (the default condition's are shared by every factor's chunk of a seed).
``--summary`` writes ``figure4.md``: per factor and value, each method's mean FPrec over
formulas and seeds beside the paper's reference points (REFERENCE.md §7), and ``figure4.png``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_chaosmining.core.results_file import read_results

HERE = Path(__file__).resolve().parent
CHUNKS = HERE / "chunks"
#: the paper's four methods
METHODS = ("SA", "IG", "DL", "FA")
#: the order the chunks run in: the factors with reference points first
FACTORS = ("noise_features", "label_noise", "n_samples", "optimizer", "lr", "width", "depth", "dropout")


def run_chunk(factor: str, seed: int, cache: Path) -> Path:
    """Run one chunk (unless its file exists) and keep what Figure 4 needs."""
    out = CHUNKS / f"{factor}-s{seed}.json"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report"
        args = [
            sys.executable, "-m", "pytest", "--chaosmining", "-m", "chaosmining", "-p", "no:cacheprovider", "-q",
            "--chaosmining-tier", "paper", "--chaosmining-suites", "symbolic", "--chaosmining-sweep", factor,
            "--chaosmining-seeds", f"{seed}-{seed}", "--chaosmining-explainers", ",".join(METHODS),
            "-n", "2", "--dist", "loadgroup", "--chaosmining-cache", str(cache), "--chaosmining-report", str(report),
            "--rootdir", tmp,
        ]  # fmt: skip
        start = time.time()
        done = subprocess.run(args, cwd=tmp, capture_output=True, text=True)
        seconds = time.time() - start
        results = read_results(report / "results.json")
    kept = [
        {"case": r["case"], "explainer": r["explainer"], "metric": r["metric"], "value": r["value"]}
        for r in results["records"]
        if r["suite"] == "symbolic" and r["metric"] in ("fprec", "uscore")
    ]
    code = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE, capture_output=True, text=True)
    payload = {
        "factor": factor,
        "seed": seed,
        "seconds": round(seconds, 1),
        "exit": done.returncode,
        "summary": done.stdout.strip().splitlines()[-1:],
        "code": code.stdout.strip(),
        "versions": results["meta"].get("versions"),
        "records": kept,
    }
    CHUNKS.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=0, sort_keys=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--factors", default=",".join(FACTORS))
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "chaosmining-figure4")
    parser.add_argument("--summary", action="store_true")
    options = parser.parse_args()
    if options.summary:
        from summary import write_summary

        write_summary(CHUNKS, HERE)
        return
    for seed in [int(s) for s in options.seeds.split(",")]:
        for factor in options.factors.split(","):
            path = run_chunk(factor, seed, options.cache)
            print(f"{factor} seed {seed}: {json.loads(path.read_text())['seconds']} s -> {path.name}", flush=True)


if __name__ == "__main__":
    main()
