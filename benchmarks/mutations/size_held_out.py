"""Check the ``size_agreement`` bars on the held-out benign changes (benign.py), in process.

    python benchmarks/mutations/size_held_out.py [--suites symbolic,vision,audio] [--write]

The held-out chunks under ``benign/`` keep digests of their maps, not the maps, so the
bars benign_calibrate.py set on the calibration half are checked here: every held-out
deterministic change of a built-in that promises its maps' size (IG, DeepLift: they
declare completeness) is scored as its suite scores it on every smoke case of seed 0,
beside its unchanged base, and the size of its maps compared with the base's.  ``--write``
writes ``size-held-out.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "axioms"))
OUT_JSON = HERE / "size-held-out.json"

from benign import CHANGES, HELD_OUT, explainer  # noqa: E402
from calibrate_drift import cases_of  # noqa: E402

from pytest_chaosmining.core.metrics.drift import map_agreement  # noqa: E402
from pytest_chaosmining.core.storage.cache import ModelCache  # noqa: E402
from pytest_chaosmining.core.storage.pack import ModelPack  # noqa: E402
from pytest_chaosmining.explainers import builtin_explainers  # noqa: E402
from pytest_chaosmining.suites import shipped_thresholds  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--suites", default="symbolic,vision,audio")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    builtins = builtin_explainers()
    held = [
        c for c in CHANGES.values()
        if c.half == HELD_OUT and builtins[c.base].size_promised and not builtins[c.base].stochastic
    ]  # fmt: skip
    thresholds = shipped_thresholds(None)
    found: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        cache = ModelCache(tmp, ModelPack())
        for suite in args.suites.split(","):
            for where, evaluate in cases_of(suite, cache):
                bases = {b: evaluate(explainer(f"base-{b}"))["fingerprint"] for b in {c.base for c in held}}
                for change in held:
                    maps = evaluate(explainer(change.name))["fingerprint"]
                    found[suite].append((map_agreement(maps, bases[change.base]).size, change.name, where))
                print(suite, where, flush=True)
    rows = json.loads(OUT_JSON.read_text()) if OUT_JSON.exists() and args.write else {}
    for suite, values in found.items():
        bar = thresholds.optional_metric(suite, "smoke", "size_agreement", "", "IG")
        lowest, name, where = min(values)
        below = sum(bar is not None and v < bar for v, _, _ in values)
        rows[suite] = {"records": len(values), "lowest": round(lowest, 4), "by": f"{name} on {where}", "bar": bar,
                       "below": below, "changes": len(held)}  # fmt: skip
    lines = [
        "# The maps' size bars on the held-out benign changes (smoke tier, seed 0)",
        "",
        "Every held-out deterministic change of IG and DeepLift (size_held_out.py), each against its "
        "unchanged base on every smoke case of seed 0.",
        "",
        "| suite | changes | records | lowest size_agreement | by | bar | below the bar |",
        "|---|---|---|---|---|---|---|",
        *(f"| {s} | {r['changes']} | {r['records']} | {r['lowest']:.4f} | {r['by']} | {r['bar']} | {r['below']} |"
          for s, r in sorted(rows.items())),
    ]  # fmt: skip
    print("\n".join(lines))
    if args.write:
        OUT_JSON.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
        (HERE / "size-held-out.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
