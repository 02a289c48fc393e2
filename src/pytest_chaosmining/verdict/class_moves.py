"""A change confined to one class: the explained samples of one class all moved from the
baseline's maps, each far more than any sample of another class, so that a bug on one
class's inputs (the wrong target for class 5) fails even where the mean over every
sample stays within its bar and each sample within its floor.  Where the run can ask the
explainer again (:class:`Retargeting`), the evidence of a target change: the maps of that
class are the explainer's maps for another class."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_chaosmining.core.metrics.drift import Agreement, map_agreement
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint
from pytest_chaosmining.verdict.where import HINT_SAMPLES

#: a class moved as a whole only where each of its samples moved at least this far (1 − cosine)
LEAST_MOVE = 0.01
#: ... and each at least this many times as far as the sample of another class that moved most
FACTOR = 4.0
#: the maps of a class are its maps for another target where they agree this well (cosine)
SAME_MAPS = 0.99


@dataclass(frozen=True)
class Retargeting:
    """The run's way to ask the explainer again: its fingerprint of some explained samples
    (indices into the run's) for another target (``maps``), and how many classes the model
    has (``classes``); each called only where a class moved as a whole."""

    maps: Callable[[Sequence[int], int], Fingerprint]
    classes: Callable[[], int]


@dataclass(frozen=True)
class ClassMove:
    """One class whose explained samples all moved (``samples``): the least any of them
    moved (``least``, 1 − cosine) and the most any sample of another class moved (``others``)."""

    label: int
    samples: tuple[int, ...]
    least: float
    others: float


def class_moved(
    moved: Agreement, labels: Sequence[int] | None, least: float = LEAST_MOVE, fewest: int = HINT_SAMPLES
) -> ClassMove | None:
    """The class whose samples (at least ``fewest``) each moved at least ``least`` and
    :data:`FACTOR` times as far as any sample of every other class (None: no class did, or
    the samples have no classes).  A class of one explained sample is no class's change on
    its own: the caller asks for ``fewest=1`` only with the evidence of a target change."""
    moves = moved.moves()
    if not labels or len(labels) < len(moves) or not len(moves):
        return None
    tags = np.asarray(labels[: len(moves)])
    for label in sorted(set(tags.tolist())):
        inside = tags == label
        if inside.sum() < fewest or inside.all():
            continue
        lowest, rest = float(moves[inside].min()), float(moves[~inside].max())
        if lowest >= least and lowest >= FACTOR * rest:
            return ClassMove(int(label), tuple(int(i) for i in np.flatnonzero(inside)), lowest, rest)
    return None


def target_evidence(found: ClassMove, now: Fingerprint, retarget: Retargeting | None) -> int | None:
    """The other class whose maps, as the explainer gives them now, the class's maps are
    (their signed sums agreeing to :data:`SAME_MAPS`): the target it explains in place of
    the class asked for (None: none, or the run cannot ask)."""
    if retarget is None:
        return None
    mine = now.rows(found.samples)
    for other in range(retarget.classes()):
        if other == found.label:
            continue
        agreement = map_agreement(mine, retarget.maps(found.samples, other))
        closest = np.asarray(agreement.signed or agreement.cosines)
        if len(closest) and float(closest.min()) >= SAME_MAPS:
            return other
    return None


def described(found: ClassMove, target: int | None, classes: int) -> str:
    """The evidence, for a failed check's message (its first clause says what changed)."""
    evidence = (
        f"the maps of all {len(found.samples)} explained samples of class {found.label} moved from the baseline's "
        f"(each at least {found.least:.4f}, 1 - cosine; no sample of the other {classes - 1} classes more than "
        f"{found.others:.4f})"
    )
    if target is None:
        return f"a change confined to class {found.label}: {evidence}"
    return (
        f"the wrong target for class {found.label}, class {target}: {evidence}, and its maps of them are its maps "
        f"for class {target} (signed feature sums agree to {SAME_MAPS:g} or better)"
    )
