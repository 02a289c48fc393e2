"""Run the benign changes (benign.py) through the judged suites of the default run, in
resumable chunks whose compact results are committed as they finish.

    python benchmarks/mutations/benign_run.py [--chunk-size 8] [--workers 2] [--only NAMES]

Each chunk is one ``pytest --chaosmining`` run (smoke tier; symbolic, vision, audio and
rfe: saliency is report-only at smoke) registering its changes under their own names;
the bases (``base-<built-in>``) run once, as a chunk of their own; the mutation
benchmark's harmful mutants (mutants.py) run the same way, as ``mut-<name>``.  A chunk's file under
``benign/`` (xz-compressed JSON) keeps the code key it ran under (the plugin's fingerprint and this folder's
sources) and every judged record of its explainers with their per-sample values, the
fingerprints of their maps and their failed tests; a later call reruns only the chunks
whose key differs.  ``benign_judge.py`` judges them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benign import BASES, CHANGES  # noqa: E402
from mutants import HARMFUL, MUTANTS  # noqa: E402

from pytest_chaosmining.core.storage.derived import package_fingerprint  # noqa: E402

OUT = HERE / "benign"
SUITES = "symbolic,vision,audio,rfe"


def code_key() -> str:
    h = hashlib.sha256(package_fingerprint().encode())
    for name in ("benign.py", "mutants.py", "conftest.py", "pytest.ini"):
        h.update((HERE / name).read_bytes())
    return h.hexdigest()[:16]


def chunks(size: int) -> dict[str, list[str]]:
    """Chunk name → the explainers it registers: the bases, the benign changes, then the
    mutation benchmark's harmful mutants (``mut-<name>``) and the bases only they have."""
    names = list(CHANGES)
    found = {"bases": [f"base-{b}" for b in BASES]}
    for i in range(0, len(names), size):
        found[f"chunk-{i // size:02d}"] = names[i : i + size]
    harmful = [f"mut-{name}" for name, m in MUTANTS.items() if m.kind == HARMFUL]
    found["harmful-bases"] = sorted(
        {f"base-{m.base}" for m in MUTANTS.values() if m.kind == HARMFUL} - set(found["bases"])
    )
    for i in range(0, len(harmful), size):
        found[f"harmful-{i // size:02d}"] = harmful[i : i + size]
    return found


def compact(payload: dict[str, object], names: list[str]) -> dict[str, object]:
    """The run's records of ``names`` that a baseline judges or pairs (judged records,
    fingerprints), and their failed tests."""
    keep = set(names)
    records = [
        {k: r[k] for k in ("suite", "model", "explainer", "case", "seed", "metric", "value", "threshold", "passed",
                           "nodeid", "maps", "samples") if k in r}
        for r in payload["records"]  # type: ignore[union-attr]
        if r["explainer"] in keep and (r["threshold"] is not None or r["metric"] == "fingerprint")
    ]  # fmt: skip
    failures = [f for f in payload["failures"] if f["explainer"] in keep]  # type: ignore[union-attr]
    return {"records": records, "failures": failures, "meta": payload["meta"]}


def run_chunk(name: str, names: list[str], workers: int, key: str) -> None:
    target = OUT / f"{name}.json.xz"
    if target.exists() and json.loads(lzma.decompress(target.read_bytes())).get("key") == key:
        return
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "pytest", "--chaosmining", f"--chaosmining-explainers={','.join(names)}",
                f"--chaosmining-suites={SUITES}", f"--chaosmining-report={tmp}/report", "-q", "-rN", "--no-header",
                "-p", "no:randomly"]  # fmt: skip
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
        body = compact(json.loads(results.read_text()), names)
    body = {"key": key, "chunk": name, "explainers": names, "seconds": round(time.perf_counter() - start, 1), **body}
    OUT.mkdir(exist_ok=True)
    tmp_target = target.with_suffix(".tmp")
    tmp_target.write_bytes(lzma.compress(json.dumps(body, allow_nan=False).encode()))
    tmp_target.replace(target)
    print(f"{name}: {len(names)} explainers, {body['seconds']} s, exit {proc.returncode}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chunk-size", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default="", help="a comma list of chunk names")
    args = parser.parse_args(argv)
    key = code_key()
    for name, names in chunks(args.chunk_size).items():
        if args.only and name not in args.only.split(","):
            continue
        run_chunk(name, names, args.workers, key)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
