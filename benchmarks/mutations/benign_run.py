"""Run the benign changes (benign.py) and the harmful mutants (mutants.py) through the
judged suites of the default run, in resumable chunks whose compact results are
committed as they finish.

    python benchmarks/mutations/benign_run.py [--chunk-size 8] [--workers 2] [--only NAMES]

Each chunk is one ``pytest --chaosmining`` run (smoke tier; symbolic, vision, audio and
rfe: saliency is report-only at smoke) registering its explainers under their own names.
The bases (``base-<built-in>``, the unchanged built-ins) run first, as chunks of their
own, without a baseline.  The calibration half of the benign changes (``cal-NN``) runs
without a baseline too: its records set the rules (benign_calibrate.py).  The held-out
changes (``held-NN``) and the harmful mutants (``harmful-NN``, ``mut-<name>``, the partial
ones among them) run **against a baseline**: the bases' results, each base's records
copied under the name of every change of it in the chunk (without the records that
only a declaration adds, for a mutant registered as a plain callable).  So each of them
is judged as a whole run against its baseline would judge it, with every finding kind:
a score's drop, drift (with a sampler's own noise measured on the case), CPU time and
memory, a result gone.

The bases are kept per machine (``bases@<machine>.json.xz``: the CPU's model, its cores
and the stack): a chunk is judged against the bases run on its own machine, which run
first where this machine has none of today's code.  So a rerun split over sessions on
different machines gates cost throughout (a baseline of another CPU gates none) and
compares maps with maps computed on the same CPU (floats differ at about 1e-8 between
CPUs); each chunk keeps the machine it ran on.

A chunk's file under ``benign/`` (xz-compressed JSON) keeps the code key it ran under
(the plugin's fingerprint and this folder's sources; for a chunk run against a baseline,
the suites' thresholds too), every
record of its explainers with their per-sample values and the fingerprints of their maps,
and its failed tests; a later call reruns only the chunks whose key differs.
``benign_judge.py`` counts the verdicts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benign import BASES, CALIBRATION, CHANGES  # noqa: E402
from mutants import HARMFUL, MUTANTS, PARTIAL  # noqa: E402

from pytest_chaosmining.core.machine import this_machine  # noqa: E402
from pytest_chaosmining.core.results_file import read_results  # noqa: E402
from pytest_chaosmining.core.storage.derived import package_fingerprint  # noqa: E402
from pytest_chaosmining.suites import SUITES_DIR  # noqa: E402

OUT = HERE / "benign"
SUITES = "symbolic,vision,audio,rfe"
BASE_CHUNKS = ("bases", "harmful-bases")
#: metrics an explainer has only where it declares completeness
DECLARED_ONLY = ("sign_agreement", "completeness")


def code_key(live: bool) -> str:
    """What a chunk's results depend on: the package and this folder's registrations, and
    for a chunk run against a baseline (``live``) the suites' thresholds, whose baseline
    rules judge it (a run without a baseline records the same values under any of them)."""
    h = hashlib.sha256(package_fingerprint().encode())
    for path in sorted(SUITES_DIR.glob("*/thresholds.toml")) if live else ():
        h.update(path.read_bytes())
    for name in ("benign.py", "mutants.py", "conftest.py", "pytest.ini", "benign_run.py"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def machine_id() -> str:
    """This machine, as the bases are kept per: a digest of its CPU model, cores and stack."""
    machine = this_machine("cpu")
    return hashlib.sha256(json.dumps(machine, sort_keys=True).encode()).hexdigest()[:8]


def chunk_file(chunk: str, machine: str) -> Path:
    """Where ``chunk``'s results are kept: a base chunk's per machine."""
    return OUT / (f"{chunk}@{machine}.json.xz" if chunk in BASE_CHUNKS else f"{chunk}.json.xz")


def is_live(chunk: str) -> bool:
    """Whether ``chunk`` runs against a baseline (the held-out changes and the mutants)."""
    return chunk not in BASE_CHUNKS and not chunk.startswith("cal-")


def chunks(size: int) -> dict[str, list[str]]:
    """Chunk name → the explainers it registers: the bases, the calibration half, the
    held-out changes, then the harmful mutants (``mut-<name>``)."""
    harmful = [f"mut-{name}" for name, m in MUTANTS.items() if m.kind in (HARMFUL, PARTIAL)]
    found = {
        "bases": [f"base-{b}" for b in BASES],
        "harmful-bases": sorted({f"base-{m.base}" for m in MUTANTS.values() if m.kind in (HARMFUL, PARTIAL)}
                                - {f"base-{b}" for b in BASES}),
    }  # fmt: skip
    for prefix, names in (
        ("cal", [n for n, c in CHANGES.items() if c.half == CALIBRATION]),
        ("held", [n for n, c in CHANGES.items() if c.half != CALIBRATION]),
        ("harmful", harmful),
    ):
        for i in range(0, len(names), size):
            found[f"{prefix}-{i // size:02d}"] = names[i : i + size]
    return found


def base_of(name: str) -> tuple[str, bool]:
    """The built-in ``name`` changes and whether it declares what that built-in declares."""
    if name.startswith("mut-"):
        mutant = MUTANTS[name.removeprefix("mut-")]
        return mutant.base, mutant.declares
    return CHANGES[name].base, True


def maps_digest(maps: object) -> str:
    """A digest of a fingerprint of maps (equal maps, equal digests)."""
    return hashlib.sha256(json.dumps(maps).encode()).hexdigest()[:16]


def compact(payload: dict[str, object], names: list[str], live: bool = False) -> dict[str, object]:
    """The run's records of ``names`` (per-sample values included; the fingerprints of
    maps whole, or as a digest where the run judged them against a baseline, ``live``)
    and their failed tests."""
    keep = set(names)
    fields = ("suite", "model", "explainer", "case", "seed", "metric", "value", "threshold", "passed", "nodeid",
              "maps", "samples", "labels")  # fmt: skip
    records = [{k: r[k] for k in fields if k in r} for r in payload["records"] if r["explainer"] in keep]  # type: ignore[union-attr]
    if live:  # judged in the run: its maps are kept as a digest (benign_judge tells what moved by it)
        for r in records:
            if r.get("maps") is not None:
                r["maps"] = {"digest": maps_digest(r["maps"])}
    failures = [f for f in payload["failures"] if f["explainer"] in keep]  # type: ignore[union-attr]
    return {"records": records, "failures": failures, "meta": payload["meta"]}


def baseline_for(names: list[str], machine: str) -> dict[str, object]:
    """A results.json of the bases' results on ``machine``, each base's copied under every
    name of ``names`` that changes it."""
    bases: dict[str, list[dict]] = {}
    meta: dict[str, object] = {}
    for chunk in BASE_CHUNKS:
        if not chunk_file(chunk, machine).exists():  # no explainers of its own
            continue
        body = json.loads(lzma.decompress(chunk_file(chunk, machine).read_bytes()))
        meta = meta or body["meta"]
        for r in body["records"]:
            bases.setdefault(r["explainer"], []).append(r)
    records = []
    for name in names:
        base, declares = base_of(name)
        for r in bases[f"base-{base}"]:
            if not declares and r["metric"] in DECLARED_ONLY:
                continue
            nodeid = re.sub(rf"-base-{re.escape(base)}-s(\d+)\]", rf"-{name}-s\1]", r["nodeid"])
            records.append({**r, "explainer": name, "nodeid": nodeid})
    return {"meta": {k: v for k, v in meta.items() if k != "baseline"}, "records": records}


def current(chunk: str, machine: str) -> bool:
    """Whether ``chunk``'s file holds a run of today's code (a base chunk's: on ``machine``)."""
    target = chunk_file(chunk, machine)
    return target.exists() and json.loads(lzma.decompress(target.read_bytes())).get("key") == code_key(is_live(chunk))


def run_chunk(name: str, names: list[str], workers: int, every: dict[str, list[str]]) -> None:
    live = is_live(name)
    key = code_key(live)
    machine = machine_id()
    target = chunk_file(name, machine)
    if current(name, machine) or not names:  # a chunk without explainers (every mutant's base a base's)
        return
    if name not in BASE_CHUNKS:  # judged against (or, offline, beside) the bases of this machine
        for chunk in BASE_CHUNKS:
            if not current(chunk, machine):
                run_chunk(chunk, every[chunk], workers, every)
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "pytest", "--chaosmining", f"--chaosmining-explainers={','.join(names)}",
                f"--chaosmining-suites={SUITES}", f"--chaosmining-report={tmp}/report", "-q", "-rN", "--no-header",
                "-p", "no:randomly"]  # fmt: skip
        if live:
            baseline = Path(tmp) / "baseline.json"
            baseline.write_text(json.dumps(baseline_for(names, machine)))
            argv.append(f"--chaosmining-baseline={baseline}")
        if workers > 1:
            argv += ["-n", str(workers), "--dist", "loadgroup"]
        start = time.perf_counter()
        proc = subprocess.run(argv, cwd=HERE, env={**os.environ, "CHAOSMINING_BENIGN": ",".join(names)},
                              capture_output=True, text=True, timeout=3600)  # fmt: skip
        results = Path(tmp) / "report" / "results.json"
        if not results.exists():
            raise RuntimeError(
                f"{name}: no results (exit {proc.returncode}): {proc.stdout[-3000:]}{proc.stderr[-2000:]}"
            )
        body = compact(read_results(results, samples=True), names, live)
    body = {"key": key, "chunk": name, "machine": machine, "explainers": names, "against_baseline": live,
            "seconds": round(time.perf_counter() - start, 1), **body}  # fmt: skip
    OUT.mkdir(exist_ok=True)
    tmp_target = target.with_suffix(".tmp")
    tmp_target.write_bytes(lzma.compress(json.dumps(body, allow_nan=False).encode()))
    tmp_target.replace(target)
    print(f"{name}: {len(names)} explainers, {body['seconds']} s, exit {proc.returncode}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunk-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="a comma list of chunk names or prefixes (cal, held, harmful)")
    parser.add_argument(
        "--calibration",
        action="store_true",
        help="rerun the calibration half too (it set the shipped bars: rerun it only to recalibrate them)",
    )
    args = parser.parse_args(argv)
    wanted = [w for w in args.only.split(",") if w]
    every = chunks(args.chunk_size)
    for name, names in every.items():
        if wanted and not any(name == w or name.startswith(f"{w}-") for w in wanted):
            continue
        if name.startswith("cal-") and not args.calibration:  # the runs the shipped bars were set on
            continue
        run_chunk(name, names, args.workers, every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
