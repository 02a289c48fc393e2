"""Attribution drift: how far an explainer's maps moved from a baseline's.

A run keeps a compact :class:`~pytest_chaosmining.core.metrics.fingerprints.Fingerprint`
of each explainer's maps per case: the |attribution| mass and the signed sum of each of the
suite's features (a tabular column, an image patch, an audio channel × time segment) of every
explained sample.  Against a baseline the agreement is the cosine similarity of the masses,
per sample (:class:`Agreement`): rescaling a map (×1000, per sample) and flipping its sign
keep it at 1; moving mass between features lowers it, whether or not the top-k overlap
changes.  The mean over the samples judges a change that touches every map; the samples
below a per-sample floor (:attr:`Agreement.lost`) judge one confined to some inputs (one
class, a few samples), which the mean dilutes.  The signs are compared apart
(:attr:`Agreement.signs`): of the baseline's clearly positive, clearly negative and mixed
features (a feature is clearly signed where its sum is at least :data:`CLEAR_SIGN` of its
mass), the least share that kept its sign (a mixed one: its balance), so that a flipped sign
and a map turned unsigned (|attribution|) move it to 0 where no cosine of masses moves.  For
an explainer whose maps' size is part of what it returns
(``Explainer.sized``: LRP relevance, attributions that sum to the output),
:attr:`Agreement.size` compares each sample's total mass too: a rule that now counts a bias
twice moves every map by a factor and no cosine sees it.

Beside the fingerprint, an :func:`outline` of every explained sample: each map's total
|attribution| and its sign balance.  Against the baseline's (:func:`outline_change`) it finds
the samples whose map emptied, appeared or changed size far beyond the run's typical ratio,
and those whose clearly signed map now clearly has the other sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_chaosmining.core.metrics.fingerprints import Fingerprint, StoredFingerprint

#: explained samples a sampler's own noise is measured on (every explained sample of the
#: smoke tier's vision and audio suites; the first 32 of the symbolic suite's 400 rows)
NOISE_SAMPLES = 32
#: significant digits kept of an outline's mass (its rules compare ratios beyond 20 x, signs beyond 0.5)
OUTLINE_DIGITS = 3
#: a map whose sign balance (sum over |sum|) is at least this far from 0 is clearly signed; so
#: is a feature whose signed sum is at least this share of its mass
CLEAR_SIGN = 0.5
#: the least share of the mass a pool of features (clearly positive, clearly negative, mixed) holds
#: to count on its own in :attr:`Agreement.signs` (a map with a few small negative features is
#: judged by its positive ones)
SIGN_POOL = 0.02
#: a sample's size ratio beyond this factor of the run's median ratio, either way, changed its
#: map entirely (an emptied map: 0; a map where there was none: infinite)
SIZE_FACTOR = 20.0
#: draws of a sampler's maps its drift noise is measured from (two seeds, 8 copies each)
NOISE_DRAWS = 16
#: the least share of samples whose outline a sampler's draw is taken to change where its
#: :data:`NOISE_DRAWS` draws of :data:`NOISE_SAMPLES` samples changed none: the rule of
#: three over the disjoint pairs of draws (3 / 256; GradientShap with fewer samples flipped
#: 2 of 400 rows' signs where 16 draws of 32 samples had flipped none)
UNSEEN_OUTLINE_SHARE = 3 / (NOISE_SAMPLES * (NOISE_DRAWS // 2))
#: the least share of its sign mass a sampler's draw is taken to lose where its draws of
#: :data:`NOISE_SAMPLES` samples lost none, by the same rule of three (the drift compares
#: every explained sample: SmoothGrad reseeded kept 0.9848 of the signs of 400 rows where its
#: 16 draws of the first 32 had kept all)
UNSEEN_SIGN_SHARE = UNSEEN_OUTLINE_SHARE


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
    #: per sample, the share of its baseline map's mass whose features kept their sign
    #: (:attr:`signs`); NaN for an empty baseline map; empty where either run kept no signs
    sign_shares: tuple[float, ...] = ()
    #: per sample, the cosine of the signed feature sums (empty where either run kept no signs)
    signed: tuple[float, ...] = ()
    #: of the baseline's clearly positive, clearly negative and mixed features, pooled over the
    #: samples (each feature weighed by its share of its sample's mass): the share that kept
    #: its sign and the pool's weight (empty where either run kept no signs)
    sign_pools: tuple[tuple[float, float], ...] = ()

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

    @property
    def signs(self) -> float | None:
        """The least share, over the baseline's clearly positive, clearly negative and mixed
        features (:attr:`sign_pools`; a feature is clearly signed where its signed sum is at
        least :data:`CLEAR_SIGN` of its mass), that kept its sign: a clearly signed feature
        its sign, a mixed one its balance within :data:`CLEAR_SIGN`.  A pool holding less than
        :data:`SIGN_POOL` of the mass is not counted on its own.  1 for the same signs, 0 for a
        flipped sign and for a map turned unsigned (|attribution|) wherever its baseline had
        negative or mixed features (None where no signs were kept or the maps were empty)."""
        total = sum(weight for _, weight in self.sign_pools)
        if not self.sign_pools or total <= 0:
            return None
        return min(kept for kept, weight in self.sign_pools if weight >= SIGN_POOL * total)

    def signs_lost(self, floor: float) -> list[int]:
        """The samples whose features kept their signs on less than ``floor`` of their mass."""
        return [i for i, s in enumerate(self.sign_shares) if s == s and s < floor]

    def moves(self) -> np.ndarray:
        """How far each sample's map moved: 1 − the lesser of its cosines of masses and of signed sums."""
        cos = np.asarray(self.cosines, dtype=np.float64)
        if len(self.signed) == len(cos):
            cos = np.minimum(cos, np.asarray(self.signed, dtype=np.float64))
        return 1.0 - cos


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
    #: the least :attr:`Agreement.signs` of two draws (1 for a deterministic explainer)
    signs: float = 1.0

    @classmethod
    def deterministic(cls) -> DrawNoise:
        """The noise of a deterministic explainer: its draws agree entirely."""
        return cls(1.0, 1.0, 0.0, 1.0)


def map_agreement(now: Fingerprint | StoredFingerprint, then: Fingerprint | StoredFingerprint) -> Agreement:
    """The per-sample :class:`Agreement` of two fingerprints over the samples both
    kept (an older baseline kept fewer); fingerprints of other features agree in nothing."""
    mine = now if isinstance(now, Fingerprint) else Fingerprint.read(now)
    theirs = then if isinstance(then, Fingerprint) else Fingerprint.read(then)
    a, b = mine.mass, theirs.mass
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        return Agreement(())
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    sa, sb = a.sum(axis=1), b.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where((sa == 0) & (sb == 0), 1.0, sa / sb)
    shares: tuple[float, ...] = ()
    signed: tuple[float, ...] = ()
    pools: list[tuple[float, float]] = []
    if mine.signed is not None and theirs.signed is not None:
        x, y = mine.signed[:n], theirs.signed[:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            now_balance = np.where(a > 0, x / np.maximum(a, 1e-300), 0.0)
            then_balance = np.where(b > 0, y / np.maximum(b, 1e-300), 0.0)
        positive, negative = then_balance >= CLEAR_SIGN, then_balance <= -CLEAR_SIGN
        mixed = (b > 0) & ~positive & ~negative
        same = (positive & (now_balance > 0)) | (negative & (now_balance < 0))
        same |= mixed & (np.abs(now_balance - then_balance) < CLEAR_SIGN)
        weight = b / np.maximum(b.sum(axis=1, keepdims=True), 1e-300)  # each sample's features by their mass
        kept, total = np.where(same, weight, 0.0).sum(axis=1), np.where(b > 0, weight, 0.0).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = tuple(float(v) for v in np.where(total > 0, kept / total, np.nan))
        signed = tuple(float(c) for c in _cosines(x, y))
        for side in (positive, negative, mixed):
            pool = float(np.where(side, weight, 0.0).sum())
            held = float(np.where(side & same, weight, 0.0).sum())
            pools.append((held / pool if pool > 0 else 1.0, pool))
    return Agreement(
        tuple(float(c) for c in _cosines(a, b)), tuple(float(r) for r in ratios), shares, signed, tuple(pools)
    )


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each row's cosine similarity (two all-zero rows: 1; a zero row against another: 0)."""
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    both_zero = (na == 0) & (nb == 0)
    return np.where(both_zero, 1.0, (a * b).sum(axis=1) / np.maximum(na * nb, 1e-300))
