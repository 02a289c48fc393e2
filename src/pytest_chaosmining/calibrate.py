"""Derive thresholds from measured runs: ``python -m pytest_chaosmining.calibrate``.

Procedure (the one the shipped ``thresholds.toml`` was made with):

1. Run the tier with more seeds than it uses, e.g.
   ``pytest --chaosmining --chaosmining-tier ci --chaosmining-seeds 4 --chaosmining-report cal``.
2. ``python -m pytest_chaosmining.calibrate cal/results.json --margin 0.05``.

For every built-in explainer and formula the FPrec threshold is the lowest
value seen over the seeds minus the margin, rounded down to 0.01; the
per-formula ``default`` (used for explainers without their own entry, i.e. user
explainers) is the lowest built-in threshold: a new explainer must do at least
as well as the weakest built-in.  The quality gate is the lowest prediction
UScore minus twice the margin.  Every threshold is then checked against the
random control: chance FPrec is k / n_features, and a threshold that is not at
least ``--min-gap`` above chance is reported as an error (the explainers are
not distinguishable from random there and the bar would be meaningless).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from .explainers import BUILTIN_NAMES, CONTROL_NAME
from .formulas import get_formula


def _floor(x: float) -> float:
    return math.floor(x * 100 + 1e-9) / 100


def calibrate(records: list[dict], tier: str, margin: float, min_gap: float) -> tuple[str, list[str]]:
    """TOML text of one tier's symbolic thresholds, and a list of problems."""
    values: dict[tuple[int, str], list[float]] = defaultdict(list)
    chance: dict[int, float] = {}
    uscores: list[float] = []
    for r in records:
        if r["suite"] != "symbolic":
            continue
        c = r["condition"]
        if r["metric"] == "uscore":
            uscores.append(r["value"])
        elif r["metric"] == "fprec" and r["explainer"] in BUILTIN_NAMES and r["explainer"] != CONTROL_NAME:
            values[(c["formula"], r["explainer"])].append(r["value"])
            k = get_formula(c["formula"]).n_vars
            chance[c["formula"]] = max(chance.get(c["formula"], 0.0), k / (k + c["noise_features"]))
    problems = []
    per_explainer: dict[str, dict[int, float]] = defaultdict(dict)
    for (formula, explainer), vals in sorted(values.items()):
        thr = _floor(min(vals) - margin)
        if thr < chance[formula] + min_gap:
            problems.append(f"f{formula:02d} {explainer}: threshold {thr:.2f} is within {min_gap} of chance {chance[formula]:.3f}")
        per_explainer[explainer][formula] = thr
    formulas = sorted({f for f, _ in values})
    lines = [f"[symbolic.{tier}]", f"quality_gate = {_floor(min(uscores) - 2 * margin):.2f}", "", f"[symbolic.{tier}.fprec]"]
    lines.append(f"default = {min(min(t.values()) for t in per_explainer.values()):.2f}")
    for f in formulas:
        lines.append(f"f{f:02d} = {min(per_explainer[e][f] for e in per_explainer):.2f}")
    for explainer in [e for e in BUILTIN_NAMES if e in per_explainer]:
        lines += ["", f"[symbolic.{tier}.fprec.explainer.{explainer}]"]
        lines += [f"f{f:02d} = {per_explainer[explainer][f]:.2f}" for f in formulas]
    return "\n".join(lines) + "\n", problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="results.json files of one tier")
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--min-gap", type=float, default=0.1, help="required distance above chance FPrec")
    args = parser.parse_args(argv)
    payloads = [json.loads(path.read_text()) for path in args.results]
    tiers = {p["meta"]["tier"] for p in payloads}
    if len(tiers) != 1:
        parser.error(f"results of exactly one tier expected, got {sorted(tiers)}")
    records = [r for p in payloads for r in p["records"]]
    text, problems = calibrate(records, tiers.pop(), args.margin, args.min_gap)
    sys.stdout.write(text)
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
