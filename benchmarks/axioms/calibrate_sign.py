"""Calibrate the completeness sign check (``sign_agreement``) of the symbolic suite.

    python benchmarks/axioms/calibrate_sign.py run 100-111 300-309   # resumable: one file per seed
    python benchmarks/axioms/calibrate_sign.py bars [--write]

``run`` trains the smoke tier's models of each seed (the model cache in
``--cache``) and scores every judged formula as the suite does: IG and DL (the
built-ins that declare completeness), and two maps that must fail, the random
control and IG with each sample given its neighbour's map (a batch-order bug).
Each seed's values go to ``runs/seed-<n>.json`` as it finishes.

``bars`` sets each built-in's bar from the calibration seeds (100-111) as the
lower one-sided normal tolerance bound x̄ − k·s over its (seed, formula) values
(coverage 0.999, confidence 0.90; CALIBRATION.md), rounded down to 0.05 and at
most 0.9 (IG's values are 1.0 on every calibration seed: its bound is degenerate,
and a correct explainer's rare miss on a sample near f(x) = f(0) must not fail
it; 0.9 still sits far above the 0.5 of a map that ignores the sample); the
default bar (an explainer of a user's that declares completeness) is the lower of
the two.  It checks that every bar sits above the upper bounds of the two maps
that must fail, and counts the failures of the bars on the held-out seeds
(300-309), which the calibration never saw.  ``--write`` stores the bars as
``[symbolic.smoke.sign_agreement]`` in the suite's thresholds.toml.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from pathlib import Path

HERE = Path(__file__).parent
RUNS = HERE / "runs"
THRESHOLDS = HERE.parents[1] / "src" / "pytest_chaosmining" / "suites" / "symbolic" / "thresholds.toml"
CALIBRATION_SEEDS, HELD_OUT_SEEDS = range(100, 112), range(300, 310)
BUILTINS, MUST_FAIL = ("IG", "DL"), ("random", "IG batch-rolled")
COVERAGE = 0.999
#: the highest bar: above it a sign agreement tells nothing more about a flipped or sample-blind map
CAP = 0.9


def _seeds(spec: str) -> range:
    start, _, end = spec.partition("-")
    return range(int(start), int(end or start) + 1)


def run_seed(seed: int, cache_dir: Path) -> dict[str, object]:
    """Every formula's sign agreements on ``seed``'s smoke models."""
    import numpy as np
    import torch

    from pytest_chaosmining.core.metrics.axioms import output_change, sign_agreement
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.storage.pack import ModelPack
    from pytest_chaosmining.explainers import attribute, builtin_explainers
    from pytest_chaosmining.explainers.context import tabular_context
    from pytest_chaosmining.testbeds.formulas.cases import plan_cases
    from pytest_chaosmining.testbeds.formulas.scoring import evaluate
    from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
    from pytest_chaosmining.testbeds.formulas.training import trained_model

    device, explainers = torch.device("cpu"), builtin_explainers()
    cache = ModelCache(cache_dir, ModelPack())
    rows = []
    for case in plan_cases(SYMBOLIC["smoke"], range(seed, seed + 1)):
        trained = trained_model(case, cache, device)
        row: dict[str, object] = {"formula": case.formula, "uscore": trained.uscore}
        for name in BUILTINS:
            row[name] = evaluate(trained, explainers[name], device).get("sign_agreement")
        inputs = torch.from_numpy(trained.data.x_test)
        change = output_change(trained.model, inputs, 0, torch.zeros_like(inputs))
        context = tabular_context("symbolic", trained.data.x_train, device)
        ig = attribute(explainers["IG"], trained.model, inputs, 0, context).detach().double().sum(1).numpy()
        noise = attribute(explainers["random"], trained.model, inputs, 0, context).detach().double().sum(1).numpy()
        row["IG batch-rolled"] = sign_agreement(np.roll(ig, 1), change)
        row["random"] = sign_agreement(noise, change)
        rows.append(row)
    return {"seed": seed, "tier": "smoke", "rows": rows}


def values(seeds: range, name: str) -> list[float]:
    """``name``'s judged values (formulas whose outputs rose and fell) on ``seeds``."""
    out = []
    for seed in seeds:
        path = RUNS / f"seed-{seed}.json"
        if path.exists():
            out += [float(r[name]) for r in json.loads(path.read_text())["rows"] if r[name] is not None]
    return out


def bars() -> dict[str, object]:
    """The bars, the bounds of the maps that must fail, and the held-out counts."""
    from pytest_chaosmining.tools.calibrate import CONFIDENCE, tolerance_factor

    found: dict[str, object] = {"coverage": COVERAGE, "confidence": CONFIDENCE, "explainers": {}, "must_fail": {}}
    for name in BUILTINS:
        cal = values(CALIBRATION_SEEDS, name)
        k = tolerance_factor(len(cal), COVERAGE, CONFIDENCE)
        mean, sd = statistics.fmean(cal), statistics.stdev(cal)
        bar = min(math.floor((mean - k * sd) * 20) / 20, CAP)
        held = values(HELD_OUT_SEEDS, name)
        found["explainers"][name] = {  # type: ignore[index]
            "n": len(cal), "mean": round(mean, 4), "sd": round(sd, 4), "k": round(k, 3), "min": min(cal),
            "bar": bar, "held_out_n": len(held), "held_out_min": min(held, default=None),
            "held_out_failed": sum(v < bar for v in held),
        }  # fmt: skip
    default = min(e["bar"] for e in found["explainers"].values())  # type: ignore[union-attr]
    found["default"] = default
    for name in MUST_FAIL:
        seen = values(CALIBRATION_SEEDS, name) + values(HELD_OUT_SEEDS, name)
        k = tolerance_factor(len(seen), COVERAGE, CONFIDENCE)
        upper = statistics.fmean(seen) + k * statistics.stdev(seen)
        found["must_fail"][name] = {  # type: ignore[index]
            "n": len(seen),
            "max": max(seen),
            "upper_bound": round(upper, 4),
            "passed_default": sum(v >= default for v in seen),
        }
    return found


def write(found: dict[str, object]) -> None:
    """Store the bars as ``[symbolic.smoke.sign_agreement]`` (and per built-in) in thresholds.toml."""
    header = "[symbolic.smoke.sign_agreement]"
    block = ["# calibrated by benchmarks/axioms/calibrate_sign.py (sign_agreement.md)", header]
    block += [f"default = {found['default']}", ""]
    for name, entry in found["explainers"].items():  # type: ignore[union-attr]
        block += [f"[symbolic.smoke.sign_agreement.explainer.{name}]", f"default = {entry['bar']}", ""]
    text = THRESHOLDS.read_text()
    pattern = re.compile(
        r"# calibrated by benchmarks/axioms/calibrate_sign\.py[^\n]*\n(?:\[symbolic\.smoke\.sign_agreement[^\n]*\n"
        r"(?:[^\[\n][^\n]*\n|\n)*)+"
    )
    text = pattern.sub("", text).rstrip("\n") + "\n\n" + "\n".join(block)
    THRESHOLDS.write_text(text.rstrip("\n") + "\n")


def report(found: dict[str, object]) -> str:
    lines = [
        "# Completeness sign check: calibration",
        "",
        "`sign_agreement` (symbolic suite, smoke): the balanced agreement of the sign of each sample's",
        "summed attributions with the sign of f(x) − f(0), judged for explainers that declare completeness.",
        f"Bars: x̄ − k·s over the (seed, formula) values of seeds {CALIBRATION_SEEDS.start}-{CALIBRATION_SEEDS.stop - 1}"
        f" (coverage {COVERAGE}, confidence {found['confidence']}), rounded down to 0.05, at most {CAP}; held-out seeds"
        f" {HELD_OUT_SEEDS.start}-{HELD_OUT_SEEDS.stop - 1} were never used to set them.",
        "",
        "| explainer | values | mean | sd | k | min | bar | held-out values | held-out min | held-out failed |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, e in found["explainers"].items():  # type: ignore[union-attr]
        lines.append(
            f"| {name} | {e['n']} | {e['mean']} | {e['sd']} | {e['k']} | {e['min']:.3f} | {e['bar']} | "
            f"{e['held_out_n']} | {e['held_out_min']:.3f} | {e['held_out_failed']} |"
        )
    lines += [
        "",
        f"Default bar (an explainer of a user's that declares completeness): {found['default']}.",
        "",
        "Maps that must fail (all seeds): upper tolerance bound x̄ + k·s against the default bar.",
        "",
        "| map | values | max | upper bound | passed the default bar |",
        "|---|---|---|---|---|",
    ]
    for name, e in found["must_fail"].items():  # type: ignore[union-attr]
        lines.append(f"| {name} | {e['n']} | {e['max']:.3f} | {e['upper_bound']} | {e['passed_default']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="score seeds (resumable: a seed with a file is skipped)")
    run.add_argument("seeds", nargs="+", help="seed ranges such as 100-111")
    run.add_argument("--cache", type=Path, default=Path(".chaosmining-calibration-cache"))
    out = sub.add_parser("bars", help="set the bars and check them on the held-out seeds")
    out.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "run":
        RUNS.mkdir(exist_ok=True)
        for spec in args.seeds:
            for seed in _seeds(spec):
                path = RUNS / f"seed-{seed}.json"
                if not path.exists():
                    path.write_text(json.dumps(run_seed(seed, args.cache), indent=1) + "\n")
                    print(f"seed {seed} done", flush=True)
        return 0
    found = bars()
    (HERE / "sign_agreement.json").write_text(json.dumps(found, indent=1) + "\n")
    (HERE / "sign_agreement.md").write_text(report(found))
    print(report(found))
    if args.write:
        write(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
