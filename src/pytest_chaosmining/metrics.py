"""Metrics: UScore (ChaosMining eq. 2) and FPrec (eq. 3), tie-aware.

FPrec resolves ties *against* the explainer: when several features share the
k-th largest |attribution|, the tied slots go to noise features first.  A
constant (or all-zero) attribution therefore scores 0, not the share of truth
that happens to sit at low column indices.
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
    """UScore between attribution vectors and ground-truth attributions, each
    sample L1-normalised first (as the reference does), averaged over samples."""
    a = _l1_normalise(np.asarray(attr, dtype=np.float64), eps)
    t = _l1_normalise(np.asarray(truth, dtype=np.float64), eps)
    per_feature = 1.0 - np.abs(a - t) / (np.abs(a) + np.abs(t) + eps)
    return float(per_feature.mean())


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


def random_fprec_expectation(k: int, n_features: int) -> float:
    """Expected FPrec of a random ranking: ``k / n_features``."""
    return k / n_features
