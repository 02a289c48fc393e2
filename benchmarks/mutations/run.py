"""The mutation benchmark: what the gate catches, measured.

    python benchmarks/mutations/run.py [--mutants a,b] [--workers 2] [--fresh]

For every unmutated method a mutant changes (``base:IG``, ``base:SA``, …) one
default run (``pytest --chaosmining``, every suite at the smoke tier) makes the
baseline.  Every mutant of ``mutants.py`` then runs twice as the registered
explainer ``candidate`` through the same default run: without a baseline (what
the bars alone catch) and against its method's baseline (what a library's CI
with main's baseline catches).  A test the unmutated method fails too is no
evidence against its mutant and is not counted.

Each run's folder under ``--out`` keeps its results and the key of the code
that produced it (mutants, the plugin's code, captum's source, torch): a later
call reuses a run only under the same key, so the benchmark resumes where it
stopped.  The table goes to ``results.md`` and ``results.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mutants import BASES, BENIGN, COST, HARMFUL, MUTANTS, SAME_WORK  # noqa: E402

from pytest_chaosmining.core.results_file import read_results  # noqa: E402
from pytest_chaosmining.core.storage.derived import package_fingerprint  # noqa: E402

CANDIDATE = "candidate"
MISSING_PREFIX = "chaosmining-baseline::"
#: what the drift check's failure says (suite_kit/scoring.py)
DRIFT_MESSAGE = "its maps moved from the baseline's"


def code_key() -> str:
    """The code a run depends on: this folder's sources and the plugin's fingerprint."""
    h = hashlib.sha256(package_fingerprint().encode())
    for name in ("mutants.py", "conftest.py", "pytest.ini"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def run_one(
    name: str,
    out: Path,
    baseline: Path | None,
    workers: int,
    key: str,
    fresh: bool,
    tag: str = "",
    suites: str = "",
) -> dict[str, object]:
    """One default run of ``candidate`` = ``name`` (reused when done under ``key``), of
    ``suites`` only where given (a comma list)."""
    folder = out / (name.replace(":", "-") + tag)
    done = folder / "run.json"
    if not fresh and done.exists() and json.loads(done.read_text()).get("key") == key:
        return json.loads(done.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "--chaosmining",
        "--chaosmining-explainers",
        CANDIDATE,
        f"--chaosmining-report={folder / 'report'}",  # '=': pytest takes a separate path as an argument for its rootdir
        "-q",
        "-rN",
        "--no-header",
    ]
    if workers > 1:
        argv += ["-n", str(workers), "--dist", "loadgroup"]
    if baseline is not None:
        argv += [f"--chaosmining-baseline={baseline}"]
    if suites:
        argv += [f"--chaosmining-suites={suites}"]
    start = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=HERE, env={**os.environ, "CHAOSMINING_MUTANT": name}, capture_output=True, text=True, timeout=1800
    )
    seconds = time.perf_counter() - start
    (folder / "pytest.log").write_text(proc.stdout[-20000:] + proc.stderr[-5000:])
    results = folder / "report" / "results.json"
    if not results.exists():
        raise RuntimeError(f"{name}: pytest wrote no results (exit {proc.returncode}); see {folder / 'pytest.log'}")
    payload = read_results(results, samples=True)
    summary = {
        "key": key,
        "name": name,
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "outcomes": {k: v for k, v in payload["outcomes"].items() if k.split("|")[1] == CANDIDATE},
        "failures": [f for f in payload["failures"] if f["explainer"] == CANDIDATE],
        "timed": len(
            {r["nodeid"] for r in payload["records"] if r["explainer"] == CANDIDATE and r["metric"] == "cpu_ms"}
        ),
    }
    done.write_text(json.dumps(summary, indent=1))
    return summary


#: metrics an explainer has only where it declares completeness
DECLARED_ONLY = ("sign_agreement", "completeness")


def plain_baseline(path: Path) -> Path:
    """The baseline of ``path`` (a built-in declaring what it promises) as that built-in
    registered declaring nothing would have made it: the records its declarations add
    left out (the rest is computed alike).  A mutant registered as a plain callable is
    compared with it, so that a declaration it never made is not missed."""
    payload = read_results(path, samples=True)
    payload["records"] = [r for r in payload["records"] if r["metric"] not in DECLARED_ONLY]
    plain = path.with_name("results-plain.json")
    plain.write_text(json.dumps(payload))
    return plain


def short_nodeid(nodeid: str) -> str:
    """A test's id from the suite's folder on: the same test in two runs whose rootdirs
    differ (a path given to an option as a separate word counts towards pytest's rootdir)."""
    return nodeid.removeprefix(MISSING_PREFIX).split("pytest_chaosmining/suites/")[-1]


def kinds_of(message: str, nodeid: str) -> set[str]:
    """Why a test failed: ``bar`` (a bar missed), ``contract`` (the explainer's output
    or behaviour broke the contract), ``drop`` (a score fell below the baseline),
    ``missing`` (judged in the baseline, not now), ``cost`` (CPU time or memory grew)."""
    found = set()
    if nodeid.startswith(MISSING_PREFIX):
        found.add("missing")
    if "< threshold" in message or "the random control" in message:
        found.add("bar")
    if "cpu_ms regressed" in message or "peak_mem_mb regressed" in message:
        found.add("cost")
    if any(
        f"{m} regressed" in message
        for m in (
            "fprec",
            "iou",
            "channel_share",
            "top1_hit",
            "training_gain",
            "drop_gain",
            "mcs_gain",
            "idr_gain",
            "fresh_share",
            "fprec_over_linear",
        )
    ) or ("regressed:" in message and not found & {"cost"}):
        found.add("drop")
    if f"explainer '{CANDIDATE}'" in message and not found:
        found.add("contract")
    return found or {"other"}


def _failing(summary: dict[str, object], base: dict[str, object]) -> list[dict[str, str]]:
    """The failures of a run, less the tests its unmutated base fails too (no evidence)."""
    failing_base = {short_nodeid(str(f["nodeid"])) for f in base["failures"]}  # type: ignore[attr-defined]
    return [
        f
        for f in summary["failures"]  # type: ignore[attr-defined]
        if short_nodeid(str(f["nodeid"])) not in failing_base
    ]


def verdict(
    bars_run: dict[str, object], baseline_run: dict[str, object], kind: str, base: dict[str, object]
) -> dict[str, object]:
    """The table row of one mutant: its run without a baseline (the bars alone) and
    its run against its base's baseline."""

    def judged(f: dict[str, str]) -> bool:  # failed on a score, a bar, the contract or a missing result
        return kinds_of(str(f["message"]), str(f["nodeid"])) != {"cost"}

    def drifted(f: dict[str, str]) -> bool:  # the drift check (maps moved from the baseline's) failed it
        return DRIFT_MESSAGE in str(f["message"])

    bars_failures = [f for f in _failing(bars_run, base) if judged(f)]
    baseline_failures = _failing(baseline_run, base)
    bars = len({short_nodeid(f["nodeid"]) for f in bars_failures})
    scores = len({short_nodeid(f["nodeid"]) for f in baseline_failures if judged(f)})
    cost = len({short_nodeid(f["nodeid"]) for f in baseline_failures if not judged(f)})
    drift = len({short_nodeid(f["nodeid"]) for f in baseline_failures if drifted(f)})
    caught = {short_nodeid(f["nodeid"]): str(f["suite"]) for f in baseline_failures + bars_failures if judged(f)}
    per_suite = {s: sum(1 for v in caught.values() if v == s) for s in sorted(set(caught.values()))}
    suites = [f"{s} {n}" for s, n in per_suite.items()]
    outcomes = baseline_run["outcomes"]
    assert isinstance(outcomes, dict)
    judged = sum(n for k, n in outcomes.items() if k.split("|")[2] in ("passed", "failed"))
    timed = baseline_run.get("timed", 0)
    if kind == HARMFUL:
        text = (
            "caught by the bars"
            if bars
            else ("caught with the baseline only" if scores else ("cost only" if cost else "MISSED"))
        )
    else:
        text = "false alarm on a score" if scores or bars else ("fails on cost (labelled)" if cost else "passes")
    return {
        "bars": bars,
        "with_baseline": scores,
        "cost": cost,
        "drift": drift,
        "suites": suites,
        "judged": judged,
        "timed": timed,
        "verdict": text,
        "seconds": round(float(bars_run["seconds"]) + float(baseline_run["seconds"]), 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", default="", help="comma list (default: all)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "runs")
    parser.add_argument("--fresh", action="store_true", help="run again even where a run under this code exists")
    parser.add_argument("--suites", default="", help="comma list of suites to run (default: the default run's)")
    parser.add_argument("--table", default="results", help="file name of the table (.md and .json)")
    args = parser.parse_args(argv)
    chosen = [m for m in MUTANTS.values() if not args.mutants or m.name in args.mutants.split(",")]
    key = code_key() + (f"-{args.suites}" if args.suites else "")
    baselines = {}
    for base in sorted({m.base for m in chosen}):
        assert base in BASES
        summary = run_one(f"base:{base}", args.out, None, args.workers, key, args.fresh, suites=args.suites)
        print(f"base {base}: {summary['seconds']} s, {len(summary['failures'])} failures", flush=True)  # type: ignore[arg-type]
        baselines[base] = (args.out / f"base-{base}" / "report" / "results.json", summary)
    rows = []
    for mutant in chosen:
        path, base = baselines[mutant.base]
        bars_run = run_one(mutant.name, args.out, None, args.workers, key, args.fresh, "-bars", args.suites)
        against = path if mutant.declares else plain_baseline(path)
        baseline_run = run_one(mutant.name, args.out, against, args.workers, key, args.fresh, suites=args.suites)
        row = {
            "mutant": mutant.name,
            "base": mutant.base,
            "kind": mutant.kind,
            "what": mutant.what,
            **verdict(bars_run, baseline_run, mutant.kind, base),
        }
        rows.append(row)
        print(
            f"{mutant.name}: {row['verdict']} (bars {row['bars']}, with baseline {row['with_baseline']}, "
            f"drift {row['drift']}, cost {row['cost']}; {row['seconds']} s)",
            flush=True,
        )
    write_table(rows, {b: s for b, (_, s) in baselines.items()}, key, args.out, args.suites, args.table)
    return 0


def gate_alarms(out: Path, names: list[str], bases: dict[str, str], factor: float = 2.0) -> dict[str, int]:
    """For mutants that do their base's work, how many of their timed tests a gate on
    wall time (``time_ms``) and one on CPU time (``cpu_ms``) would fail against the
    base's run, at ``factor`` × the base + 20 ms: false alarms, since the work is the same."""
    counts = {"tests": 0, "wall": 0, "cpu": 0}

    def values(folder: Path, metric: str) -> dict[str, float]:
        payload = read_results(folder / "report" / "results.json")
        return {
            short_nodeid(r["nodeid"]): r["value"]
            for r in payload["records"]
            if r["explainer"] == CANDIDATE and r["metric"] == metric
        }

    for name in names:
        base = out / f"base-{bases[name]}"
        for metric, label in (("time_ms", "wall"), ("cpu_ms", "cpu")):
            old, new = values(base, metric), values(out / name, metric)
            shared = old.keys() & new.keys()
            counts[label] += sum(new[k] > factor * old[k] + 20.0 for k in shared)
            if label == "cpu":
                counts["tests"] += len(shared)
    return counts


def write_table(
    rows: list[dict[str, object]],
    bases: dict[str, dict[str, object]],
    key: str,
    out: Path,
    suites: str = "",
    table: str = "results",
) -> None:
    """``<table>.md`` and ``<table>.json`` from the rows, with the cost gate's alarms read
    from the runs under ``out`` (``suites``: the suites the runs ran, where not all)."""
    harmful = [r for r in rows if r["kind"] == HARMFUL]
    benign = [r for r in rows if r["kind"] in (BENIGN, COST)]
    by_bars = sum(1 for r in harmful if r["bars"])
    with_baseline = sum(1 for r in harmful if r["with_baseline"])
    false_alarms = sum(1 for r in benign if r["with_baseline"])
    by_drift = sum(1 for r in harmful if r.get("drift"))
    drift_alarms = sum(1 for r in benign if r.get("drift"))
    ran = f"the suites {suites.replace(',', ', ')}" if suites else "all suites"
    same = [r for r in rows if r["mutant"] in SAME_WORK]
    alarms = gate_alarms(out, [str(r["mutant"]) for r in same], {str(r["mutant"]): str(r["base"]) for r in same})
    lines = [
        "# Mutation benchmark",
        "",
        "Each mutant runs as the registered explainer `candidate` through the default run (`pytest --chaosmining`,"
        f" smoke tier, {ran}, `-n 2 --dist loadgroup`) against a baseline from its unmutated method.",
        "*bars*: tests failed in the run without a baseline (a bar, an own-merit check or the explainer contract); "
        "*suites*: the failing tests per suite; "
        "*with baseline*: tests failed on a score, a bar or a missing result; *drift*: of those, tests the drift "
        "check failed (the maps moved from the baseline's); *cost*: tests failed on CPU time "
        "or memory growth only.",
        "",
        f"**Harmful mutants caught: {by_bars} of {len(harmful)} by the bars alone, {with_baseline} of "
        f"{len(harmful)} with the baseline, {by_drift} of {len(harmful)} by the drift check. Benign mutants "
        f"failing on a score: {false_alarms} of {len(benign)} (on the drift check: {drift_alarms}).**",
        "",
        f"Cost gate under the load of a `-n 2` run (the other worker on the second core), on the "
        f"{len(same)} mutants that do their base's work (a cheap change of its map): of {alarms['tests']} "
        f"timed tests, a gate on wall time (2 x baseline + 20 ms, before) would fail {alarms['wall']}, the "
        f"gate on CPU time (after) fails {alarms['cpu']}.",
        "",
        "| mutant | of | kind | what | bars | with baseline | drift | cost | suites | verdict | runs (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        suites = ", ".join(r["suites"]) or "—"  # type: ignore[arg-type]
        what = str(r["what"]).replace("|", "\\|")
        lines.append(
            f"| {r['mutant']} | {r['base']} | {r['kind']} | {what} | {r['bars']} | "
            f"{r['with_baseline']} | {r.get('drift', '—')} | {r['cost']} | {suites} | {r['verdict']} | {r['seconds']} |"
        )
    lines += [
        "",
        "Baselines (unmutated methods; a test the unmutated method fails is not counted against its "
        "mutants): "
        + ", ".join(f"{b} {s['seconds']} s, {len(s['failures'])} failing tests" for b, s in sorted(bases.items())),  # type: ignore[arg-type]
        "",
        f"Code key `{key}` (the plugin's source, captum's files, torch and numpy versions, the mutants); "
        f"machine: {os.cpu_count()} cores; {sum(float(r['seconds']) for r in rows) / 60:.0f} min of runs "
        f"for the mutants.",
    ]
    (HERE / f"{table}.md").write_text("\n".join(lines) + "\n")
    (HERE / f"{table}.json").write_text(
        json.dumps({"key": key, "suites": suites, "rows": rows, "bases": bases}, indent=1)
    )


if __name__ == "__main__":
    raise SystemExit(main())
