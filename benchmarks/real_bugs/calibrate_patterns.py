"""Calibrate the vision suite's ``pattern_completeness`` bars over the module-pattern
networks' initialisations (:mod:`pytest_chaosmining.suite_kit.module_patterns`).

    python benchmarks/real_bugs/calibrate_patterns.py run [--cache DIR]    # resumable: one file per seed
    python benchmarks/real_bugs/calibrate_patterns.py bars [--write]

``run`` measures, as the suite does (:func:`~pytest_chaosmining.suite_kit.module_rules.measured_patterns`:
the smoke tier's vision probe images, each pattern's network initialised under a seed),
the built-ins that declare completeness (DL, IG) and maps that must fail declared as if
they were complete (the random control, model-free maps, IG with one step, IG of the
next class, IG sign-flipped), on the calibration seeds (100-111) and the held-out seeds
(300-311), never the seed the suite runs (0).  Each seed's values go to
``pattern_runs/patterns-<n>.json``.

``bars`` sets each built-in's bar as the lower one-sided normal tolerance bound
x̄ − k·s (coverage 0.999, confidence 0.90) over its values on every pattern and
calibration seed, capped at what completeness promises (0.95) and rounded down to 0.05;
a pattern on which a known defect of its library makes it fail
(:mod:`pytest_chaosmining.explainers.builtin_limitations`) keeps the promise as its bar and gets a
floor, the bound over its defective values (a raise scores −1, the floor then −1).  The
shared bar (registered explainers) is the lowest of the built-ins' bars without their
defective patterns.  It counts the failures on the held-out seeds and checks that every
map that must fail stays below the shared bar on every pattern.  ``--write`` stores the
bars in the vision suite's thresholds.toml and prints the floors.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
from pathlib import Path

HERE = Path(__file__).parent
RUNS = HERE / "pattern_runs"
THRESHOLDS = HERE.parents[1] / "src" / "pytest_chaosmining" / "suites" / "vision" / "thresholds.toml"
CALIBRATION_SEEDS, HELD_OUT_SEEDS = range(100, 112), range(300, 312)
BUILTINS = ("DL", "IG")
COVERAGE, CAP, STEP = 0.999, 0.95, 0.05
METRIC = "pattern_completeness"
MARK = "# calibrated by benchmarks/real_bugs/calibrate_patterns.py"


def _must_fail() -> dict[str, object]:
    import torch
    from captum.attr import IntegratedGradients

    from pytest_chaosmining.explainers import builtin_explainers, cheats

    def one_step(model: torch.nn.Module, inputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return IntegratedGradients(model).attribute(inputs, target=target, n_steps=1)

    def flipped(model: torch.nn.Module, inputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return -IntegratedGradients(model).attribute(inputs, target=target, n_steps=16)

    def next_class(model: torch.nn.Module, inputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return IntegratedGradients(model).attribute(inputs, target=(target + 1) % 10, n_steps=16)

    return {
        "random": builtin_explainers()["random"].method,
        "input_magnitude": cheats.input_magnitude,
        "centre": cheats.centre,
        "constant": cheats.constant,
        "IG with 1 step": one_step,
        "IG sign-flipped": flipped,
        "IG of the next class": next_class,
    }


def run_seed(seed: int, cache_dir: Path) -> dict[str, object]:
    """Every pattern's completeness of the built-ins and the must-fail maps on ``seed``'s networks."""
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.storage.pack import ModelPack
    from pytest_chaosmining.explainers import Explainer, builtin_explainers
    from pytest_chaosmining.suite_kit.merit import EFFECT_SAMPLES
    from pytest_chaosmining.suite_kit.module_rules import measured_patterns
    from pytest_chaosmining.testbeds.digits.bound import DIGIT_MODELS

    torch.set_num_threads(1)
    device, builtins = torch.device("cpu"), builtin_explainers()
    cache = ModelCache(cache_dir, ModelPack())
    case = DIGIT_MODELS.plan_cases(DIGIT_MODELS.tiers["smoke"], range(0, 1))[0]
    trained = DIGIT_MODELS.scoring.trained_model(case, cache, device)
    probe = DIGIT_MODELS.probe(trained, EFFECT_SAMPLES)
    explainers = {name: builtins[name] for name in BUILTINS}
    explainers |= {name: Explainer(name, method, completeness=True) for name, method in _must_fail().items()}
    return {"seed": seed, "values": {name: measured_patterns(x, probe, seed) for name, x in explainers.items()}}


def _values(seeds: range, explainer: str) -> dict[str, list[float]]:
    """Per pattern, ``explainer``'s completeness on ``seeds`` (a raise: −1)."""
    found: dict[str, list[float]] = {}
    for seed in seeds:
        path = RUNS / f"patterns-{seed}.json"
        if not path.exists():
            continue
        for pattern, got in json.loads(path.read_text())["values"].get(explainer, {}).items():
            if "not_applicable" not in got:
                found.setdefault(pattern, []).append(float(got.get("completeness", -1.0)))
    return found


def bars() -> dict[str, object]:
    """The bars, floors, held-out counts and the must-fail maps' values."""
    from pytest_chaosmining.explainers.builtin_limitations import builtin_limitation
    from pytest_chaosmining.tools.calibrate import CONFIDENCE, tolerance_factor

    def bound(values: list[float]) -> float:
        k = tolerance_factor(len(values), COVERAGE, CONFIDENCE)
        sd = statistics.stdev(values) if len(set(values)) > 1 else 0.0
        return round(min(math.floor((statistics.fmean(values) - k * sd) / STEP) * STEP, CAP), 4)

    found: dict[str, object] = {"coverage": COVERAGE, "confidence": CONFIDENCE, "explainers": {}, "must_fail": {}}
    for name in BUILTINS:
        cal, held = _values(CALIBRATION_SEEDS, name), _values(HELD_OUT_SEEDS, name)
        defective = {pattern for pattern in cal if builtin_limitation(name, "vision", METRIC, pattern) is not None}
        sound = [v for pattern, vs in cal.items() if pattern not in defective for v in vs]
        bar = CAP if defective else bound(sound)  # a defect's built-in keeps the promise (held strictly)
        floors = {pattern: bound(cal[pattern]) for pattern in sorted(defective)}
        found["explainers"][name] = {  # type: ignore[index]
            "n": len(sound), "mean": round(statistics.fmean(sound), 5), "min": round(min(sound), 5), "bar": bar,
            "held_out_n": sum(len(vs) for p, vs in held.items() if p not in defective),
            "held_out_min": round(min(v for p, vs in held.items() if p not in defective for v in vs), 5),
            "held_out_failed": sum(v < bar for p, vs in held.items() if p not in defective for v in vs),
            "defects": {
                pattern: {"floor": floors[pattern], "max": round(max(cal[pattern]), 5),
                          "held_out_below_floor": sum(v < floors[pattern] for v in held.get(pattern, [])),
                          "held_out_at_promise": sum(v >= CAP for v in held.get(pattern, []))}
                for pattern in sorted(defective)
            },
        }  # fmt: skip
    default = min(e["bar"] for e in found["explainers"].values())  # type: ignore[union-attr]
    found["default"] = default
    for name in _must_fail():
        seen = _values(CALIBRATION_SEEDS, name)
        for pattern, vs in _values(HELD_OUT_SEEDS, name).items():
            seen.setdefault(pattern, []).extend(vs)
        found["must_fail"][name] = {  # type: ignore[index]
            pattern: {"n": len(vs), "max": round(max(vs), 5), "passed_default": sum(v >= default for v in vs)}
            for pattern, vs in sorted(seen.items())
        }
    return found


def report(found: dict[str, object]) -> str:
    lines = [
        "# Completeness on the module-pattern networks: calibration",
        "",
        "`python benchmarks/real_bugs/calibrate_patterns.py bars`: calibration seeds "
        f"{CALIBRATION_SEEDS.start}-{CALIBRATION_SEEDS.stop - 1}, held out {HELD_OUT_SEEDS.start}-"
        f"{HELD_OUT_SEEDS.stop - 1} (the networks' initialisations; the suite runs seed 0).",
        f"Shared bar (registered explainers): **{found['default']}**.",
        "",
        "| explainer | values (sound patterns) | mean | min | bar | held-out values | held-out min | failed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, e in found["explainers"].items():  # type: ignore[union-attr]
        lines.append(
            f"| {name} | {e['n']} | {e['mean']:.4f} | {e['min']:.4f} | {e['bar']} | {e['held_out_n']} | "
            f"{e['held_out_min']:.4f} | {e['held_out_failed']} |"
        )
    lines += ["", "Known defects (the bar stays at the promise; the floor is the bound over the defective values):", ""]
    lines += [
        "| explainer | pattern | floor | max | held-out below floor | held-out at promise |",
        "|---|---|---|---|---|---|",
    ]
    for name, e in found["explainers"].items():  # type: ignore[union-attr]
        for pattern, d in e["defects"].items():
            lines.append(
                f"| {name} | {pattern} | {d['floor']} | {d['max']:.4f} | {d['held_out_below_floor']} | "
                f"{d['held_out_at_promise']} |"
            )
    lines += ["", "Maps that must fail (declared complete; every seed):", ""]
    lines += ["| map | pattern | n | max | passed the shared bar |", "|---|---|---|---|---|"]
    for name, per in found["must_fail"].items():  # type: ignore[union-attr]
        for pattern, d in per.items():
            lines.append(f"| {name} | {pattern} | {d['n']} | {d['max']:.4f} | {d['passed_default']} |")
    return "\n".join(lines) + "\n"


def write(found: dict[str, object]) -> None:
    """Store the bars as ``[vision.smoke.pattern_completeness]`` in the vision suite's thresholds.toml."""
    block = [f"{MARK} (patterns_calibration.md)", f"[vision.smoke.{METRIC}]", f"default = {found['default']}", ""]
    for name, e in found["explainers"].items():  # type: ignore[union-attr]
        block += [f"[vision.smoke.{METRIC}.explainer.{name}]", f"default = {e['bar']}", ""]
    text = THRESHOLDS.read_text()
    pattern = re.compile(
        re.escape(MARK)
        + r"[^\n]*\n"
        + rf"\[vision\.smoke\.{METRIC}\][^\n]*\n(?:(?:[^\[\n#][^\n]*|\[vision\.smoke\.{METRIC}\.[^\n]*)?\n)*"
    )
    text = pattern.sub("", text).rstrip("\n") + "\n\n" + "\n".join(block)
    THRESHOLDS.write_text(text.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "pytest-chaosmining-calibration")
    sub.add_parser("bars").add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "run":
        RUNS.mkdir(exist_ok=True)
        for seed in [*CALIBRATION_SEEDS, *HELD_OUT_SEEDS]:
            path = RUNS / f"patterns-{seed}.json"
            if not path.exists():
                path.write_text(json.dumps(run_seed(seed, args.cache), indent=1, sort_keys=True) + "\n")
                print(f"seed {seed} done", flush=True)
        return 0
    found = bars()
    (HERE / "patterns_calibration.json").write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    text = report(found)
    (HERE / "patterns_calibration.md").write_text(text)
    print(text)
    if args.write:
        write(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
