"""Derive thresholds from measured runs: ``python -m pytest_chaosmining.calibrate``.

Procedure (the one the shipped ``thresholds.toml`` was made with):

1. Run the tier with more seeds than it uses, e.g.
   ``pytest --chaosmining --chaosmining-tier ci --chaosmining-seeds 4 --chaosmining-report cal``.
2. ``python -m pytest_chaosmining.calibrate cal/results.json --suite symbolic --margin 0.05``
   (suites: symbolic, vision, audio, rfe).

For every built-in explainer, judged metric and key (formula, condition,
model-condition or dataset) the threshold is the lowest value seen over the
seeds minus the margin, rounded down to 0.01.  The key's shared entry (used
for explainers without their own, i.e. user explainers) is the lowest
built-in threshold: a new explainer must do at least as well as the weakest
built-in.  The quality gate, where the suite has one, is the lowest prediction
quality minus twice the margin.  Every threshold is checked against chance
(k / n_features, the area ratio, 1 / channels, or the random control's measured
value if higher): a bar less than ``--min-gap`` above it is an error, because
the explainers are not distinguishable from random there.  The exception is
the audio ``channel_share``, which is only judged where it clears chance: such
bars are left out (listed as comments) and ``top1_hit`` judges those cases.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from .explainers import BUILTIN_NAMES, CONTROL_NAME
from .formulas import get_formula


def _floor(x: float) -> float:
    return math.floor(x * 100 + 1e-9) / 100


#: per suite: the judged metrics, the prediction-quality metric (or None) and the threshold key of a record
SUITES = {
    "symbolic": (("fprec",), "uscore", lambda c: f"f{c['formula']:02d}"),
    "vision": (("iou",), "accuracy", lambda c: c["condition"]),
    "audio": (("channel_share", "top1_hit"), "accuracy", lambda c: f"{c['arch']}-{c['condition']}"),
    "rfe": (("fprec",), None, lambda c: c["dataset"]),
}
#: metrics where a bar too close to chance is left out (the metric is then not
#: judged there, and the report says so) instead of being an error
OPTIONAL = {"channel_share"}


def _chance(suite: str, condition: dict, random_values: list[float]) -> float:
    if suite == "symbolic":
        k = get_formula(condition["formula"]).n_vars
        return k / (k + condition["noise_features"])
    if suite == "audio":  # one channel of C, or what the random control measured if higher
        return max([1 / condition["channels"], *random_values])
    if suite == "rfe":  # a random selection of k of n features
        return max([condition["k"] / condition["total_features"], *random_values])
    # vision: the area ratio (1/49), or what the random control measured if higher
    return max([1 / 49, *random_values])


def calibrate(records: list[dict], suite: str, tier: str, margin: float, min_gap: float) -> tuple[str, list[str]]:
    """TOML text of one suite's and tier's thresholds, and a list of problems."""
    metrics, quality, key_of = SUITES[suite]
    qualities = [r["value"] for r in records if r["suite"] == suite and r["metric"] == quality]
    lines = [f"[{suite}.{tier}]"]
    if qualities:
        lines.append(f"quality_gate = {_floor(min(qualities) - 2 * margin):.2f}")
    problems: list[str] = []
    for metric in metrics:
        text, found = _calibrate_metric(records, suite, tier, metric, key_of, margin, min_gap)
        lines += ["", *text]
        problems += found
    return "\n".join(lines) + "\n", problems


def _calibrate_metric(records: list[dict], suite: str, tier: str, metric: str, key_of: Any, margin: float,
                      min_gap: float) -> tuple[list[str], list[str]]:
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    random_values: dict[str, list[float]] = defaultdict(list)
    conditions: dict[str, dict] = {}
    for r in records:
        if r["suite"] != suite or r["metric"] != metric:
            continue
        key = key_of(r["condition"])
        if r["explainer"] == CONTROL_NAME:
            random_values[key].append(r["value"])
        elif r["explainer"] in BUILTIN_NAMES:
            values[(key, r["explainer"])].append(r["value"])
            conditions[key] = r["condition"]
    problems, notes = [], []
    per_explainer: dict[str, dict[str, float]] = defaultdict(dict)
    for (key, explainer), vals in sorted(values.items()):
        thr = _floor(min(vals) - margin)
        chance = _chance(suite, conditions[key], random_values.get(key, []))
        if thr < chance + min_gap:
            message = f"{key} {explainer}: {metric} threshold {thr:.2f} is within {min_gap} of chance {chance:.3f}"
            if metric in OPTIONAL:
                notes.append(f"# not judged: {message} (lowest measured {min(vals):.3f})")
                continue
            problems.append(message)
        per_explainer[explainer][key] = thr
    keys = sorted({k for k, _ in values})
    explainers = [e for e in BUILTIN_NAMES if e in per_explainer]
    # the bar for other explainers: the weakest built-in's, where every built-in has one
    shared = {k: min(per_explainer[e][k] for e in explainers) for k in keys
              if all(k in per_explainer[e] for e in {e for (kk, e) in values if kk == k})}
    lines = [f"[{suite}.{tier}.{metric}]", *notes]
    if metric not in OPTIONAL and shared:
        lines.append(f"default = {min(shared.values()):.2f}")
    lines += [f"{k} = {v:.2f}" for k, v in shared.items()]
    for explainer in explainers:
        lines += ["", f"[{suite}.{tier}.{metric}.explainer.{explainer}]"]
        lines += [f"{k} = {per_explainer[explainer][k]:.2f}" for k in keys if k in per_explainer[explainer]]
    return lines, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="results.json files of one tier")
    parser.add_argument("--suite", default="symbolic", choices=sorted(SUITES))
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--min-gap", type=float, default=0.1, help="required distance above chance")
    args = parser.parse_args(argv)
    payloads = [json.loads(path.read_text()) for path in args.results]
    tiers = {p["meta"]["tier"] for p in payloads}
    if len(tiers) != 1:
        parser.error(f"results of exactly one tier expected, got {sorted(tiers)}")
    records = [r for p in payloads for r in p["records"]]
    text, problems = calibrate(records, args.suite, tiers.pop(), args.margin, args.min_gap)
    sys.stdout.write(text)
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
