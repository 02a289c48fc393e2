"""Drift: an explainer's maps against the baseline's, sample by sample (the
fingerprint a judged explainer test keeps, compared where the baseline kept one)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.properties import NOISE_FACTOR
from pytest_chaosmining.core.records import FINGERPRINT, Recorder
from pytest_chaosmining.verdict.baseline import MOVED
from pytest_chaosmining.verdict.judge import Check, Judge

if TYPE_CHECKING:
    import pytest

    from pytest_chaosmining.core.metrics.drift import Agreement, DrawNoise

#: one sample's map that agrees less than this with the baseline's has nothing of it left (an empty
#: map agrees 0): a sampler's floor for one sample, whatever its draws do
UNRELATED = 0.05


def drift_checks(
    judge: Judge,
    node: pytest.Item,
    suite: str,
    explainer: str,
    result: Mapping[str, object],
    record: Recorder,
    bar_key: str,
    what: str,
    noise: Callable[[], DrawNoise] | None = None,
    sized: bool = False,
) -> list[Check]:
    """Record the fingerprint of ``explainer``'s maps (results.json keeps it); against
    a baseline that kept one for the same case, two checks (the random control's maps
    are noise: recorded, never compared):

    - ``map_agreement``: the maps' mean agreement with the baseline's over every
      explained sample, at least the calibrated bar at ``bar_key`` (a change to every map);
    - ``sample_agreement``: the agreement of the sample that moved most but the
      allowed few (``[<suite>.<tier>.sample_drift]``), at least its floor (a change
      confined to some inputs: one class, a few samples, which the mean dilutes).

    Maps that moved beyond either bar are measured against the explainer's own noise
    on the case (``noise()``: how well two of its draws agree, 1 when deterministic): a
    stochastic explainer's maps may move on average
    :data:`~pytest_chaosmining.core.metrics.properties.NOISE_FACTOR` times as far as its
    draws lie apart, plus one sample entirely (one sample's draws of a sampler have a heavy
    tail: a reseed moved single samples' maps to 0.18 where 16 draws agreed to 0.99), and
    each sample down to :data:`UNRELATED`; so a reseeded SmoothGrad passes and a changed
    one, or one whose maps of some inputs are gone, does not.  A sampler's sizes move
    with its draws: its ``size_agreement`` is recorded, not judged."""
    maps = result.get(FINGERPRINT)
    if not isinstance(maps, list):
        return []
    kept = record(FINGERPRINT, len(maps))
    kept.maps = maps
    judge.record(node, kept)
    baseline = judge.baseline
    moved = baseline.moved(kept) if baseline is not None else None
    if baseline is None or moved is None or judge.is_control(explainer):
        return []
    tier = judge.tier
    bar = judge.thresholds.drift_bar(suite, tier, "map_agreement", bar_key, explainer)
    rule = judge.thresholds.sample_drift(suite, tier)
    verdict = rule.verdict(moved) if rule is not None else None
    size_bar = judge.thresholds.drift_bar(suite, tier, "size_agreement", bar_key, explainer) if sized else None
    allowance = ""
    beyond = (bar is not None and moved.mean < bar) or (verdict is not None and verdict[0] < verdict[1])
    own_noise = functools.cache(noise) if noise is not None else None  # measured once, where a bar needs it

    def sampler() -> bool:
        """Whether the explainer's own draws lie apart."""
        return own_noise is not None and own_noise().mean < MOVED

    if size_bar is not None and moved.size < size_bar and sampler():
        size_bar = None  # a sampler's sizes move with its draws (recorded, not judged)
    if beyond and sampler():  # a sampler: one sample's draws may lie far apart (a heavy tail)
        assert own_noise is not None
        own = own_noise()
        n = len(moved.cosines)
        bar = None if bar is None else min(bar, 1.0 - NOISE_FACTOR * (1.0 - own.mean) - 1.0 / n)
        verdict = rule.verdict(moved, [UNRELATED] * n) if rule is not None else None
        allowance = (
            f"; its own draws agree to {own.mean:.4f} (one sample to {own.sample:.4f}), so the mean's bar allows "
            f"{NOISE_FACTOR:g} x that noise and one sample moved entirely, and one sample's floor is {UNRELATED:g}"
        )
    if bar is not None and MOVED > moved.mean >= bar and (verdict is None or verdict[0] >= verdict[1]):
        judge.note_change(
            node,
            f"{what}: its maps moved from the baseline's (cosine of the feature masses {moved.mean:.4f}, within the "
            f"bar {bar:g}; explained sample {moved.worst} moved most, {moved.least:.4f}{allowance}): changed; if "
            "the change is intended, make this run the baseline",
        )
    source = f"baseline {baseline.source}{allowance}"
    checks: list[Check] = [
        (
            record("map_agreement", moved.mean),
            bar,
            f"{what}: its maps moved from the baseline's (mean cosine of the feature masses over "
            f"{len(moved.cosines)} explained samples {moved.mean:.4f}; sample {moved.worst} moved most, "
            f"{moved.least:.4f}; {source})",
        )
    ]
    if sized:
        checks.append(
            (
                record("size_agreement", moved.size),
                size_bar,
                f"{what}: the size of its maps moved from the baseline's (exp(-mean |ln ratio|) of each explained "
                f"sample's total |attribution| against the baseline's, {moved.size:.4f}: {_ratios(moved)}; it "
                f"promises its maps' size (completeness, or LRP relevance); {source})",
            )
        )
    if rule is not None and verdict is not None:
        value, floor, lost = verdict
        checks.append(
            (
                record("sample_agreement", value),
                floor,
                f"{what}: the maps of {len(lost)} of {len(moved.cosines)} explained samples moved from the "
                f"baseline's beyond the per-sample floor {rule.floor:g} (at most {rule.allowed} may: a change confined "
                f"to some inputs; samples {_listed(lost)}; {source})",
            )
        )
    return checks


def _ratios(moved: Agreement) -> str:
    """The spread of the per-sample size ratios, for a message."""
    ratios = [r for r in moved.ratios if r == r]  # NaN left out
    if not ratios:
        return "no ratio"
    ordered = sorted(ratios)
    return f"ratios {ordered[0]:.3g} to {ordered[-1]:.3g}, median {ordered[len(ordered) // 2]:.3g}"


def _listed(indices: list[int], most: int = 12) -> str:
    """``indices`` as a short list (the first ``most``, then how many more)."""
    shown = ", ".join(str(i) for i in indices[:most])
    return shown + (f" and {len(indices) - most} more" if len(indices) > most else "") if indices else "none"
