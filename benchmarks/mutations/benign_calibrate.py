"""Calibrate a baseline's verdicts on the calibration half of the benign changes (benign.py).

    python benchmarks/mutations/benign_calibrate.py [--write]

From the calibration half only (the held-out half checks the result: benign_judge.py):

- **scores with per-sample values** (vision's IoU, box share and training gain, audio's scores):
  a drop beyond the metric's allowed drop is judged as a paired difference against
  its own spread.  It regresses where its paired t exceeds ``t`` or the drop reaches
  the metric's ``cap``.  ``t``: the one-sided quantile of Student's t (n − 1 degrees
  of freedom) at a per-run false-alarm rate of :data:`RUN_RATE` shared over a run's
  paired records (Bonferroni), and above every calibration change's t; ``cap``: twice
  the largest drop a calibration change made, at least twice the allowed drop.  A score
  without a calibrated allowed drop yet (box share) gets twice the largest drop a
  calibration change made, at least 0.01 (the paired t guards it from there on).
- **scores without them** (symbolic, rfe): the allowed drop, as calibrate_drops.py sets
  it, over far more changes: max(0.02, k × √(mean d²), the largest change either way),
  k the tolerance factor of CALIBRATION.md (coverage 0.999, confidence 0.90).
- **the maps' agreement** with the baseline's, per suite: 1 − 2 × (1 − the lowest
  agreement of a deterministic calibration change), at most 0.999 (samplers move by
  their own noise, which the run measures: left out).
- **the maps' size** (``size_agreement``, for the explainers that promise it: the
  built-ins that declare completeness), per suite: ``1 / (1 + 2 × (F − 1))``, F the
  largest factor ``exp(mean |ln ratio|)`` by which a deterministic calibration change
  moved each sample's total |attribution|, rounded down to 0.01 (samplers left out:
  their sizes move with their draws, and the run does not judge them).
- **one sample's maps' agreement** (``sample_drift``), per suite: the floor no explained
  sample may fall below, 1 − 4 × (1 − the lowest one sample's agreement under a
  deterministic calibration change), rounded down to 0.01 (four times, not twice as for
  the mean: a minimum over every sample of every record has a longer tail); ``allowed``
  0 (a change confined to one class moves its samples' maps entirely: cosine 0 for an
  empty map).

- **the maps' signs** (``signs_kept``), per suite: 1 − 2 × (1 − the lowest share of the
  baseline's clearly positive, clearly negative or mixed features that kept its sign under a
  deterministic calibration change), rounded down to 0.01, at most 0.99 (a sampler's bar is
  loosened by its own draws' noise in the run).
- **a class moved as a whole** (``classes_kept``): not a calibrated bar (the rule is relative:
  a class's every sample four times as far as any other's), but its false alarms on the
  calibration changes are counted, deterministic and samplers apart.

``--write`` stores ``[<suite>.smoke.max_drop]``, ``[<suite>.smoke.paired_drop]``,
``[<suite>.smoke.map_agreement]``, ``[<suite>.smoke.size_agreement]``,
``[<suite>.smoke.sample_drift]`` and ``[<suite>.smoke.signs_kept]`` in the suites'
thresholds.toml and writes ``benign-calibration.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benign import CALIBRATION, CHANGES  # noqa: E402
from benign_judge import load, machine_of, on_machine  # noqa: E402
from scipy.stats import t as student  # noqa: E402

from pytest_chaosmining.core.metrics.drift import map_agreement  # noqa: E402
from pytest_chaosmining.explainers import builtin_explainers  # noqa: E402
from pytest_chaosmining.suites import SUITES_DIR, metric_catalog, shipped_thresholds  # noqa: E402
from pytest_chaosmining.tools.calibrate import tolerance_factor  # noqa: E402
from pytest_chaosmining.verdict.baseline import MIN_PAIRED, paired_t  # noqa: E402
from pytest_chaosmining.verdict.class_moves import class_moved  # noqa: E402
from pytest_chaosmining.verdict.rule import CalibratedDrops  # noqa: E402

TIER = "smoke"
#: the per-run false-alarm rate the paired rule is set for
RUN_RATE = 0.01
COVERAGE, CONFIDENCE, FLOOR = 0.999, 0.90, 0.02
#: how many times the largest one-sample movement of a calibration change the per-sample floor allows
SAMPLE_MARGIN = 4
#: the least allowed drop of a continuous score with per-sample values (vision's box share)
CONTINUOUS_FLOOR = 0.01


def _key(r: dict) -> tuple[str, str, str, int, str]:
    return (r["suite"], r["model"], json.dumps(r["case"], sort_keys=True), r["seed"], r["metric"])


def calibrate() -> dict[str, dict[str, object]]:
    """Per suite: ``max_drop`` and ``paired_drop`` tables and the ``map_agreement`` bar, with the figures."""
    records, _, _ = load()
    catalog, shipped = metric_catalog(), shipped_thresholds(None)
    drops: dict[tuple[str, str], list[float]] = defaultdict(list)
    paired: dict[tuple[str, str], list[tuple[float, float, int]]] = defaultdict(list)
    agreements: dict[str, list[float]] = defaultdict(list)
    single: dict[str, list[tuple[float, str]]] = defaultdict(list)
    sizes: dict[str, list[tuple[float, str]]] = defaultdict(list)
    signs: dict[str, list[tuple[float, str]]] = defaultdict(list)
    classes: dict[str, list[str]] = defaultdict(list)
    fingerprints: dict[str, int] = defaultdict(int)
    per_run = 0
    for name, change in CHANGES.items():
        if change.half != CALIBRATION or name not in records:
            continue
        base = {_key(r): r for r in on_machine(records, machine_of(name, records))[f"base-{change.base}"]}
        stochastic = builtin_explainers()[change.base].stochastic
        sized = builtin_explainers()[change.base].size_promised
        with_samples = 0
        for r in records[name]:
            old = base.get(_key(r))
            if old is None:
                continue
            if r["metric"] == "fingerprint":
                if r.get("maps") and old.get("maps"):
                    found = map_agreement(r["maps"], old["maps"])
                    fingerprints[r["suite"]] += 1
                    if class_moved(found, r.get("labels")) is not None:  # a false alarm of the class rule
                        classes[r["suite"]].append(f"{name}{' (sampler)' if stochastic else ''}")
                if not stochastic and r.get("maps") and old.get("maps"):
                    agreements[r["suite"]].append(found.mean)
                    single[r["suite"]].append((found.least, name))
                    if found.signs is not None:
                        signs[r["suite"]].append((found.signs, name))
                    if sized:
                        sizes[r["suite"]].append((found.size, name))
                continue
            metric = catalog.get(r["suite"], r["metric"])
            if metric is None or not metric.judged or not metric.against_baseline or r["value"] is None:
                continue
            drop = old["value"] - r["value"]
            samples, before = r.get("samples"), old.get("samples")
            if samples and before and len(samples) == len(before) >= MIN_PAIRED:
                with_samples += 1
                paired[(r["suite"], r["metric"])].append((drop, paired_t(before, samples), len(samples)))
            else:
                drops[(r["suite"], r["metric"])].append(drop)
        per_run = max(per_run, with_samples)
    out: dict[str, dict[str, object]] = defaultdict(lambda: {"max_drop": {}, "paired_drop": {}, "figures": []})
    for (suite, metric), values in sorted(drops.items()):
        m = len(values)
        rms = math.sqrt(sum(d * d for d in values) / m)
        k = tolerance_factor(m, COVERAGE, CONFIDENCE)
        largest = max(abs(d) for d in values)
        allowed = math.ceil(max(FLOOR, k * rms, largest) * 200) / 200
        out[suite]["max_drop"][metric] = allowed  # type: ignore[index]
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | {metric} | {m} | max drop | rms {rms:.4f}, k {k:.2f}, largest {largest:.4f} | {allowed} |"
        )
    for (suite, metric), found in sorted(paired.items()):
        n = min(size for _, _, size in found)
        allowed = CalibratedDrops(shipped, TIER).allowed(suite, metric)
        if not CalibratedDrops(shipped, TIER).calibrated(
            suite, metric
        ):  # a new score: twice its largest drop, at least 0.01
            largest_drop = max(drop for drop, _, _ in found)
            allowed = math.ceil(max(CONTINUOUS_FLOOR, 2 * largest_drop) * 200) / 200
        beyond = [t for drop, t, _ in found if drop > allowed]
        quantile = float(student.ppf(1 - RUN_RATE / max(per_run, 1), n - 1))
        t_bar = math.ceil(max([quantile, *beyond]) * 10) / 10
        largest = max(drop for drop, _, _ in found)
        cap = math.ceil(max(2 * largest, 2 * allowed) * 200) / 200
        out[suite]["max_drop"][metric] = allowed  # type: ignore[index]
        out[suite]["paired_drop"]["t"] = max(float(out[suite]["paired_drop"].get("t", 0.0)), t_bar)  # type: ignore[union-attr,index,arg-type]
        out[suite]["paired_drop"][metric] = cap  # type: ignore[index]
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | {metric} | {len(found)} | paired | allowed {allowed:g}; t of the drops beyond it: "
            f"{', '.join(f'{t:.2f}' for t in sorted(beyond)) or 'none'}; t quantile {quantile:.2f} "
            f"({per_run} paired records a run); largest drop {largest:.4f} | t {t_bar:g}, cap {cap:g} |"
        )
    for suite, values in sorted(agreements.items()):
        lowest = min(values)
        bar = min(0.999, math.floor((1 - 2 * (1 - lowest)) * 1000) / 1000)
        out[suite]["map_agreement"] = bar
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | map_agreement | {len(values)} | bar | lowest agreement {lowest:.5f} | {bar:g} |"
        )
    for suite, kept in sorted(sizes.items()):
        lowest, by = min(kept)
        factor = 1 / lowest
        bar = math.floor(100 / (1 + 2 * (factor - 1))) / 100
        out[suite]["size_agreement"] = bar
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | size_agreement | {len(kept)} | bar | sizes moved by a factor {factor:.4f} at most ({by}) "
            f"| {bar:g} (1 / (1 + 2 × {factor - 1:.4f})) |"
        )
    for suite, lows in sorted(single.items()):
        lowest, by = min(lows)
        floor = max(0.0, math.floor((1 - SAMPLE_MARGIN * (1 - lowest)) * 100) / 100)
        out[suite]["sample_drift"] = {"floor": floor, "allowed": 0}
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | sample_drift | {len(lows)} | floor | lowest one sample's agreement {lowest:.5f} ({by}) "
            f"| floor {floor:g} (1 − {SAMPLE_MARGIN} × {1 - lowest:.4f}), allowed 0 |"
        )
    for suite, kept in sorted(signs.items()):
        lowest, by = min(kept)
        bar = min(0.99, max(0.0, math.floor((1 - 2 * (1 - lowest)) * 100) / 100))
        out[suite]["signs_kept"] = bar
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | signs_kept | {len(kept)} | bar | lowest share of signs kept {lowest:.5f} ({by}) "
            f"| {bar:g} (1 − 2 × {1 - lowest:.4f}) |"
        )
    for suite, count in sorted(fingerprints.items()):
        alarms = classes.get(suite, [])
        out[suite]["figures"].append(  # type: ignore[union-attr]
            f"| {suite} | classes_kept | {count} | a class moved as a whole (no bar) | "
            f"{len(alarms)} false alarms{': ' + ', '.join(alarms) if alarms else ''} | — |"
        )
    return dict(out)


def write(tables: dict[str, dict[str, object]]) -> None:
    """Replace each suite's ``max_drop``, ``paired_drop``, ``map_agreement``, ``size_agreement`` and
    ``sample_drift`` tables."""
    note = "# calibrated by benchmarks/mutations/benign_calibrate.py (benign-calibration.md)"
    for suite, table in tables.items():
        path = SUITES_DIR / suite / "thresholds.toml"
        text = path.read_text()
        for name in ("max_drop", "paired_drop", "map_agreement", "size_agreement", "sample_drift", "signs_kept"):
            values = table.get(name)
            if not values:
                continue
            body = {"default": values} if isinstance(values, float) else values
            header = f"[{suite}.{TIER}.{name}]"
            block = "\n".join([note, header, *(f"{k} = {v}" for k, v in body.items())]) + "\n\n"  # type: ignore[union-attr]
            pattern = re.compile(r"(#[^\n]*\n)?" + re.escape(header) + r"\n(?:[^\[\n#][^\n]*\n|\n)*")
            text = pattern.sub(lambda _, block=block: block, text) if pattern.search(text) else text + "\n" + block
        path.write_text(text.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    tables = calibrate()
    halves = sum(c.half == CALIBRATION for c in CHANGES.values())
    lines = [
        "# A baseline's verdicts, calibrated on benign changes (smoke tier)",
        "",
        f"The calibration half of benign.py ({halves} changes) against their bases "
        "(benign_calibrate.py); the held-out half checks the result (benign.md).",
        "",
        "| suite | metric | records | rule | figures | set |",
        "|---|---|---|---|---|---|",
        *(row for table in tables.values() for row in table["figures"]),  # type: ignore[attr-defined]
    ]
    print("\n".join(lines))
    if args.write:
        write(tables)
        (HERE / "benign-calibration.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
