"""Metrics: UScore (ChaosMining eq. 2) and FPrec (eq. 3), tie-aware.

FPrec resolves ties *against* the explainer: when several features share the
k-th largest |attribution|, the tied slots go to noise features first.  A
constant (or all-zero) attribution therefore scores 0, not the share of truth
that happens to sit at low column indices.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pytest_chaosmining.core.lazy import lazy_module

if TYPE_CHECKING:
    import torch
    import torch.nn.functional as F
else:  # heavy: only the vision maps' smoothing needs it (a baseline's comparison does not)
    torch = lazy_module("torch")
    F = lazy_module("torch.nn.functional")

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


# -- vision: localisation of the foreground box ---------------------------------
def gaussian_smooth(maps: np.ndarray, sigma: float) -> np.ndarray:
    """Smooth ``(N, H, W)`` maps with a 2-D Gaussian of ``sigma`` px (zero padding)."""
    if sigma <= 0:
        return maps
    radius = int(np.ceil(3 * sigma))
    xs = torch.arange(-radius, radius + 1, dtype=torch.float64)
    kernel = torch.exp(-(xs**2) / (2 * sigma**2))
    kernel = kernel / kernel.sum()
    t = torch.from_numpy(np.ascontiguousarray(maps, dtype=np.float64))[:, None]
    t = F.conv2d(t, kernel.view(1, 1, 1, -1), padding=(0, radius))
    t = F.conv2d(t, kernel.view(1, 1, -1, 1), padding=(radius, 0))
    return t[:, 0].numpy()


def saliency_maps(attr: np.ndarray, sigma: float) -> np.ndarray:
    """``(N, C, H, W)`` attributions -> ``(N, H, W)``: |·| averaged over channels,
    then Gaussian-smoothed (magnitude first, so signed evidence cannot cancel)."""
    return gaussian_smooth(np.abs(np.asarray(attr, dtype=np.float64)).mean(axis=1), sigma)


def top_k_box(smap: np.ndarray, k: int, truth: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """Minimal rectangle ``(x, y, w, h)`` around the ``k`` largest pixels of one
    ``(H, W)`` map.  Ties at the cut go to pixels *outside* the true box first,
    so a flat map cannot land on the truth by scan order."""
    h, w = smap.shape
    x0, y0, bw, bh = truth
    inside = np.zeros((h, w), dtype=bool)
    inside[y0 : y0 + bh, x0 : x0 + bw] = True
    order = np.lexsort((inside.ravel(), -smap.ravel()))[:k]
    ys, xs = np.unravel_index(order, (h, w))
    return int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)


def box_iou(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> float:
    """IoU of two pixel boxes ``(x, y, w, h)`` with inclusive extents: a perfect hit is 1.0."""
    ix = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def localisation(attr: np.ndarray, boxes: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample IoU of the top-k box (k = foreground area) with the true box,
    and the share of |attribution| mass inside the true box (before smoothing)."""
    attr = np.asarray(attr, dtype=np.float64)
    smaps = saliency_maps(attr, sigma)
    raw = np.abs(attr).mean(axis=1)
    ious, shares = np.empty(len(attr)), np.empty(len(attr))
    for i, (smap, box) in enumerate(zip(smaps, boxes)):
        x, y, w, h = (int(v) for v in box)
        ious[i] = box_iou(top_k_box(smap, w * h, (x, y, w, h)), (x, y, w, h))
        total = raw[i].sum()
        shares[i] = raw[i, y : y + h, x : x + w].sum() / total if total > 0 else 0.0
    return ious, shares


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
