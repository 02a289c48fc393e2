"""Which explained samples a report's pictures show beside the fixed examples: for each
explainer whose test failed, the sample its maps moved most from the baseline's (with
both fingerprints, to draw side by side), else the first whose map flipped its sign or
emptied against the baseline's, else the sample it scored worst."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_chaosmining.core.metrics.drift import map_agreement, outline_change
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint, StoredFingerprint
from pytest_chaosmining.core.records import FINGERPRINT, OUTLINE, Record
from pytest_chaosmining.explainers import CONTROL_NAME

#: a sample whose maps agree with the baseline's at least this well did not move
STILL = 0.999
#: a sample whose sign balance (sum over total |attribution|) moved this far changed its signs
BALANCE_MOVED = 0.2


@dataclass(frozen=True)
class FailingSample:
    """An explained sample to draw: its explainer, its index among the explained
    samples, its class (None: no classes), why it was chosen, and its fingerprint row in
    the baseline (``then``; None without one) and in this run (``now``)."""

    explainer: str
    index: int
    label: int | None
    why: str
    then: list[float] | None
    now: list[float] | None


def failed_explainers(records: Sequence[Record]) -> list[str]:
    """The explainers of ``records`` with a failed check, by name (a known defect's
    expected failure and the random control left out)."""
    return sorted({r.explainer for r in records if r.passed is False and not r.expected} - {CONTROL_NAME})


def failing_samples(
    records: Sequence[Record],
    baseline_maps: Callable[[Record], list[list[float]] | dict[str, object] | None],
    most: int = 2,
) -> list[FailingSample]:
    """Of one case's ``records``: a sample for each of the first ``most`` explainers with
    a failed check (a known defect's expected failure and the random control left out); ``baseline_maps`` gives
    the baseline's fingerprint of a fingerprint record (None: none)."""
    failed = failed_explainers(records)
    found = []
    for explainer in failed[:most]:
        mine = [r for r in records if r.explainer == explainer]
        kept = next((r for r in mine if r.metric == FINGERPRINT and r.maps), None)
        now = _masses(kept.maps) if kept is not None else None
        then = _masses(baseline_maps(kept)) if kept is not None else None
        labels = kept.labels if kept is not None else None
        if now and then:
            cosines = map_agreement(now, then).cosines
            if cosines and min(cosines) < STILL:
                i = min(range(len(cosines)), key=cosines.__getitem__)
                why = f"moved most from the baseline's (cosine {cosines[i]:.2f})"
                found.append(FailingSample(explainer, i, _label(labels, i), why, then[i], now[i]))
                continue
        shape = next((r for r in mine if r.metric == OUTLINE and r.maps), None)
        then_shape = baseline_maps(shape) if shape is not None else None
        if shape is not None and isinstance(shape.maps, list) and shape.maps and isinstance(then_shape, list):
            change = outline_change(shape.maps, then_shape)
            if change.lost:  # the masses held, the sign or the size did not
                i = change.lost[0]
                what = "flipped its sign" if i in change.flipped else "emptied or resized"
                balance = f" (balance {then_shape[i][1]:+.2f} → {shape.maps[i][1]:+.2f})" if i < len(then_shape) else ""
                rows = (then[i] if then and i < len(then) else None, now[i] if now and i < len(now) else None)
                why = f"its map {what} against the baseline's{balance}"
                found.append(FailingSample(explainer, i, _label(shape.labels or labels, i), why, *rows))
                continue
            moved = [abs(a[1] - b[1]) for a, b in zip(shape.maps, then_shape)]
            if moved and max(moved) >= BALANCE_MOVED:  # signs moved, none from clearly one to clearly the other
                i = max(range(len(moved)), key=moved.__getitem__)
                why = f"its sign balance moved most ({then_shape[i][1]:+.2f} → {shape.maps[i][1]:+.2f})"
                rows = (then[i] if then and i < len(then) else None, now[i] if now and i < len(now) else None)
                found.append(FailingSample(explainer, i, _label(shape.labels or labels, i), why, *rows))
                continue
        scored = [r for r in mine if r.passed is False and r.samples]
        if scored:
            worst = scored[0]
            values = worst.samples or []
            i = min(range(len(values)), key=values.__getitem__)
            why = f"{worst.metric} {values[i]:.2f}, its lowest"
            row = now[i] if now is not None and i < len(now) else None
            found.append(FailingSample(explainer, i, _label(worst.labels or labels, i), why, None, row))
    return found


def _masses(stored: StoredFingerprint | None) -> list[list[float]] | None:
    """Each sample's |attribution| mass per feature of a stored fingerprint (None: none)."""
    return Fingerprint.read(stored).mass.tolist() if stored else None


def _label(labels: Sequence[int] | None, i: int) -> int | None:
    return int(labels[i]) if labels is not None and i < len(labels) else None
