"""Properties every correct attribution method has, measured from its own maps:
no baseline, no history.

- **Batch consistency**: a sample's map does not depend on the other samples of
  its batch (their order, their number, a copy of itself beside it).
- **Noise**: how far two of the explainer's own draws of one sample's map lie
  apart (zero for a deterministic method).  Checks that compare maps allow
  :data:`NOISE_FACTOR` times it.
- **Target sensitivity**: where the model's logits differ, the map asked for one
  class differs from the map asked for another.
- **Truth sign**: a signed map gives a feature the sign of its true effect where
  every exact attribution of the model (gradient, path, ablation) agrees on it.
- **Completeness fit**: a complete method's sums are ``f(x) − f(baseline)`` in size.
- **Equivalence**: an explainer that declares it implements a known method agrees
  with that method's maps on the same samples, within both their noises.

Maps compare by the cosine of the signed, flattened maps of one sample: a
rescaled map keeps 1, a flipped sign gives −1, a map of another sample less.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: 1 − cosine below which two maps of one sample count as equal (float rounding of batched calls)
EQUAL = 1e-5
#: how many times its own measured noise a stochastic explainer's maps may move (the drift a
#: reseed causes reached 3 x the noise measured on the case; benchmarks/axioms/properties.md)
NOISE_FACTOR = 4.0
#: 1 − cosine that the maps for two classes must exceed (a map that ignores the target scores 0)
TARGET_FLOOR = 1e-3
#: an entry of the truth counts for the sign check from this share of the mean |truth| on
#: (nearer 0 the sign is within the model's approximation error)
SIGN_FLOOR = 0.1
#: the fewest counted entries of each sign for a sign judgement
MIN_PER_SIGN = 30
#: the copies of every sample in one call that measure a sampler's noise where its seeds
#: show none (it seeds itself): with the first batch's, six draws of each sample, fifteen pairs
#: (two copies gave a mean so unsteady that 28 of 360 cases of a self-seeded GradientShap
#: failed batch consistency; six draws: none; benchmarks/axioms/self_seeded/self_seeded.md)
DRAW_COPIES = 5


def row_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per sample (first axis): the cosine of the two signed maps, flattened (two
    all-zero maps: 1; an all-zero map against another: 0)."""
    x = np.asarray(a, dtype=np.float64).reshape(len(a), -1)
    y = np.asarray(b, dtype=np.float64).reshape(len(b), -1)
    nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    both_zero = (nx == 0) & (ny == 0)
    return np.where(both_zero, 1.0, (x * y).sum(axis=1) / np.maximum(nx * ny, 1e-300))


def dissimilarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per sample: 1 − :func:`row_similarity` (0 equal, 1 unrelated, 2 flipped)."""
    return 1.0 - row_similarity(a, b)


def sample_blind(maps: np.ndarray) -> bool:
    """Whether every sample got the same map (a prior, a constant, one sample's map for all)."""
    flat = np.asarray(maps, dtype=np.float64).reshape(len(maps), -1)
    return len(flat) > 1 and bool(np.all(dissimilarity(flat, np.broadcast_to(flat[:1], flat.shape)) < EQUAL))


def twins_identified(maps: np.ndarray, pairs: list[tuple[int, int]]) -> bool:
    """Whether each of ``pairs`` (two rows of one sample) agree better with each other
    than either does with any other row: then their difference is noise about the
    sample, not another sample's map."""
    flat = np.asarray(maps, dtype=np.float64).reshape(len(maps), -1)
    for i, j in pairs:
        for own, twin in ((i, j), (j, i)):
            others = [k for k in range(len(flat)) if k not in (i, j)]
            sims = row_similarity(np.broadcast_to(flat[own], (len(others), flat.shape[1])), flat[others])
            if row_similarity(flat[own : own + 1], flat[twin : twin + 1])[0] <= sims.max(initial=-2.0):
                return False
    return True


@dataclass(frozen=True)
class Noise:
    """The spread between two of an explainer's own draws of one sample's map: the
    largest and the mean 1 − cosine over the compared samples, and where it showed
    (``seed``: the maps move with the random seed; ``twins``: two copies of one
    sample in one batch got different maps; ``none``: deterministic)."""

    dissimilarity: float
    source: str
    mean: float = 0.0

    @property
    def stochastic(self) -> bool:
        """Whether the explainer's maps are samples (its noise exceeds float rounding)."""
        return self.source != "none"

    @property
    def agreement(self) -> float:
        """1 − :attr:`dissimilarity`: how well two of its draws agree at worst."""
        return 1.0 - self.dissimilarity


def measured_noise(reseeded: np.ndarray, twins: np.ndarray, twins_ok: bool) -> Noise:
    """The noise shown by ``reseeded`` (per-sample dissimilarity between calls with two
    seeds) and ``twins`` (between two copies of a sample in one batch; counted only
    where ``twins_ok``: each copy is the other's nearest map)."""
    seed = float(np.max(reseeded, initial=0.0))
    twin = float(np.max(twins, initial=0.0)) if twins_ok else 0.0
    worst = max(seed, twin)
    if worst < EQUAL:
        return Noise(0.0, "none")
    if seed >= twin:
        return Noise(worst, "seed", float(np.mean(reseeded)))
    return Noise(worst, "twins", float(np.mean(twins)))


def spread_of_draws(
    draw: Callable[[list[int]], np.ndarray], first: np.ndarray, copies: int = DRAW_COPIES
) -> np.ndarray | None:
    """How far every two of a sample's draws lie apart (1 − cosine, pairs × samples,
    flattened): ``first`` (the maps of samples ``0 … len(first)−1``) and ``copies``
    copies of each of them in one call (``draw(rows)``: the maps of those rows), for a
    sampler that seeds itself per call and so draws anew only within one.  None where
    the copies agree: a map that moves only between calls moves with its batch (a bug),
    not with draws of its own."""
    samples = len(first)
    again = draw(list(range(samples)) * copies)
    drawn = [again[i * samples : (i + 1) * samples] for i in range(copies)]
    among = [dissimilarity(a, b) for i, a in enumerate(drawn) for b in drawn[i + 1 :]]
    if float(np.max(among, initial=0.0)) < EQUAL:
        return None
    return np.concatenate([dissimilarity(np.asarray(first), d) for d in drawn] + among)


def noise_of(
    explain: Callable[[list[int], int], np.ndarray], samples: int, twins: int = 2, declared: bool = False
) -> Noise:
    """The noise of an explainer's maps of the first ``samples`` samples (``explain(rows,
    seed)``: the maps of those rows under that seed): two seeds' draws of one batch that
    holds ``twins`` of them twice (a sampler that seeds itself draws anew only within a call).
    For a ``declared`` sampler where neither shows any, :func:`spread_of_draws`: where its
    draws dominate its maps two copies are not each other's nearest map."""
    rows = list(range(samples)) + list(range(twins))
    first, again = explain(rows, 0), explain(rows, 1)
    pairs = [(i, samples + i) for i in range(twins)]
    twin_moves = dissimilarity(first[:twins], first[samples:])
    noise = measured_noise(dissimilarity(first, again), twin_moves, twins_identified(first, pairs))
    if declared and not noise.stochastic:
        apart = spread_of_draws(lambda index: explain(index, 0), first[:samples])
        if apart is not None:  # a declaration measures noise, never invents it
            noise = Noise(float(apart.max()), "twins", float(apart.mean()))
    return noise


def batch_consistency(moved: np.ndarray, noise: Noise, factor: float = NOISE_FACTOR) -> float:
    """1 − how far a sample's map moved between its batch and another batch (``moved``:
    per sample) beyond ``factor`` times the explainer's own noise: for a deterministic
    explainer the sample that moved most counts (any move is a bug), for a stochastic
    one the mean move against its mean noise (a sampler's worst draw is far from its
    typical one).  1 for a consistent method, below for one whose maps depend on the
    other samples."""
    values = np.asarray(moved, dtype=np.float64)
    if not noise.stochastic:
        return float(1.0 - float(np.max(values, initial=0.0)))
    typical = float(values.mean()) if values.size else 0.0
    return float(1.0 - max(0.0, typical - factor * noise.mean))


def equivalence(apart: np.ndarray, noise: np.ndarray, factor: float = NOISE_FACTOR) -> float:
    """1 − how far two explainers' maps of the same samples lie apart (``apart``: per
    sample) beyond ``factor`` times their noise (``noise``: the larger of the two
    explainers' own, per sample): where both are deterministic the sample furthest
    apart counts, else the mean against the mean noise (as :func:`batch_consistency`);
    1 where they agree."""
    values = np.asarray(apart, dtype=np.float64)
    spread = np.asarray(noise, dtype=np.float64)
    if float(np.max(spread, initial=0.0)) < EQUAL:
        return float(1.0 - float(np.max(values, initial=0.0)))
    return float(1.0 - max(0.0, float(values.mean()) - factor * float(spread.mean())))


def target_sensitivity(between_targets: np.ndarray, noise: np.ndarray, factor: float = NOISE_FACTOR) -> float:
    """The share of samples whose maps for two classes differ (per-sample dissimilarity
    ``between_targets``) by more than :data:`TARGET_FLOOR` and ``factor`` times the
    sample's own noise (``noise``, per sample; zero for a deterministic method)."""
    between = np.asarray(between_targets, dtype=np.float64)
    if between.size == 0:
        return 0.0
    return float(np.mean(between > np.maximum(TARGET_FLOOR, factor * np.asarray(noise, dtype=np.float64))))


def is_signed(attr: np.ndarray) -> bool:
    """Whether a map carries signs (it has values of both signs)."""
    values = np.asarray(attr)
    return bool((values < 0).any() and (values > 0).any())


def _counted(truths: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The entries where every truth has the same sign and the first clears
    :data:`SIGN_FLOOR` of its mean |value|: those of positive and of negative effect."""
    stack = np.stack([np.asarray(t, dtype=np.float64) for t in truths])
    signs = np.sign(stack)
    agreed = np.all(signs == signs[:1], axis=0) & (signs[0] != 0)
    size = np.abs(stack[0])
    nonzero = size[size > 0]
    if nonzero.size == 0:
        return np.zeros(size.shape, dtype=bool), np.zeros(size.shape, dtype=bool)
    counted = agreed & (size >= SIGN_FLOOR * nonzero.mean())
    return counted & (signs[0] > 0), counted & (signs[0] < 0)


def counted_signs(truths: list[np.ndarray]) -> str:
    """How many entries of each sign the sign check counts (for its message)."""
    positive, negative = _counted(truths)
    return f"{int(positive.sum())} of positive and {int(negative.sum())} of negative effect"


def truth_sign_agreement(attr: np.ndarray, truths: list[np.ndarray], one_sided: bool = False) -> float | None:
    """Balanced agreement of the signs of ``attr`` with the true sign of each feature's
    effect, on the entries where every one of ``truths`` (exact attributions of the
    same shape: gradient, path, ablation) has the same sign and the first clears
    :data:`SIGN_FLOOR` of its mean |value|: the mean of the share of positive entries
    attributed positive and of negative entries attributed negative, in [0, 1].  A
    flipped sign scores 0, a map of one sign everywhere 0.5.  Where fewer than
    :data:`MIN_PER_SIGN` entries of a sign count: with ``one_sided`` the share of the
    other sign alone (a map of that sign everywhere scores 1 there, so only signed
    maps are judged so), else None; None where neither sign has enough."""
    values = np.asarray(attr, dtype=np.float64)
    if any(np.shape(t) != values.shape for t in truths):
        raise ValueError(f"truth_sign_agreement: shapes differ {[np.shape(t) for t in truths]} vs {values.shape}")
    positive, negative = _counted(truths)
    shares = [
        float((values[chosen] * sign > 0).mean())
        for chosen, sign in ((positive, 1.0), (negative, -1.0))
        if chosen.sum() >= MIN_PER_SIGN
    ]
    if len(shares) == 2:
        return 0.5 * (shares[0] + shares[1])
    return shares[0] if one_sided and shares else None


def completeness_fit(sums: np.ndarray, change: np.ndarray) -> float:
    """1 − the mean |Σ attribution − (f(x) − f(baseline))| over the samples, relative
    to the mean |f(x) − f(baseline)|: 1 for exact completeness, 0 or below (floored
    at −1) for sums of the wrong size or sign."""
    sums = np.asarray(sums, dtype=np.float64).ravel()
    change = np.asarray(change, dtype=np.float64).ravel()
    if sums.shape != change.shape:
        raise ValueError(f"completeness_fit: shapes differ {sums.shape} vs {change.shape}")
    scale = float(np.abs(change).mean())
    if scale == 0.0:
        return 1.0 if float(np.abs(sums).max(initial=0.0)) == 0.0 else -1.0
    return float(max(-1.0, 1.0 - np.abs(sums - change).mean() / scale))
