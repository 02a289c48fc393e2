"""Drift: an explainer's maps against the baseline's, sample by sample (the
fingerprint a judged explainer test keeps, compared where the baseline kept one)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.drift import (
    NOISE_SAMPLES,
    SIZE_FACTOR,
    UNSEEN_OUTLINE_SHARE,
    UNSEEN_SIGN_SHARE,
    DrawNoise,
)
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint
from pytest_chaosmining.core.metrics.properties import NOISE_FACTOR
from pytest_chaosmining.core.records import FINGERPRINT, NOISE_METRICS, OUTLINE, TARGETS, Record, Recorder
from pytest_chaosmining.verdict.baseline import MOVED, SampleDrift
from pytest_chaosmining.verdict.class_moves import LEAST_MOVE, Retargeting, class_moved, described, target_evidence
from pytest_chaosmining.verdict.judge import Check, Judge
from pytest_chaosmining.verdict.rule import BaselineRule
from pytest_chaosmining.verdict.where import HINT_SAMPLES, in_classes

if TYPE_CHECKING:
    import pytest

    from pytest_chaosmining.core.metrics.drift import Agreement

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
    stochastic: bool = False,
    retarget: Retargeting | None = None,
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
    with its draws: its ``size_agreement`` is recorded, not judged.

    - ``outline_kept``: the share of *every* explained sample (the fingerprint keeps
      the first 32) whose map neither emptied, appeared or resized far beyond the typical
      ratio, nor flipped a clear sign (:func:`~pytest_chaosmining.core.metrics.drift.outline_change`);
      at most the per-sample rule's allowed few may change, a sampler as many more as
      :data:`NOISE_FACTOR` times the share its own draws change (at least
      :data:`~pytest_chaosmining.core.metrics.drift.UNSEEN_OUTLINE_SHARE`), plus one;
    - ``signs_kept``: of the baseline's clearly positive, clearly negative and mixed features,
      the least share whose sign the maps kept (a flipped sign and a map turned unsigned: 0),
      at least its bar, a sampler's loosened only by its own draws' noise in their signs (at
      least :data:`~pytest_chaosmining.core.metrics.drift.UNSEEN_SIGN_SHARE`);
    - ``classes_kept``: the share of the classes whose explained samples did not move as a
      whole (:func:`~pytest_chaosmining.verdict.class_moves.class_moved`), 1 (a change
      confined to one class: the wrong target for it, with the evidence where ``retarget``
      can ask the explainer again)."""
    maps = result.get(FINGERPRINT)
    if not isinstance(maps, dict):
        return []
    labels = result.get(TARGETS)
    labels = [int(c) for c in labels] if isinstance(labels, list) else None
    samples = int(maps["samples"])
    kept = record(FINGERPRINT, samples)
    kept.maps = maps
    kept.labels = labels[:samples] if labels is not None else None
    judge.record(node, kept)
    shape = result.get(OUTLINE)
    outlined = None
    if isinstance(shape, list):
        outlined = record(OUTLINE, len(shape))
        outlined.maps = shape
        outlined.labels = labels if labels is not None and len(labels) == len(shape) else None
        judge.record(node, outlined)
    measured = functools.cache(noise) if noise is not None else None  # measured once, where needed
    if stochastic and measured is not None:  # a declared sampler's noise: a later run's allowance reads it
        for field, metric in NOISE_METRICS.items():
            judge.record(node, record(metric, getattr(measured(), field)))
    if judge.rule is None or judge.is_control(explainer):
        return []
    verdict = drift_verdict(judge.rule, kept, outlined, bar_key, what, measured, sized, retarget)
    if verdict.change is not None:
        judge.note_change(node, verdict.change)
    return [(record(metric, value), bar, message) for metric, value, bar, message in verdict.checks]


@dataclass(frozen=True)
class DriftVerdict:
    """The drift checks of one fingerprint against the baseline's: ``(metric, value, bar,
    message)`` each (judged: value >= bar, or no bar), and the note of maps that moved
    within the bars (None where they did not move)."""

    checks: list[tuple[str, float, float | None, str]]
    change: str | None


def drift_verdict(
    judged_by: BaselineRule,
    kept: Record,
    outlined: Record | None,
    bar_key: str,
    what: str,
    noise: Callable[[], DrawNoise] | None,
    sized: bool,
    retarget: Retargeting | None = None,
) -> DriftVerdict:
    """The drift checks of the fingerprint ``kept`` (and the outline ``outlined``) against
    the baseline's, with this run's own noise ``noise()`` (None: none measured, as
    deterministic): the rule the run judges by and ``chaosmining-compare`` repeats
    (:func:`drift_checks`), its bars those of ``judged_by``'s thresholds and tier."""
    baseline, thresholds, tier = judged_by.baseline, judged_by.thresholds, judged_by.tier
    suite, explainer = kept.suite, kept.explainer
    moved = baseline.moved(kept)
    if moved is None:
        return DriftVerdict([], None)
    bar = thresholds.drift_bar(suite, tier, "map_agreement", bar_key, explainer)
    rule = judged_by.drops.sample_drift(suite)
    verdict = rule.verdict(moved) if rule is not None else None
    sampled = rule  # the per-sample rule as it judges (a sampler's allows more where its draws saw few samples)
    size_bar = thresholds.drift_bar(suite, tier, "size_agreement", bar_key, explainer) if sized else None
    allowance = ""
    beyond = (bar is not None and moved.mean < bar) or (verdict is not None and verdict[0] < verdict[1])
    then = baseline.noise_of(kept)

    @functools.cache
    def own_noise() -> DrawNoise:
        """The explainer's own noise on the case: the stricter of this run's and the
        baseline run's (a regression that adds noise must not loosen its own bars)."""
        if then is not None and then.mean >= MOVED:  # deterministic in the baseline: nothing to measure
            return then
        now = noise() if noise is not None else DrawNoise.deterministic()
        if then is None:
            return now
        return DrawNoise(
            max(now.mean, then.mean),
            max(now.sample, then.sample),
            min(now.outlines, then.outlines),
            max(now.signs, then.signs),
        )

    def sampler() -> bool:
        """Whether the explainer's own draws lie apart (in both runs)."""
        return own_noise().mean < MOVED

    if size_bar is not None and moved.size < size_bar and sampler():
        size_bar = None  # a sampler's sizes move with its draws (recorded, not judged)
    if beyond and sampler():  # a sampler: one sample's draws may lie far apart (a heavy tail)
        own = own_noise()
        n = len(moved.cosines)
        bar = None if bar is None else _noise_bar(bar, own.mean, n)
        if rule is not None:  # rows beyond those its draws were measured on: the rule of three, 4 x, over them
            unprobed = max(0, n - NOISE_SAMPLES)
            sampled = SampleDrift(rule.floor, rule.allowed + _noise_samples(UNSEEN_OUTLINE_SHARE, unprobed))
            verdict = sampled.verdict(moved, [UNRELATED] * n)
        allowance = (
            f"; its own draws agree to {own.mean:.4f} (one sample to {own.sample:.4f}; the stricter of this run's "
            "and the baseline's), so the mean's bar allows "
            f"{NOISE_FACTOR:g} x that noise and one sample moved entirely, and one sample's floor is {UNRELATED:g}"
        )
    change = None
    if bar is not None and MOVED > moved.mean >= bar and (verdict is None or verdict[0] >= verdict[1]):
        shifted = [i for i, m in enumerate(moved.moves()) if m > 1.0 - MOVED]
        change = (
            f"{what}: its maps moved from the baseline's (cosine of the feature masses {moved.mean:.4f}, within the "
            f"bar {bar:g}; explained sample {moved.worst} moved most, {moved.least:.4f}; {len(shifted)} of "
            f"{len(moved.cosines)} samples moved{_where(shifted, kept.labels)}{allowance}): changed; if the change "
            "is intended, make this run the baseline"
        )
    checks: list[tuple[str, float, float | None, str]] = [
        (
            "map_agreement",
            moved.mean,
            bar,
            f"{what}: its maps moved from the baseline's (mean cosine of the feature masses over "
            f"{len(moved.cosines)} explained samples {moved.mean:.4f}; sample {moved.worst} moved most, "
            f"{moved.least:.4f}{allowance})",
        )
    ]
    if sized:
        checks.append(
            (
                "size_agreement",
                moved.size,
                size_bar,
                f"{what}: the size of its maps moved from the baseline's (exp(-mean |ln ratio|) of each explained "
                f"sample's total |attribution| against the baseline's, {moved.size:.4f}: {_ratios(moved)}; it "
                f"promises its maps' size (completeness, or LRP relevance){allowance})",
            )
        )
    outline = baseline.outline_moved(outlined) if outlined is not None else None
    if outline is not None and outline.n:
        allowed = rule.allowed if rule is not None else 0
        if len(outline.lost) > allowed and sampler():  # a sampler's single samples may change with its draws
            share = max(own_noise().outlines, UNSEEN_OUTLINE_SHARE)  # a few draws miss a rare change
            allowed += _noise_samples(share, outline.n) + 1
        checks.append(
            (
                "outline_kept",
                outline.kept,
                1.0 - allowed / outline.n,
                f"{what}: the maps of {len(outline.lost)} of {outline.n} explained samples changed entirely from the "
                f"baseline's{_where(outline.lost, outlined.labels if outlined else None)} (at most {allowed} may): "
                f"{len(outline.resized)} emptied, appeared or resized beyond "
                f"{SIZE_FACTOR:g} x the typical ratio (samples {_listed(list(outline.resized))}), "
                f"{len(outline.flipped)} clearly signed now clearly of the other sign (samples "
                f"{_listed(list(outline.flipped))}){allowance}",
            )
        )
    signs, sign_bar = moved.signs, thresholds.drift_bar(suite, tier, "signs_kept", bar_key, explainer)
    if signs is not None:
        n = len(moved.cosines)
        if sign_bar is not None and signs < sign_bar and sampler():  # a sampler: by its draws' noise in signs alone
            sign_bar = _noise_bar(sign_bar, min(own_noise().signs, 1.0 - UNSEEN_SIGN_SHARE), n)
        lost_signs = moved.signs_lost(0.5)
        checks.append(
            (
                "signs_kept",
                signs,
                sign_bar,
                f"{what}: the signs of its maps moved from the baseline's (of the baseline's clearly positive, "
                f"clearly negative and mixed features over {n} explained samples, the least share that kept its sign "
                f"is {signs:.4f}; {len(lost_signs)} samples kept their signs on less than half their mass"
                f"{_where(lost_signs, kept.labels)}: samples {_listed(lost_signs)}; a flipped sign keeps none, a map "
                f"turned unsigned none of its negative or mixed features{allowance})",
            )
        )
    labels = kept.labels
    if labels and len(set(labels)) > 1:
        classes = len(set(labels))
        message = f"{what}: no class's explained samples moved as a whole"
        found, target = class_moved(moved, labels, fewest=1), None
        if found is not None and sampler():  # a sampler's samples move with its draws: beyond any sample's noise
            found = class_moved(moved, labels, max(LEAST_MOVE, NOISE_FACTOR * (1.0 - own_noise().sample)), 1)
        if found is not None:
            now = Fingerprint.read(kept.maps) if kept.maps is not None else None
            target = target_evidence(found, now, retarget) if now is not None else None
            if (
                target is None and len(found.samples) < HINT_SAMPLES
            ):  # one sample: a class's change only by the evidence
                found = None
        if found is not None:
            message = f"{what}: {described(found, target, classes)}{allowance}"
        checks.append(("classes_kept", 1.0 - (found is not None) / classes, 1.0, message))
    if rule is not None and sampled is not None and verdict is not None:
        value, floor, lost = verdict
        checks.append(
            (
                "sample_agreement",
                value,
                floor,
                f"{what}: the maps of {len(lost)} of {len(moved.cosines)} explained samples moved from the "
                f"baseline's beyond the per-sample floor {rule.floor:g}{_where(lost, kept.labels)} (at most "
                f"{sampled.allowed} may: a change confined "
                f"to some inputs; samples {_listed(lost)}{allowance})",
            )
        )
    return DriftVerdict(checks, change)


def _noise_bar(bar: float, agreement: float, n: int) -> float:
    """``bar`` for a sampler whose own draws agree to ``agreement``: at most
    :data:`NOISE_FACTOR` x that noise below 1, and one of ``n`` samples moved entirely."""
    return min(bar, 1.0 - NOISE_FACTOR * (1.0 - agreement) - 1.0 / n)


def _noise_samples(share: float, n: int) -> int:
    """How many of ``n`` samples a sampler may change entirely whose own draws change
    ``share`` of theirs: :data:`NOISE_FACTOR` x as many, rounded up."""
    return math.ceil(NOISE_FACTOR * share * n)


def _where(changed: Sequence[int], labels: Sequence[int] | None) -> str:
    """``, all in class 5: …`` where the samples have classes, else nothing."""
    found = in_classes(changed, labels)
    return f", {found}" if found else ""


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
