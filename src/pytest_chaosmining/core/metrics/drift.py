"""Attribution drift: how far an explainer's maps moved from a baseline's.

A run keeps a compact fingerprint of each explainer's maps per case: the
|attribution| mass of each of the suite's features (a tabular column, an image
patch, an audio channel × time segment) of every explained sample, up to
:data:`FINGERPRINT_SAMPLES`.  Against a baseline the agreement is the cosine
similarity of the fingerprints, per sample (:class:`Agreement`): rescaling a map
(×1000, per sample) and flipping its sign keep it at 1 (the sign check judges
signs); moving mass between features lowers it, whether or not the top-k overlap
changes.  The mean over the samples judges a change that touches every map; the
samples below a per-sample floor (:attr:`Agreement.lost`) judge one confined to
some inputs (one class, a few samples), which the mean dilutes.  For an explainer whose
maps' size is part of what it returns (``Explainer.sized``: LRP relevance, attributions
that sum to the output), :attr:`Agreement.size` compares each sample's total mass too:
a rule that now counts a bias twice moves every map by a factor and no cosine sees it.

Beside the fingerprint, an :func:`outline` of *every* explained sample (the symbolic
suite explains 400 rows, the fingerprint keeps 32): each map's total |attribution| and
its sign balance.  Against the baseline's (:func:`outline_change`) it finds the samples
whose map emptied, appeared or changed size far beyond the run's typical ratio, and
those whose clearly signed map now clearly has the other sign (a flipped sign keeps every
cosine of |attribution| at 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_chaosmining.core.metrics.attribution import feature_sums

#: explained samples whose maps a fingerprint keeps (every explained sample of the smoke tier)
FINGERPRINT_SAMPLES = 32
#: significant digits kept of each feature's mass (a fingerprint is stored in results.json)
DIGITS = 5
#: significant digits kept of an outline's mass (its rules compare ratios beyond 20 x, signs beyond 0.5)
OUTLINE_DIGITS = 3
#: a map whose sign balance (sum over |sum|) is at least this far from 0 is clearly signed
CLEAR_SIGN = 0.5
#: a sample's size ratio beyond this factor of the run's median ratio, either way, changed its
#: map entirely (an emptied map: 0; a map where there was none: infinite)
SIZE_FACTOR = 20.0
#: draws of a sampler's maps its drift noise is measured from (two seeds, 8 copies each)
NOISE_DRAWS = 16
#: the least share of samples whose outline a sampler's draw is taken to change where its
#: :data:`NOISE_DRAWS` draws of :data:`FINGERPRINT_SAMPLES` samples changed none: the rule of
#: three over the disjoint pairs of draws (3 / 256; GradientShap with fewer samples flipped
#: 2 of 400 rows' signs where 16 draws of 32 samples had flipped none)
UNSEEN_OUTLINE_SHARE = 3 / (FINGERPRINT_SAMPLES * (NOISE_DRAWS // 2))


def fingerprint(attr: np.ndarray, feature_mask: np.ndarray | None = None) -> list[list[float]]:
    """The |attribution| mass per feature of the first :data:`FINGERPRINT_SAMPLES`
    samples of ``attr`` (``feature_mask``: integer feature ids broadcastable to one
    sample's map; None: every value its own feature)."""
    flat = feature_sums(np.abs(np.asarray(attr, dtype=np.float64)[:FINGERPRINT_SAMPLES]), feature_mask)
    return [[float(f"{v:.{DIGITS}g}") for v in row] for row in flat]


def outline(attr: np.ndarray) -> list[list[float]]:
    """Every sample's total |attribution| and sign balance (its sum over its total
    |attribution|, in [-1, 1]; 0 for an empty map), rounded for results.json."""
    flat = np.asarray(attr, dtype=np.float64).reshape(len(attr), -1)
    mass, signed = np.abs(flat).sum(axis=1), flat.sum(axis=1)
    balance = np.where(mass > 0, signed / np.maximum(mass, 1e-300), 0.0)
    return [[float(f"{m:.{OUTLINE_DIGITS}g}"), round(float(b), 2)] for m, b in zip(mass, balance)]


@dataclass(frozen=True)
class OutlineChange:
    """Which explained samples' maps changed entirely against the baseline's outline:
    ``resized`` (emptied, appeared, or a size ratio beyond :data:`SIZE_FACTOR` × the
    median ratio either way: a rescale of every map is no change) and ``flipped`` (a
    clearly signed map, :data:`CLEAR_SIGN`, now clearly of the other sign), of ``n``."""

    resized: tuple[int, ...]
    flipped: tuple[int, ...]
    n: int

    @property
    def lost(self) -> list[int]:
        """The samples changed either way."""
        return sorted(set(self.resized) | set(self.flipped))

    @property
    def kept(self) -> float:
        """The share of samples that changed neither way (0 where there is none)."""
        return 1.0 - len(self.lost) / self.n if self.n else 0.0


def outline_change(now: list[list[float]], then: list[list[float]]) -> OutlineChange:
    """The :class:`OutlineChange` of two :func:`outline` s, over the samples both kept."""
    a, b = np.asarray(now, dtype=np.float64), np.asarray(then, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != 2 or b.shape[1] != 2:
        return OutlineChange((), (), 0)
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where((a[:, 0] == 0) & (b[:, 0] == 0), 1.0, a[:, 0] / b[:, 0])
    usual = ratios[np.isfinite(ratios) & (ratios > 0)]
    typical = float(np.median(usual)) if len(usual) else 1.0
    relative = ratios / typical
    resized = np.flatnonzero((relative < 1.0 / SIZE_FACTOR) | (relative > SIZE_FACTOR))
    flipped = np.flatnonzero((np.abs(b[:, 1]) >= CLEAR_SIGN) & (a[:, 1] * np.sign(b[:, 1]) <= -CLEAR_SIGN))
    return OutlineChange(tuple(int(i) for i in resized), tuple(int(i) for i in flipped), n)


@dataclass(frozen=True)
class Agreement:
    """The cosine similarity of two fingerprints, per explained sample (two all-zero
    maps agree: 1; a zero map against a non-zero one: 0), and the ratio of each
    sample's total |attribution| mass to the baseline's (``ratios``: two empty maps 1,
    an empty map against a non-empty one 0 or infinity)."""

    cosines: tuple[float, ...]
    ratios: tuple[float, ...] = ()

    @property
    def mean(self) -> float:
        """The mean over the samples (0 where there is none to compare)."""
        return float(np.mean(self.cosines)) if self.cosines else 0.0

    @property
    def worst(self) -> int:
        """The index of the sample that agrees least."""
        return int(np.argmin(self.cosines)) if self.cosines else 0

    @property
    def least(self) -> float:
        """The similarity of the sample that agrees least."""
        return min(self.cosines) if self.cosines else 0.0

    @property
    def size(self) -> float:
        """How far the maps' sizes stayed: ``exp(−mean |ln ratio|)`` over the samples (1:
        every map the same size; 0.5: twice or half the size on average; 0 where a map
        emptied or appeared, or where there is nothing to compare)."""
        if not self.ratios:
            return 0.0
        with np.errstate(divide="ignore"):
            logs = np.abs(np.log(np.asarray(self.ratios, dtype=np.float64)))
        return float(np.exp(-np.mean(logs)))

    def lost(self, floor: float) -> list[int]:
        """The samples whose maps agree less than ``floor`` with the baseline's."""
        return [i for i, c in enumerate(self.cosines) if c < floor]


@dataclass(frozen=True)
class DrawNoise:
    """How far two draws of a stochastic explainer's maps lie apart: the least mean
    agreement of two draws and the least agreement of one sample's maps in two draws
    (1 and 1 for a deterministic explainer)."""

    mean: float
    sample: float
    #: the largest share of samples whose :func:`outline` changed between two draws
    #: (:func:`outline_change`; 0 for a deterministic explainer)
    outlines: float = 0.0

    @classmethod
    def deterministic(cls) -> DrawNoise:
        """The noise of a deterministic explainer: its draws agree entirely."""
        return cls(1.0, 1.0, 0.0)


def map_agreement(now: list[list[float]], then: list[list[float]]) -> Agreement:
    """The per-sample :class:`Agreement` of two fingerprints over the samples both
    kept (a baseline may have kept fewer); fingerprints of other features agree in
    nothing."""
    a, b = np.asarray(now, dtype=np.float64), np.asarray(then, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        return Agreement(())
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    both_zero = (na == 0) & (nb == 0)
    cos = np.where(both_zero, 1.0, (a * b).sum(axis=1) / np.maximum(na * nb, 1e-300))
    sa, sb = a.sum(axis=1), b.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where((sa == 0) & (sb == 0), 1.0, sa / sb)
    return Agreement(tuple(float(c) for c in cos), tuple(float(r) for r in ratios))
