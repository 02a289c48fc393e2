"""fp32 against bf16 training (``--chaosmining-precision bf16``) on the same seeds: mean
accuracy and explainer scores per suite, condition and metric, and the largest change.

    python benchmarks/precision_compare.py reports/precision/bf16-smoke-vision-audio-500-505.json.gz \\
        reports/calibration/raw/held4-smoke-vision.json reports/calibration/raw/held4-smoke-audio.json

The bf16 run: ``pytest --chaosmining --chaosmining-suites vision,audio --chaosmining-seeds 500-505
--chaosmining-explainers SA,DL,IG,FA,random --chaosmining-precision bf16``; the fp32 values are the
held-out calibration runs of the same seeds.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from pytest_chaosmining.tools.calibrate import read_results

METRICS = ("accuracy", "iou", "top1_hit", "channel_share", "training_gain")
EXPLAINERS = ("-", "SA", "DL", "IG", "FA")


def values(paths: list[str]) -> dict[tuple, float]:
    """(suite, condition, metric, explainer, seed, model) -> value over the results.json files ``paths``
    (the model's name without its ``-bf16`` suffix, so that the two runs' models pair up)."""
    out = {}
    for path in paths:
        for r in read_results(Path(path))["records"]:
            if r["metric"] in METRICS and r["explainer"] in EXPLAINERS:
                model = r["model"].removesuffix("-bf16")
                out[(r["suite"], r["condition"]["condition"], r["metric"], r["explainer"], r["seed"], model)] = r[
                    "value"
                ]
    return out


def main(bf16_path: str, *fp32_paths: str) -> None:
    """Print the Markdown table of fp32 against bf16 means."""
    bf16, fp32 = values([bf16_path]), values(list(fp32_paths))
    pairs: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for key, value in bf16.items():
        if key in fp32:
            pairs[key[:3]].append((fp32[key], value))
    print(
        "| suite | condition | metric | pairs | fp32 mean | bf16 mean | mean change | largest change of an explainer |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (suite, condition, metric), p in sorted(pairs.items()):
        by_explainer: dict[str, list[float]] = defaultdict(list)
        for key, value in bf16.items():
            if key[:3] == (suite, condition, metric) and key in fp32:
                by_explainer[key[3]].append(value - fp32[key])
        largest = max((statistics.fmean(d) for d in by_explainer.values()), key=abs)
        a, b = statistics.fmean(x for x, _ in p), statistics.fmean(y for _, y in p)
        print(f"| {suite} | {condition} | {metric} | {len(p)} | {a:.3f} | {b:.3f} | {b - a:+.3f} | {largest:+.3f} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
