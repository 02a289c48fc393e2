"""Calibrate the drift check (``map_agreement``) of the symbolic, vision and audio suites.

    python benchmarks/axioms/calibrate_drift.py [--write]

A correct explainer's maps on the shipped seed-0 models are the same from run to
run and move only by float rounding between machines (about 1e-8).  A benign
change of its code moves them a little: the deterministic changes of
``benchmarks/mutations/mutants.py``'s ``CALIBRATION_CHANGES`` (IG with 16 and 20
steps, by the trapezoid rule, in internal batches of 7; DeepLift and saliency in
float64; the reseeded SmoothGrad and GradientShap are left out: reseeding a
stochastic method changes its maps, and the drift check says so).  For each
suite, every change is scored as the suite scores it against its unchanged
built-in on every smoke case of seed 0, and the bar is the lowest agreement
seen minus the same again (``1 − 2·(1 − min)``), rounded down to 0.001, at most
0.999.  The benchmark's benign mutants and a small drift (each position
reweighted in [0.7, 1.3]) are scored too, for the record: they set nothing.
``--write`` stores the bars as ``[<suite>.smoke.map_agreement]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "mutations"))
SUITES_DIR = HERE.parents[1] / "src" / "pytest_chaosmining" / "suites"
DETERMINISTIC = (
    "cal_ig_20_steps", "cal_ig_16_steps", "cal_ig_trapezoid", "cal_ig_batch_7", "cal_dl_float64", "cal_sa_float64",
)  # fmt: skip
FOR_THE_RECORD = (
    "ig_scaled", "ig_per_sample_normalised", "ig_float64", "ig_tiny_noise", "ig_50_steps", "ig_small_drift",
)  # fmt: skip
CAP = 0.999


def cases_of(suite: str, cache):  # noqa: ANN001, ANN201 - a script
    """(case, trained model, evaluate(explainer)) of every smoke case of seed 0."""
    import torch

    device = torch.device("cpu")
    if suite == "symbolic":
        from pytest_chaosmining.testbeds.formulas.cases import plan_cases
        from pytest_chaosmining.testbeds.formulas.scoring import evaluate
        from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
        from pytest_chaosmining.testbeds.formulas.training import trained_model

        for case in plan_cases(SYMBOLIC["smoke"], 1):
            trained = trained_model(case, cache, device)
            yield f"f{case.formula:02d}", lambda e, t=trained: evaluate(t, e, device)
        return
    if suite == "vision":
        from pytest_chaosmining.testbeds.digits.cases import plan_cases
        from pytest_chaosmining.testbeds.digits.scoring import evaluate
        from pytest_chaosmining.testbeds.digits.tiers import VISION as TIERS
        from pytest_chaosmining.testbeds.digits.training import trained_model
    else:
        from pytest_chaosmining.testbeds.audio.cases import plan_cases
        from pytest_chaosmining.testbeds.audio.scoring import evaluate, trained_model
        from pytest_chaosmining.testbeds.audio.tiers import AUDIO as TIERS
    tier = TIERS["smoke"]
    sizes = dataclasses.replace(tier.explained, n_check=1)
    for case in plan_cases(tier, 1):
        trained = trained_model(case, cache, device)
        yield case.id, lambda e, t=trained: evaluate(t, e, device, sizes)


def measure() -> dict[str, dict[str, dict[str, float]]]:
    """suite → change → case → agreement with the unchanged built-in."""
    import tempfile

    from mutants import CALIBRATION_CHANGES, MUTANTS

    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.storage.pack import ModelPack
    from pytest_chaosmining.explainers import Explainer, builtin_explainers

    builtins = builtin_explainers()
    changes = {**{n: CALIBRATION_CHANGES[n] for n in DETERMINISTIC}, **{n: MUTANTS[n] for n in FOR_THE_RECORD}}
    found: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = ModelCache(tmp, ModelPack())
        for suite in ("symbolic", "vision", "audio"):
            found[suite] = {name: {} for name in changes}
            for where, evaluate in cases_of(suite, cache):
                base = {name: evaluate(builtins[name])["fingerprint"] for name in {c.base for c in changes.values()}}
                for name, change in changes.items():
                    maps = evaluate(Explainer(name, change.method))["fingerprint"]
                    found[suite][name][where] = map_agreement(maps, base[change.base]).mean
                print(suite, where, flush=True)
    return found


def bars(found: dict[str, dict[str, dict[str, float]]]) -> dict[str, float]:
    """suite → bar: ``1 − 2·(1 − lowest agreement of a deterministic change)``, rounded down, at most CAP."""
    out = {}
    for suite, changes in found.items():
        low = min(v for name in DETERMINISTIC for v in changes[name].values())
        out[suite] = min(math.floor((1 - 2 * (1 - low)) * 1000) / 1000, CAP)
    return out


def write(found_bars: dict[str, float]) -> None:
    for suite, bar in found_bars.items():
        path = SUITES_DIR / suite / "thresholds.toml"
        header = f"[{suite}.smoke.map_agreement]"
        text = re.sub(
            r"# calibrated by benchmarks/axioms/calibrate_drift\.py[^\n]*\n" + re.escape(header) + r"\n[^\[]*",
            "",
            path.read_text(),
        )
        block = f"# calibrated by benchmarks/axioms/calibrate_drift.py (drift.md)\n{header}\ndefault = {bar}\n"
        path.write_text(text.rstrip("\n") + "\n\n" + block)


def report(found: dict[str, dict[str, dict[str, float]]], found_bars: dict[str, float]) -> str:
    lines = [
        "# Drift check: calibration",
        "",
        "`map_agreement`: cosine similarity of the per-feature |attribution| masses of the first 4",
        "explained samples against the baseline's, averaged; lowest value over the smoke cases of seed 0.",
        "Bars: 1 − 2·(1 − the lowest agreement of a deterministic benign change), rounded down to 0.001,"
        f" at most {CAP}.",
        "",
        "| change | set the bar | " + " | ".join(found) + " |",
        "|---|---|" + "---|" * len(found),
    ]
    for name in (*DETERMINISTIC, *FOR_THE_RECORD):
        cells = [f"{min(found[s][name].values()):.5f}" for s in found]
        lines.append(f"| {name} | {'yes' if name in DETERMINISTIC else 'no'} | " + " | ".join(cells) + " |")
    lines.append("| **bar** | | " + " | ".join(str(found_bars[s]) for s in found) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    found = measure()
    found_bars = bars(found)
    (HERE / "drift.json").write_text(json.dumps({"bars": found_bars, "agreement": found}, indent=1) + "\n")
    (HERE / "drift.md").write_text(report(found, found_bars))
    print(report(found, found_bars))
    if args.write:
        write(found_bars)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
