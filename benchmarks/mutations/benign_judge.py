"""Judge each benign change (and each harmful mutant) of ``benign/`` against its
base as a run against the base's baseline would, with the plugin's own baseline code.

    python benchmarks/mutations/benign_judge.py [--write]

For every change, its records and its base's (``base-<built-in>``) are renamed to
one explainer and compared by :func:`pytest_chaosmining.tools.compare.compare_runs`
(the verdicts of ``--chaosmining-baseline``: a judged score that fell beyond what its
metric allows, maps that moved beyond the suite's bar, a judged result gone), with
the thresholds of the checkout (or ``--thresholds``).  A test the change fails that
its base fails too is no evidence against it and is not counted; a test it fails on
its own is counted apart (``bars``).  Per half (calibration, held-out) and kind: how
many changes a baseline run fails, with the exact (Clopper-Pearson) 95 % upper bound
of that rate.  The samplers' drift is left to the run (it measures their own noise on
the case; offline it cannot): their drift findings are listed, not counted.

``--write`` writes the verdicts to ``benign-<label>.json.xz`` (``--label``: ``before``, judged
with the earlier thresholds, or ``after``), and with both, the table ``benign.md``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scipy.stats import beta  # noqa: E402

from pytest_chaosmining.explainers import builtin_explainers  # noqa: E402
from pytest_chaosmining.tools.compare import compare_runs  # noqa: E402

OUT = HERE / "benign"
NAME = "candidate"
#: metrics an explainer has only where it declares completeness (run.py's)
DECLARED_ONLY = ("sign_agreement", "completeness")


def load() -> tuple[dict[str, list[dict]], dict[str, list[dict]], dict[str, object]]:
    """Every explainer's records and failed tests over the chunks, and the chunks' keys."""
    records: dict[str, list[dict]] = defaultdict(list)
    failures: dict[str, list[dict]] = defaultdict(list)
    keys: dict[str, object] = {}
    for path in sorted(OUT.glob("*.json.xz")):
        chunk = json.loads(lzma.decompress(path.read_bytes()))
        keys[chunk["chunk"]] = chunk["key"]
        for r in chunk["records"]:
            records[r["explainer"]].append(r)
        for f in chunk["failures"]:
            failures[f["explainer"]].append(f)
    return records, failures, keys


def renamed(rows: list[dict], name: str) -> list[dict]:
    """``rows`` (records or failures) as the explainer ``NAME``'s."""
    out = []
    for r in rows:
        r = dict(r)
        r["nodeid"] = re.sub(rf"-{re.escape(name)}-s(\d+)\]", rf"-{NAME}-s\1]", r["nodeid"])
        r["explainer"] = NAME
        out.append(r)
    return out


def upper_bound(failed: int, total: int, confidence: float = 0.95) -> float:
    """The exact one-sided upper confidence bound of a rate seen as ``failed`` of ``total``."""
    return 1.0 if failed >= total else float(beta.ppf(confidence, failed + 1, total - failed))


def judge(
    name: str,
    base: str,
    records: dict[str, list[dict]],
    failures: dict[str, list[dict]],
    meta: dict[str, object],
    thresholds: Path | None,
    declares: bool = True,
) -> dict[str, object]:
    """The verdicts of a run of ``name`` against the baseline of ``base`` (of a plain
    callable's, where ``name`` declares nothing: without the records declarations add)."""
    stochastic = builtin_explainers()[base].stochastic
    kept = [r for r in records[f"base-{base}"] if declares or r["metric"] not in DECLARED_ONLY]
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp) / "old.json", Path(tmp) / "new.json"
        old.write_text(json.dumps({"meta": meta, "records": renamed(kept, f"base-{base}")}))
        new.write_text(json.dumps({"meta": meta, "records": renamed(records[name], name), "failures": []}))
        findings = compare_runs(old, new, thresholds_file=thresholds)
    base_failed = {f["nodeid"] for f in renamed(failures[f"base-{base}"], f"base-{base}")}
    own = [f for f in renamed(failures[name], name) if f["nodeid"] not in base_failed]
    counted = [f for f in findings if f.kind in ("regressed", "missing") or (f.kind == "drift" and not stochastic)]
    return {
        "name": name,
        "base": base,
        "baseline": [{"kind": f.kind, "nodeid": f.nodeid, "message": f.message} for f in counted],
        "sampler_drift": [f.message for f in findings if f.kind == "drift" and stochastic],
        "bars": [{"nodeid": f["nodeid"], "message": f["message"][:300]} for f in own],
    }


def main(argv: list[str] | None = None) -> int:
    from benign import CHANGES
    from mutants import HARMFUL, MUTANTS

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--thresholds", type=Path, default=None, help="a TOML merged over the shipped bars")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--label", default="after", help="the verdicts' file: benign-<label>.json")
    args = parser.parse_args(argv)
    records, failures, keys = load()
    meta = {"tier": "smoke"}
    verdicts = []
    for name, change in CHANGES.items():
        if name not in records:
            continue
        verdict = judge(name, change.base, records, failures, meta, args.thresholds)
        verdicts.append({**verdict, "kind": change.kind, "half": change.half, "what": change.what})
    harmful = []
    for name, mutant in MUTANTS.items():
        if mutant.kind != HARMFUL or f"mut-{name}" not in records:
            continue
        verdict = judge(f"mut-{name}", mutant.base, records, failures, meta, args.thresholds, mutant.declares)
        harmful.append({**verdict, "what": mutant.what})
    if harmful:
        bars = sum(bool(v["bars"]) for v in harmful)
        both = sum(bool(v["bars"] or v["baseline"]) for v in harmful)
        alone = sum(bool(v["baseline"]) for v in harmful)
        print(f"harmful: {len(harmful)}; caught by the bars alone {bars}, with the baseline {both} "
              f"(by the baseline's own verdicts {alone})")  # fmt: skip
        for v in harmful:
            if not (v["bars"] or v["baseline"]):
                print(f"  missed: {v['name']} ({v['what']})")
    by_half: dict[str, Counter[str]] = defaultdict(Counter)
    for v in verdicts:
        by_half[v["half"]]["changes"] += 1
        by_half[v["half"]]["baseline"] += bool(v["baseline"])
        by_half[v["half"]]["bars"] += bool(v["bars"])
    for half, counts in sorted(by_half.items()):
        n, k = counts["changes"], counts["baseline"]
        print(f"{half}: {k} of {n} fail against the baseline (95 % upper bound {upper_bound(k, n):.3f}); "
              f"{counts['bars']} fail a bar on their own")  # fmt: skip
    for v in verdicts:
        if v["baseline"] or v["bars"]:
            print(f"  {v['half']:<11} {v['name']:<24} baseline {len(v['baseline'])}, bars {len(v['bars'])}: "
                  + "; ".join(f"{f['kind']} {f['message'][:110]}" for f in v["baseline"][:2]))  # fmt: skip
    if args.write:
        payload = {"keys": keys, "verdicts": verdicts, "harmful": harmful}
        (HERE / f"benign-{args.label}.json.xz").write_bytes(lzma.compress(json.dumps(payload).encode()))
        before, after = HERE / "benign-before.json.xz", HERE / "benign-after.json.xz"
        if before.exists() and after.exists():
            (HERE / "benign.md").write_text(table(before, after))
    return 0


def _counts(verdicts: list[dict], half: str | None = None, kind: str | None = None) -> tuple[int, int, int]:
    chosen = [v for v in verdicts if (half is None or v["half"] == half) and (kind is None or v["kind"] == kind)]
    return len(chosen), sum(bool(v["baseline"]) for v in chosen), sum(bool(v["bars"]) for v in chosen)


def table(before_path: Path, after_path: Path) -> str:
    """benign.md: the benign changes and the harmful mutants, judged by the rules before and after."""
    before, after = (json.loads(lzma.decompress(path.read_bytes())) for path in (before_path, after_path))
    lines = [
        "# A baseline's false alarms and catches, before and after the paired rule",
        "",
        "Each benign change (benign.py) and each harmful mutant (mutants.py) ran once through the judged suites "
        "of the default run (benign_run.py; the chunks and their code keys in `benign/`) and is judged against "
        "its unchanged built-in as a run against that baseline would (benign_judge.py, with the plugin's compare "
        "code): *before*, the allowed drops and drift bars of the earlier calibration (10 changes); *after*, "
        "those of benign_calibrate.py on the calibration half with the paired rule.  *baseline*: failed against "
        "the baseline (a score beyond its drop, maps beyond the drift bar, a result gone); *bars*: failed a bar "
        "or own-merit check that its base passes (with or without a baseline).  95 % bound: exact upper bound "
        "of the rate.",
        "",
        "| benign changes | n | fail against the baseline, before | after | 95 % bound after | fail a bar alone |",
        "|---|---|---|---|---|---|",
    ]
    for half in ("calibration", "held-out", None):
        n, b0, bars = _counts(before["verdicts"], half)
        _, b1, _ = _counts(after["verdicts"], half)
        lines.append(f"| {half or 'all'} | {n} | {b0} | {b1} | {upper_bound(b1, n):.3f} | {bars} |")
    lines += ["", "| kind (held-out) | n | before | after |", "|---|---|---|---|"]
    for kind in sorted({v["kind"] for v in after["verdicts"]}):
        n, b0, _ = _counts(before["verdicts"], "held-out", kind)
        _, b1, _ = _counts(after["verdicts"], "held-out", kind)
        lines.append(f"| {kind} | {n} | {b0} | {b1} |")
    harmful_before = {v["name"]: v for v in before["harmful"]}
    lines += [
        "",
        "| harmful mutant | what | bars alone | with the baseline, before | after |",
        "|---|---|---|---|---|",
    ]
    totals = [0, 0, 0]
    for v in after["harmful"]:
        old = harmful_before.get(v["name"], v)
        row = [bool(v["bars"]), bool(v["bars"] or old["baseline"]), bool(v["bars"] or v["baseline"])]
        totals = [t + r for t, r in zip(totals, row)]
        marks = ["caught" if r else "**missed**" for r in row]
        lines.append(f"| {v['name'].removeprefix('mut-')} | {v['what']} | {' | '.join(marks)} |")
    n = len(after["harmful"])
    lines.append(f"| **{n} harmful** | | **{totals[0]} of {n}** | **{totals[1]} of {n}** | **{totals[2]} of {n}** |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
