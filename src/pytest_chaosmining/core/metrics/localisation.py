"""Vision: localisation of the foreground box (ChaosMining §3.2): each map smoothed with a
Gaussian (torch's convolution), the minimal rectangle around its top-k pixels, its IoU
with the true box, and the share of |attribution| mass inside it."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


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
