"""The gate's power: the smallest regression a run against its baseline fails, by shape.

    python benchmarks/mutations/power.py [--write]

Regressions of four shapes are injected into real records: the built-ins' judged scores,
with their per-sample values, and the fingerprints of their maps, from one default run
(the bases of ``benign/`` of today's code where there are, else of the machine most changes ran on;
benign_run.py).  Each affected sample loses a share ``f`` of
its score (its value moves to (1 − f) × its value; 0 is what an empty or map-free map
scores on every metric here, about chance) and its map moves the same share of its mass
to a uniform spread over the features (a map that ignores the input; at f = 1 it keeps
none of its shape):

- **uniform**: every explained sample;
- **one class in ten**: ⌈n/10⌉ samples (20 draws of which samples, seeded);
- **one class**: the explained samples of one class (vision, audio: each class in turn), the
  others untouched (the class rule, ``classes_kept``, judges such a change);
- **a quarter**: n/4 samples (20 draws);
- **one condition**: every sample of one record, the suite's other conditions untouched.

The run with the injected records is judged against the base with the plugin's own code
and the shipped rules: the score's drop (``Baseline.regression``: the allowed drop, the
paired t, the cap) and the maps' drift (the mean agreement bar and the per-sample floor
of ``[<suite>.smoke.sample_drift]``).  For each suite, metric and shape: the smallest f
(searched on a grid of 1/64) at which the record fails, by the score alone and by the
gate (score or drift), with the mean drop of the score at that f; the median over the
built-ins' records and draws.  ``--write`` writes ``power.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benign_judge import load, most_used_machine, on_machine, stale_chunks  # noqa: E402

from pytest_chaosmining.core.metrics.catalog import Metric  # noqa: E402
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint, StoredFingerprint  # noqa: E402
from pytest_chaosmining.core.records import NOISE_METRICS, OUTLINE, Record  # noqa: E402
from pytest_chaosmining.explainers import builtin_explainers  # noqa: E402
from pytest_chaosmining.suites import metric_catalog, shipped_thresholds  # noqa: E402
from pytest_chaosmining.verdict.baseline import Baseline, PairedDrop  # noqa: E402
from pytest_chaosmining.verdict.drift import drift_verdict  # noqa: E402
from pytest_chaosmining.verdict.rule import BaselineRule, CalibratedDrops  # noqa: E402

TIER = "smoke"
SHAPES = ("uniform", "one class in ten", "one class", "a quarter", "one condition")
DRAWS = 20
GRID = [i / 64 for i in range(1, 65)]
BARS = shipped_thresholds(None)


def _where(r: dict) -> tuple[str, str, str, int]:
    return (r["suite"], r["model"], json.dumps(r["case"], sort_keys=True), r["seed"])


def _affected(shape: str, n: int, draw: int, labels: list[int] | None = None) -> list[int]:
    """The samples a regression of ``shape`` touches (``draw``: which draw; ``one class``:
    the explained samples of the draw-th class among ``labels``)."""
    if shape in ("uniform", "one condition"):
        return list(range(n))
    if shape == "one class":
        classes = sorted(set(labels or []))
        return [i for i, c in enumerate((labels or [])[:n]) if c == classes[draw]] if draw < len(classes) else []
    k = math.ceil(n / 10) if shape == "one class in ten" else n // 4
    return sorted(random.Random(1000 * draw + k).sample(range(n), k))


def _hurt_values(values: list[float], affected: list[int], f: float) -> list[float]:
    out = list(values)
    for i in affected:
        out[i] = (1 - f) * out[i]
    return out


def _hurt_maps(maps: StoredFingerprint, affected: list[int], f: float) -> dict[str, object]:
    """The stored fingerprint with each affected sample's map moving a share ``f`` of its mass
    to a uniform, positive spread over the features (a map that ignores the input)."""
    found = Fingerprint.read(maps)
    mass, signed = found.mass.copy(), None if found.signed is None else found.signed.copy()
    rows = [i for i in affected if i < len(mass)]
    even = mass[rows].mean(axis=1, keepdims=True)
    mass[rows] = (1 - f) * mass[rows] + f * even
    if signed is not None:
        signed[rows] = (1 - f) * signed[rows] + f * even
    return Fingerprint(mass, signed).stored()


@dataclass(frozen=True)
class ScoreRule:
    """The score's drop rule on one record, its ``affected`` samples losing a share f."""

    baseline: Baseline
    record: dict
    metric: Metric
    drop: float
    paired: PairedDrop | None
    affected: list[int]

    n: int

    def fails(self, f: float) -> bool:
        """Whether the record with its affected samples losing a share ``f`` regresses (a
        record without per-sample values loses that share of its value on their share)."""
        if self.record.get("samples"):
            values = _hurt_values(self.record["samples"], self.affected, f)
            hurt = Record.from_dict({**self.record, "value": sum(values) / len(values), "samples": values})
        else:
            lost = f * len(self.affected) / self.n * self.record["value"]
            hurt = Record.from_dict({**self.record, "value": self.record["value"] - lost})
        return self.baseline.drop(hurt, self.metric, self.drop, self.paired).regression is not None


@dataclass(frozen=True)
class DriftRule:
    """The run's drift checks (:func:`~pytest_chaosmining.verdict.drift.drift_verdict`: the
    mean and per-sample bars, every sample's outline, a sampler's allowance from the noise
    its base's run recorded) on one fingerprint (None: none kept), its ``affected``
    samples' maps moving a share f of their mass to a uniform spread (their sign balance
    shrinking by the same share, their size kept)."""

    baseline: Baseline
    fingerprint: dict | None
    outline: dict | None
    affected: list[int]
    bar_key: str

    def fails(self, f: float) -> bool:
        if self.fingerprint is None:
            return False
        kept = Record.from_dict({**self.fingerprint, "maps": _hurt_maps(self.fingerprint["maps"], self.affected, f)})
        outlined = None
        if self.outline is not None:
            rows = [list(row) for row in self.outline["maps"]]
            for i in self.affected:
                if i < len(rows):
                    rows[i][1] *= 1 - f
            outlined = Record.from_dict({**self.outline, "maps": rows})
        noise = self.baseline.noise_of(kept)  # the base's recorded noise: the regression adds none
        rule = BaselineRule(self.baseline, BARS, TIER)
        verdict = drift_verdict(rule, kept, outlined, self.bar_key, "", (lambda: noise) if noise else None, False)
        return any(bar is not None and value < bar for _, value, bar, _ in verdict.checks)


def _smallest(fails: Callable[[float], bool]) -> float | None:
    """The smallest f of the grid at which ``fails`` (None: not even at 1), by bisection:
    every rule here fails at a larger loss where it fails at a smaller one (a score's
    drop grows with f while its paired t stays, the maps' agreement falls)."""
    if not fails(GRID[-1]):
        return None
    lo, hi = -1, len(GRID) - 1  # fails(GRID[hi]); not known to fail at lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(GRID[mid]):
            hi = mid
        else:
            lo = mid
    return GRID[hi]


def measure() -> dict[tuple[str, str, str, str], dict[str, list[float | None]]]:
    """(suite, metric, shape, explainers) → the smallest failing f by the score and by the
    gate, and the drops there (explainers: the deterministic built-ins, or the samplers)."""
    loaded, _, keys = load()
    current = [k.split("@")[1] for k in keys if k.startswith("bases@") and k not in stale_chunks(keys)]
    records = on_machine(loaded, current[0] if current else most_used_machine(loaded))  # today's bases first
    catalog, bars = metric_catalog(), shipped_thresholds(None)
    found: dict[tuple[str, str, str, str], dict[str, list[float | None]]] = defaultdict(lambda: defaultdict(list))
    for name, rows in sorted(records.items()):
        if not name.startswith("base-"):
            continue
        stochastic = builtin_explainers()[name.removeprefix("base-")].stochastic
        prints = {_where(r): r for r in rows if r["metric"] == "fingerprint" and r.get("maps")}
        outlines = {_where(r): r for r in rows if r["metric"] == OUTLINE and r.get("maps")}
        noise = [r for r in rows if r["metric"] in NOISE_METRICS.values()]
        scored = [
            r
            for r in rows
            if r["value"] is not None and catalog.is_judged(r["suite"], r["metric"])
            and catalog.get(r["suite"], r["metric"]).against_baseline  # type: ignore[union-attr]
            and r["suite"] in ("symbolic", "vision", "audio") and (r["threshold"] is not None or r.get("samples"))
        ]  # fmt: skip
        baseline = Baseline(
            [Record.from_dict({**r, "threshold": r["threshold"] if r["threshold"] is not None else -1.0})
             for r in scored] + [Record.from_dict(r) for r in [*prints.values(), *outlines.values(), *noise]],
            "base", catalog,
        )  # fmt: skip
        for r in scored:
            suite, metric_name = r["suite"], r["metric"]
            metric = catalog.judged(suite, metric_name)
            drops = CalibratedDrops(bars, TIER)
            drop, paired = drops.allowed(suite, metric_name), drops.paired(suite, metric_name)
            fp = prints.get(_where(r))
            agreement = catalog.get(suite, "map_agreement")
            bar_key = agreement.bar_key(r["case"]) if agreement is not None and agreement.bar_key else "default"
            n = len(r["samples"]) if r.get("samples") else len(fp["maps"]) if fp else 32
            labels = fp.get("labels") if fp else None
            for shape in SHAPES:
                if shape == "one class" and not labels:
                    continue
                draws = len(set(labels or [])) if shape == "one class" else DRAWS
                for draw in range(1 if shape in ("uniform", "one condition") else draws):
                    affected = _affected(shape, n, draw, labels)
                    if not affected:
                        continue
                    score = ScoreRule(baseline, r, metric, drop, paired, affected, n)
                    drift = DriftRule(baseline, fp, outlines.get(_where(r)), affected, bar_key)
                    by_score = _smallest(score.fails)
                    by_gate = _smallest(lambda f, score=score, drift=drift: score.fails(f) or drift.fails(f))
                    cell = found[(suite, metric_name, shape, "samplers" if stochastic else "deterministic")]
                    cell["score"].append(by_score)
                    cell["gate"].append(by_gate)
                    mean = (
                        sum(r["samples"][i] for i in affected) / n
                        if r.get("samples")
                        else r["value"] * len(affected) / n
                    )
                    cell["score_drop"].append(None if by_score is None else by_score * mean)
                    cell["gate_drop"].append(None if by_gate is None else by_gate * mean)
    return found


def _median(values: list[float | None]) -> str:
    """The median of ``values`` with the share never caught (None: not even at f = 1)."""
    caught = [v for v in values if v is not None]
    missed = len(values) - len(caught)
    if not caught:
        return "never"
    text = f"{statistics.median(caught):.2f}"
    return text + (f" ({missed} of {len(values)} never)" if missed else "")


def table(found: dict[tuple[str, str, str, str], dict[str, list[float | None]]]) -> list[str]:
    """power.md's rows: per suite, metric, shape and kind of explainer (a sampler's drift
    allowance from the noise its base's run recorded)."""
    lines = [
        "| suite | metric | shape | explainers | records × draws | smallest f, score | its drop | smallest f, gate "
        "| its drop |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    order = sorted(found, key=lambda k: (k[0], k[1], SHAPES.index(k[2]), k[3]))
    for suite, metric, shape, who in order:
        cell = found[(suite, metric, shape, who)]
        gate = (_median(cell["gate"]), _median(cell["gate_drop"]))
        lines.append(
            f"| {suite} | {metric} | {shape} | {who} | {len(cell['score'])} | {_median(cell['score'])} | "
            f"{_median(cell['score_drop'])} | {gate[0]} | {gate[1]} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    lines = [
        "# What a run against its baseline catches: the smallest regression, by shape (smoke)",
        "",
        "power.py injects regressions into the built-ins' records of one default run (benign/bases) and judges "
        "them with the plugin's baseline code and the shipped rules.  *f*: the share of each affected sample's "
        "score lost and of its map's mass moved to a uniform spread; *its drop*: the record's mean score drop at "
        "that f; medians over the built-ins' records (and 20 draws of the affected samples); *never*: not caught "
        "even at f = 1.  *score*: the score's drop rule alone; *gate*: score or drift, by the run's own rule "
        "(verdict/drift.py: the mean and per-sample bars, every sample's outline, the signs, a class moved as a "
        "whole; a sampler's allowance from the noise its base's run recorded).  *one class*: the explained samples "
        "of one class (each class in turn), where the suite's samples have classes.",
        "",
        *table(measure()),
    ]
    print("\n".join(lines))
    if args.write:
        (HERE / "power.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
