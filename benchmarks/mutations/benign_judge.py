"""Count the verdicts of each benign change (and each harmful mutant) of ``benign/``
against its base.

    python benchmarks/mutations/benign_judge.py [--write]

The held-out changes and the harmful mutants ran **against their bases' baseline**
(benign_run.py): their verdicts are the run's own, every finding kind counted (a score's
drop, drift with a sampler's noise measured in the run, CPU time and memory, a result
gone; :func:`live_verdict`).  A benign change that does more than twice its base's work
(IG with more than 20 steps, a sampler with more than twice the samples, float64), or
whose cost really grew beyond the gate (:func:`measured_cost_ratio`), and fails only on
cost is a true cost regression, counted apart.  The calibration half ran without a
baseline (its records set the rules) and is judged offline, as below.

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

Offline, ``judge`` compares the records as ``chaosmining-compare`` would:
 (``--label``: ``before``, judged
with the earlier thresholds, or ``after``), and with both, the table ``benign.md``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import re
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benign_run import BASE_CHUNKS, maps_digest  # noqa: E402
from scipy.stats import beta  # noqa: E402

from pytest_chaosmining.explainers import builtin_explainers  # noqa: E402
from pytest_chaosmining.tools.compare import compare_runs  # noqa: E402

OUT = HERE / "benign"
NAME = "candidate"
#: metrics an explainer has only where it declares completeness (run.py's)
DECLARED_ONLY = ("sign_agreement", "completeness")


def load(only: set[str] | None = None) -> tuple[dict[str, list[dict]], dict[str, list[dict]], dict[str, object]]:
    """Every explainer's records and failed tests over the chunks (``only``: those chunks),
    and the chunks' keys (by file name: a base chunk's ``<chunk>@<machine>``).  A base's
    rows are kept per machine (``base-<built-in>@<machine>``; :func:`on_machine` picks a
    machine's); a chunk run before the bases were kept per machine (the calibration half)
    is on :data:`LEGACY`."""
    records: dict[str, list[dict]] = defaultdict(list)
    failures: dict[str, list[dict]] = defaultdict(list)
    keys: dict[str, object] = {}
    for path in sorted(OUT.glob("*.json.xz")):
        chunk = json.loads(lzma.decompress(path.read_bytes()))
        name = path.name.removesuffix(".json.xz")
        if only is not None and name not in only:
            continue
        keys[name] = chunk["key"]
        machine = chunk.get("machine", LEGACY)
        at = f"@{machine}" if chunk["chunk"] in BASE_CHUNKS else ""
        for r in chunk["records"]:
            records[r["explainer"] + at].append({**r, "machine": machine})
        for f in chunk["failures"]:
            failures[f["explainer"] + at].append(f)
    return records, failures, keys


#: the machine of the chunks run before the bases were kept per machine
LEGACY = "legacy"


def on_machine(rows: dict[str, list[dict]], machine: str | None) -> dict[str, list[dict]]:
    """``rows`` with the bases run on ``machine`` under their plain names (``base-<built-in>``)."""
    view: dict[str, list[dict]] = defaultdict(list, {k: v for k, v in rows.items() if "@" not in k})
    view.update({k.split("@")[0]: v for k, v in rows.items() if machine is not None and k.endswith(f"@{machine}")})
    return view


def machine_of(name: str, records: dict[str, list[dict]]) -> str | None:
    """The machine whose bases ``name`` is judged beside: the one its chunk ran on, or for a
    chunk run before the bases were kept per machine (the calibration half, :data:`LEGACY`)
    the machine most changes ran on (:func:`most_used_machine`; the shipped drops calibrated
    from the calibration half are the same beside the bases of the Intel Xeon or the AMD EPYC
    machine, tests/test_thresholds.py)."""
    machine = next((r.get("machine") for r in records.get(name, [])), None)
    return most_used_machine(records) if machine == LEGACY else machine


def most_used_machine(records: dict[str, list[dict]]) -> str:
    """The machine most of the changes' records ran on since the bases were kept per machine
    (whose bases a table of one run uses), else :data:`LEGACY`."""
    counts = Counter(r["machine"] for k, rows in records.items() if "@" not in k for r in rows)
    counts.pop(LEGACY, None)
    return counts.most_common(1)[0][0] if counts else LEGACY


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


#: what a failure message says failed, by the words each verdict writes
KINDS = (
    ("cost", re.compile(r"(cpu_ms|peak_mem_mb) regressed")),
    ("score", re.compile(r"(?<!cpu_ms )(?<!peak_mem_mb )\b(?!cpu_ms|peak_mem_mb)\w+ regressed: ")),
    ("drift", re.compile(r"moved from the baseline|changed entirely from the baseline")),
    ("missing", re.compile(r"judged in the baseline")),
)
#: the own-merit checks of an axiom the explainer declares or every explainer owes
#: (completeness and its sign, batch consistency, target sensitivity, the truth's sign,
#: a declared equivalence): a change that breaks one beyond its tolerance is not harmless
AXIOMS = ("completeness", "sign_agreement", "batch_consistency", "target_sensitivity", "truth_sign", "equivalence")
#: a failure of an axiom's check on one of the module patterns (``completeness on the '<pattern>' network``)
PATTERN_AXIOM = re.compile(r"\b(completeness|batch consistency) on the '[^']+' network")


#: a missed bar in a failure message (``<metric> <value> < threshold``), and the drift checks' metrics among them
BAR_MISSED = re.compile(r"(\w+) -?[0-9.]+ < threshold")
DRIFT_METRICS = ("map_agreement", "sample_agreement", "size_agreement", "outline_kept", "signs_kept", "classes_kept")


def kinds(message: str) -> set[str]:
    """The baseline verdicts a failure message holds (none: a bar or own-merit check alone)."""
    return {kind for kind, pattern in KINDS if pattern.search(message)}


def reasons(message: str) -> set[str]:
    """Every reason a failure message gives: its baseline verdicts (:func:`kinds`), an
    absolute bar missed (``bar``), an axiom's own-merit check missed (``axiom``), or, where
    it names none, an ``error`` (an exception, a usage error)."""
    found = kinds(message)
    for metric in BAR_MISSED.findall(message):
        axiom = metric in AXIOMS or metric.removeprefix("pattern_") in AXIOMS  # on the module patterns too
        found.add("drift" if metric in DRIFT_METRICS else "axiom" if axiom else "bar")
    if PATTERN_AXIOM.search(message):  # a module pattern's axiom check, its value cut off the message
        found.add("axiom")
    return found or {"error"}


#: the kinds of change that can break an axiom their base declares (a coarser path rule or
#: fewer steps leave completeness's gap); any other kind failing an axiom is a false alarm
AXIOM_BREAKING_KINDS = ("path method's rule", "path method's steps")


def run_verdict(verdict: dict[str, object], kind: str) -> str:
    """How a held-out change's whole run ended against its base's baseline: ``green``,
    ``red`` (a false alarm), or counted apart as no harmless change: ``axiom`` (a change
    of a kind that can break a declared axiom, :data:`AXIOM_BREAKING_KINDS`, failed a check
    of one; a sampler's seed or a float type failing one is red) or ``cost`` (it measurably
    more than doubles its base's work and fails nothing but a cost check)."""
    failed: list[dict] = verdict["failures"]  # type: ignore[assignment]
    found = {k for f in failed for k in f["reasons"]}
    if "axiom" in found and kind in AXIOM_BREAKING_KINDS:
        return "axiom"
    if verdict.get("doubled") and found <= {"cost"}:
        return "cost"
    return "red" if failed else "green"


def work_ratio(name: str) -> float:
    """How many times its base's work a change does: IG's steps and a sampler's samples
    over 10; float64 more than twice (every tensor twice the bytes, half the SIMD lanes
    per instruction: measured 2.2 to 4.5 times the CPU time); 1 otherwise."""
    if "float64" in name:
        return 2.5
    found = re.search(
        r"^(ig-(steps|left|right|middle|trapezoid|by-hand(-trapezoid)?)|gs-samples|sg-samples)-(\d+)$", name
    )
    return int(found.group(4)) / 10 if found else 1.0


#: a gated cost's slack (the catalog's: ms of CPU time, MiB of peak memory) and the gate's default factor
COST_SLACK = {"cpu_ms": 20.0, "peak_mem_mb": 16.0}
MAX_SLOWDOWN = 2.0


def measured_cost_ratio(name: str, base: str, records: dict[str, list[dict]]) -> float:
    """How many times its base's cost a change really takes: over the suites' groups of
    cases of one model (the same network, the same work: 15 symbolic formulas, 2 vision
    or audio conditions), the largest ratio of the group's median CPU time or peak memory
    to its base's, the gate's slack allowed (a single call varies up to 4x; a group's
    median does not).  Above the gate's factor, a cost finding is a true one."""

    def groups(rows: list[dict]) -> dict[tuple[str, str, str], list[float]]:
        out: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for r in rows:
            if r["metric"] in COST_SLACK:
                out[(r["suite"], r["model"], r["metric"])].append(r["value"])
        return out

    mine, theirs = groups(records[name]), groups(records[f"base-{base}"])
    ratios = [
        statistics.median(values) / (statistics.median(theirs[g]) + COST_SLACK[g[2]] / MAX_SLOWDOWN)
        for g, values in mine.items()
        if g in theirs
    ]
    return max(ratios, default=0.0)


def live_verdict(name: str, base: str, failures: dict[str, list[dict]]) -> dict[str, object]:
    """The verdicts of ``name``'s run against its base's baseline, from the run's failed
    tests: every baseline finding, and the tests failing a bar or own-merit check its base
    passes (``bars``: what a run without a baseline fails too); ``failures``: every test
    the run failed that its base's run did not, with every reason it gives (:func:`reasons`)."""
    base_failed = {f["nodeid"] for f in renamed(failures[f"base-{base}"], f"base-{base}")}
    found, bars, every = [], [], []
    for f in renamed(failures[name], name):
        if f["nodeid"] not in base_failed:
            every.append(
                {"nodeid": f["nodeid"], "reasons": sorted(reasons(f["message"])), "message": f["message"][:600]}
            )
        verdicts = kinds(f["message"])
        if verdicts:
            found.append({"kinds": sorted(verdicts), "nodeid": f["nodeid"], "message": f["message"][:600]})
        missed = {m for m in BAR_MISSED.findall(f["message"]) if m not in DRIFT_METRICS}
        if f["nodeid"] not in base_failed and (missed or not verdicts):  # a bar or own check, without a baseline too
            bars.append({"nodeid": f["nodeid"], "message": f["message"][:300]})
    return {"name": name, "base": base, "baseline": found, "bars": bars, "failures": every}


def moved(name: str, base: str, records: dict[str, list[dict]]) -> bool:
    """Whether ``name``'s results differ from its base's anywhere (a value, a per-sample
    value, a fingerprint of maps): a change that moves nothing tests nothing."""

    def what(r: dict) -> tuple[str, str, str, object]:
        return (r["suite"], json.dumps(r["case"], sort_keys=True), r["metric"], r["model"])

    def maps(r: dict) -> object:  # a live chunk keeps its maps as a digest (benign_run.compact)
        found = r.get("maps")
        if isinstance(found, dict) and "digest" in found:
            return found["digest"]
        return maps_digest(found) if found is not None else None

    kept = ("fingerprint", "fprec", "iou", "box_share", "channel_share", "training_gain")
    mine = {what(r): (r["value"], r.get("samples"), maps(r)) for r in records[name] if r["metric"] in kept}
    theirs = {what(r): (r["value"], r.get("samples"), maps(r)) for r in records[f"base-{base}"]}
    return any(theirs.get(k) != v for k, v in mine.items())


def main(argv: list[str] | None = None) -> int:
    from benign import CALIBRATION, CHANGES
    from mutants import HARMFUL, MUTANTS, PARTIAL

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--thresholds", type=Path, default=None, help="a TOML merged over the shipped bars (offline)")
    parser.add_argument("--write", action="store_true", help="write benign-verdicts.json.xz and benign.md")
    parser.add_argument("--fresh-only", action="store_true", help="judge only the chunks of today's code")
    args = parser.parse_args(argv)
    records, failures, keys = load()
    if args.fresh_only:  # a rerun in progress: the chunks of today's code alone (never written)
        records, failures, keys = load({c for c in keys if c not in stale_chunks(keys)})
    meta = {"tier": "smoke"}
    verdicts = []
    loaded, loaded_failures = records, failures
    for name, change in CHANGES.items():
        if name not in loaded:
            continue
        machine = machine_of(name, loaded)
        records, failures = on_machine(loaded, machine), on_machine(loaded_failures, machine)
        if change.half == CALIBRATION:  # ran without a baseline: judged offline
            verdict = judge(name, change.base, records, failures, meta, args.thresholds)
        else:
            verdict = live_verdict(name, change.base, failures)
        only_cost = bool(verdict["baseline"]) and all(f["kinds"] == ["cost"] for f in verdict["baseline"])
        verdict["cost_ratio"] = round(measured_cost_ratio(name, change.base, records), 2)
        verdict["true_cost"] = only_cost and (work_ratio(name) > MAX_SLOWDOWN or verdict["cost_ratio"] > MAX_SLOWDOWN)
        verdict["moved"] = moved(name, change.base, records)
        verdict["doubled"] = work_ratio(name) > MAX_SLOWDOWN or verdict["cost_ratio"] > MAX_SLOWDOWN
        if change.half != CALIBRATION:
            verdict["run"] = run_verdict(verdict, change.kind)
        verdicts.append({**verdict, "kind": change.kind, "half": change.half, "what": change.what})
    harmful = []
    for name, mutant in MUTANTS.items():
        if mutant.kind not in (HARMFUL, PARTIAL) or f"mut-{name}" not in loaded:
            continue
        failures = on_machine(loaded_failures, machine_of(f"mut-{name}", loaded))
        verdict = live_verdict(f"mut-{name}", mutant.base, failures)
        harmful.append({**verdict, "what": mutant.what, "kind": mutant.kind, "conditions": conditions(verdict)})
    print(table({"keys": keys, "verdicts": verdicts, "harmful": harmful}))
    stale = stale_chunks(keys)
    if args.write and (stale or args.fresh_only):
        print(f"not written: {len(stale)} chunk(s) ran other code than today's ({', '.join(stale)}): rerun them "
              "(benign_run.py) first", file=sys.stderr)  # fmt: skip
        return 1
    if args.write:
        payload = {"keys": keys, "verdicts": verdicts, "harmful": harmful}
        (HERE / "benign-verdicts.json.xz").write_bytes(lzma.compress(json.dumps(payload).encode()))
        (HERE / "benign.md").write_text(table(payload))
    return 0


def conditions(verdict: dict[str, object]) -> dict[str, list[str]]:
    """Per vision and audio condition (test), the baseline verdicts its test failed on."""
    out: dict[str, list[str]] = {}
    for f in verdict["baseline"]:  # type: ignore[attr-defined]
        suite = f["nodeid"].split("/", 1)[0]
        if suite in ("vision", "audio"):
            where = f"{suite} " + f["nodeid"].split("[", 1)[1].split("-", 1)[0]
            out.setdefault(where, [])
            out[where] = sorted(set(out[where]) | set(f["kinds"]))
    return out


def stale_chunks(keys: dict[str, object]) -> list[str]:
    """The chunks a table of today's code uses whose code key is not today's (a table must
    not mix code states): every run judged against a baseline and the bases it ran
    against; the calibration half is the record the shipped bars were set on (its
    offline row says so), rerun only to recalibrate them (``benign_run.py --calibration``)."""
    from benign_run import code_key, is_live

    today = {True: code_key(True), False: code_key(False)}
    used = [chunk for chunk in keys if "@" in chunk or is_live(chunk)]  # new-style bases, live runs
    return sorted(chunk for chunk in used if keys[chunk] != today[is_live(chunk.split("@")[0])])


def run_row(label: str, chosen: list[dict]) -> str:
    """A row of the held-out whole runs: n (those counted apart left out), red runs, the
    exact bound, the reasons of the red ones, and those counted apart (cost, axiom)."""
    counted = [v for v in chosen if v["run"] in ("green", "red")]
    n, k = len(counted), sum(v["run"] == "red" for v in counted)
    by = Counter(r for v in counted if v["run"] == "red" for r in {r for f in v["failures"] for r in f["reasons"]})
    found = ", ".join(f"{b} {c}" for b, c in sorted(by.items())) or "—"
    cost, axiom = sum(v["run"] == "cost" for v in chosen), sum(v["run"] == "axiom" for v in chosen)
    return f"| {label} | {n} | {k} | {upper_bound(k, n):.3f} | {found} | {cost} | {axiom} |"


def _figure(v: dict) -> str:
    """What a change counted apart measured: the checks it failed, their values."""
    shown = "; ".join(f["message"][:160] for f in v["failures"][:2])
    return f"{v['name']} ({v['run']}; CPU time or memory {v.get('cost_ratio', 0):g} x its base's): {shown}"


def failing(v: dict) -> bool:
    """Whether a benign change's run failed against its baseline (a true cost regression apart)."""
    return bool(v["baseline"]) and not v.get("true_cost")


def _row(label: str, chosen: list[dict]) -> str:
    n, k = len(chosen), sum(failing(v) for v in chosen)
    by = Counter(kind for v in chosen if failing(v) for kind in {k for f in v["baseline"] for k in f["kinds"]})
    costs = sum(bool(v.get("true_cost")) for v in chosen)
    found = ", ".join(f"{b} {c}" for b, c in sorted(by.items())) or "—"
    bars = sum(bool(v["bars"]) for v in chosen)
    return f"| {label} | {n} | {k} | {upper_bound(k, n):.3f} | {found} | {costs} | {bars} |"


def table(payload: dict[str, object]) -> str:
    """benign.md: the benign changes' whole runs against their baselines, and the harmful mutants."""
    verdicts: list[dict] = payload["verdicts"]  # type: ignore[assignment]
    harmful: list[dict] = payload["harmful"]  # type: ignore[assignment]
    lines = [
        "# A baseline's false alarms and catches (smoke)",
        "",
        "Each benign change (benign.py) and each harmful mutant (mutants.py) ran through the judged suites of the "
        "default run (benign_run.py; chunks and code keys in `benign/`).  The held-out changes and the mutants ran "
        "**against a baseline** of their unchanged built-in (its run on the same machine, just before): each is "
        "judged as a whole run against its baseline, every finding kind counted (a score's drop, drift, CPU time "
        "and memory, a result gone).  The calibration half ran without a baseline (its records set the rules: "
        "benign_calibrate.py) and is judged offline with the plugin's compare code.  *fails*: the run failed "
        "against its baseline; *true cost*: failed on cost alone while doing more than twice its base's work (IG "
        "with more than 20 steps, a sampler with more than twice the samples, float64) or while its CPU time or "
        "peak memory, as the median over the cases of one model, really grew beyond the gate (2 × its base's + the "
        "slack: IG with 20 steps takes 2.1 times the CPU time of 10, a sampler with 20 samples 1.9 to 2.2 times "
        "on this machine), a real regression of cost; "
        "*bars*: failed a bar or own-merit check its base passes, with or without a baseline.  95 % bound: the exact "
        "(Clopper-Pearson) upper bound of the rate.",
        "",
        "| benign changes (offline) | n | fails against the baseline | 95 % bound | by | true cost | bars |",
        "|---|---|---|---|---|---|---|",
        _row(
            "calibration half (offline; the runs the shipped bars were set on)",
            [v for v in verdicts if v["half"] == "calibration" and v["moved"]],
        ),
        "",
        "**The false-alarm rate of a run.**  Each held-out change ran as a whole run against its base's "
        "baseline, registered as a library registers the method it changes (its base's declarations); the run "
        "is *red* where any of its tests failed that its base's run passed, for any reason: an absolute bar, an "
        "own-merit check, a score's drop, drift, cost, a result gone, an error.  Counted apart, with their figures "
        "below, are the changes that are no harmless change: *cost*, failed on cost alone while measurably more "
        "than doubling its base's work; *axiom*, a coarser path rule or fewer steps of a path method that "
        "failed a check of an axiom it declares (completeness's gap grows with them; any other change failing "
        "an axiom's check is red).  n: the runs counted (changes that move nothing left out).",
        "",
        "| held-out whole runs | n | red | 95 % bound | reasons of the red runs | apart: cost | apart: axiom |",
        "|---|---|---|---|---|---|---|",
    ]
    held = [v for v in verdicts if v["half"] != "calibration" and v["moved"]]
    samplers = {name for name, e in builtin_explainers().items() if e.stochastic}
    lines.append(run_row("held-out, whole runs", held))
    lines.append(run_row("deterministic methods", [v for v in held if v["base"] not in samplers]))
    lines.append(run_row("samplers", [v for v in held if v["base"] in samplers]))
    from benign import CALIBRATION, CHANGES

    calibrated = {c.kind for c in CHANGES.values() if c.half == CALIBRATION}
    lines.append(run_row("kinds never calibrated on", [v for v in held if v["kind"] not in calibrated]))
    lines += ["", "| kind (held-out) | n | red | 95 % bound | reasons | apart: cost | apart: axiom |",
              "|---|---|---|---|---|---|---|"]  # fmt: skip
    for kind in sorted({v["kind"] for v in held}):
        lines.append(
            run_row(
                kind + ("" if kind in calibrated else " (never calibrated)"), [v for v in held if v["kind"] == kind]
            )
        )
    apart = [v for v in held if v["run"] in ("cost", "axiom")]
    if apart:
        lines += ["", "Counted apart (no harmless change), with what they measured:", ""]
        lines += [f"- {_figure(v)}" for v in apart]
    still = [v["name"] for v in verdicts if not v["moved"]]
    if still:
        lines += [
            "",
            f"Left out, moving nothing (every value and fingerprint equal to the base's): {', '.join(still)}.",
        ]
    red = [v for v in held if v["run"] == "red"]
    if red:
        lines += ["", "Held-out runs that went red (false alarms):", ""]
        lines += [f"- {v['name']}: " + "; ".join(f["message"][:200] for f in v["failures"][:2]) for v in red]
    failed = [v for v in verdicts if v["half"] == "calibration" and failing(v) and v["moved"]]
    if failed:
        lines += ["", "Calibration-half changes failing against their baseline offline:", ""]
        lines += [f"- {v['name']} ({v['half']}): " + "; ".join(f["message"][:200] for f in v["baseline"][:2])
                  for v in failed]  # fmt: skip
    lines += [
        "",
        "| harmful mutant | what | bars alone | with the baseline | by a score's drop | by drift |",
        "|---|---|---|---|---|---|",
    ]
    totals: Counter[str] = Counter()
    full = [v for v in harmful if v["kind"] == "harmful"]
    for v in harmful:
        found = {k for f in v["baseline"] for k in f["kinds"]}
        row = {"bars": bool(v["bars"]), "with": bool(v["bars"] or v["baseline"]), "score": "score" in found,
               "drift": "drift" in found}  # fmt: skip
        if v["kind"] == "harmful":
            totals.update(k for k, hit in row.items() if hit)
        marks = ["caught" if row[k] else "**missed**" for k in ("bars", "with", "score", "drift")]
        label = v["name"].removeprefix("mut-") + (" (partial)" if v["kind"] != "harmful" else "")
        lines.append(f"| {label} | {v['what']} | {' | '.join(marks)} |")
    n = len(full)
    lines.append(f"| **{n} harmful (not partial)** | | **{totals['bars']} of {n}** | **{totals['with']} of {n}** | "
                 f"**{totals['score']} of {n}** | **{totals['drift']} of {n}** |")  # fmt: skip
    partial = [v for v in harmful if v["kind"] != "harmful"]
    if partial:
        lines += [
            "",
            "The partial regressions, per judged vision and audio condition (the verdicts that failed it):",
            "",
        ]
        for v in partial:
            where = v["conditions"]
            lines.append(
                f"- {v['name'].removeprefix('mut-')}: "
                + (", ".join(f"{c}: {'+'.join(k)}" for c, k in sorted(where.items())) or "no condition failed")
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
