"""Metrics: UScore (ChaosMining eq. 2) and FPrec (eq. 3), tie-aware.

FPrec resolves ties *against* the explainer: when several features share the
k-th largest |attribution|, the tied slots go to noise features first.  A
constant (or all-zero) attribution therefore scores 0, not the share of truth
that happens to sit at low column indices.  numpy only; the vision box's localisation
(smoothed with torch) is :mod:`.localisation`.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-8


def uscore(pred: np.ndarray, true: np.ndarray, eps: float = EPS) -> float:
    """Mean of ``1 - |ŷ - y| / (|ŷ| + |y| + ε)`` over samples (ChaosMining eq. 2)."""
    pred = np.asarray(pred, dtype=np.float64).ravel()
    true = np.asarray(true, dtype=np.float64).ravel()
    if pred.shape != true.shape:
        raise ValueError(f"uscore: shapes differ {pred.shape} vs {true.shape}")
    return float(np.mean(1.0 - np.abs(pred - true) / (np.abs(pred) + np.abs(true) + eps)))


def attribution_uscore(attr: np.ndarray, truth: np.ndarray, eps: float = EPS) -> float:
    """Agreement of attribution vectors with ground-truth attributions, in [0, 1].

    Each sample's vectors are L1-normalised (as the reference does) and compared
    with the UScore form applied to the whole vector,
    ``1 - Σ|â - t̂| / (Σ|â| + Σ|t̂| + ε)`` (= ``1 - ||â - t̂||₁ / 2``), then averaged
    over samples.  Applied feature by feature instead, the many zero-truth noise
    features would each score 0 for any non-zero attribution and swamp the result.
    """
    a = _l1_normalise(np.asarray(attr, dtype=np.float64), eps)
    t = _l1_normalise(np.asarray(truth, dtype=np.float64), eps)
    num = np.abs(a - t).sum(axis=1)
    den = np.abs(a).sum(axis=1) + np.abs(t).sum(axis=1) + eps
    return float(np.mean(1.0 - num / den))


def _l1_normalise(x: np.ndarray, eps: float) -> np.ndarray:
    x = x.reshape(len(x), -1)
    return x / (np.abs(x).sum(axis=1, keepdims=True) + eps)


def fprec_per_sample(attr: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per-sample FPrec of ``(N, F)`` attributions against the ``k`` truth columns,
    ranking by |attribution| with ties broken against the explainer."""
    scores = np.abs(np.asarray(attr, dtype=np.float64))
    if scores.ndim != 2:
        raise ValueError(f"fprec expects (N, F) attributions, got shape {scores.shape}")
    truth = np.asarray(truth, dtype=np.int64)
    k = len(truth)
    n_features = scores.shape[1]
    if not 0 < k <= n_features:
        raise ValueError(f"fprec: need 0 < k <= {n_features}, got k={k}")
    if np.isnan(scores).any():
        raise ValueError("fprec: attributions contain NaN")
    kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1 : k]
    is_truth = np.zeros(n_features, dtype=bool)
    is_truth[truth] = True
    above = scores > kth
    tied = scores == kth
    strictly_above = above.sum(axis=1)
    truth_above = above[:, is_truth].sum(axis=1)
    noise_tied = tied[:, ~is_truth].sum(axis=1)
    truth_tied = tied[:, is_truth].sum(axis=1)
    slots = k - strictly_above
    truth_in_ties = np.clip(slots - noise_tied, 0, truth_tied)
    return (truth_above + truth_in_ties) / k


def fprec(attr: np.ndarray, truth: np.ndarray) -> float:
    """Mean FPrec over samples (ChaosMining eq. 3)."""
    return float(fprec_per_sample(attr, truth).mean())


def consistency(attr: np.ndarray, k: int) -> float:
    """ChaosMining Figure 5 consistency of ``(N, F)`` attributions: the mean share
    of the dataset's top-``k`` features (by mean |attribution|) among each
    sample's top-``k``, ties broken against the explainer (a constant map scores 0)."""
    scores = np.abs(np.asarray(attr, dtype=np.float64))
    dataset_top = np.argsort(-scores.mean(axis=0), kind="stable")[:k]
    return fprec(scores, dataset_top)


def channel_mass(attr: np.ndarray) -> np.ndarray:
    """Per-channel attribution mass ``Σ_t |a_{c,t}|`` of ``(N, C, T)`` maps -> ``(N, C)``."""
    return np.abs(np.asarray(attr, dtype=np.float64)).sum(axis=2)


def channel_scores(attr: np.ndarray, true_channel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the true channel's share of the total mass (ChaosMining §3.3;
    an all-zero map scores 0) and whether it holds strictly the largest mass
    (ties count as misses, so a constant map never hits)."""
    mass = channel_mass(attr)
    rows = np.arange(len(mass))
    true_mass = mass[rows, true_channel]
    total = mass.sum(axis=1)
    share = np.divide(true_mass, total, out=np.zeros_like(total), where=total > 0)
    others = mass.copy()
    others[rows, true_channel] = -np.inf
    hit = (true_mass > others.max(axis=1)).astype(np.float64)
    return share, hit


def feature_sums(maps: np.ndarray, feature_mask: np.ndarray | None = None) -> np.ndarray:
    """Each sample's map summed per feature, ``(n, features)`` (``feature_mask``:
    integer feature ids broadcastable to one sample's map; None: every value its own
    feature)."""
    values = np.asarray(maps, dtype=np.float64)
    flat = values.reshape(len(values), -1)
    if feature_mask is None:
        return flat
    ids = np.broadcast_to(np.asarray(feature_mask), values.shape[1:]).reshape(-1).astype(np.int64)
    return np.stack([np.bincount(ids, weights=row, minlength=int(ids.max()) + 1) for row in flat])
