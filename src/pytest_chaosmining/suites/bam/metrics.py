"""BAM's metrics (Yang & Kim, ``papers/bam.txt`` §4): concept attribution,
model contrast score (MCS), input dependence rate (IDR), input independence
rate (IIR) and the functionally neutral patch δ that IIR needs.

Maps are ``|attribution|`` averaged over channels, capped at their 99th
percentile and divided by it, so each lies in [0, 1] (the paper's
visualisation, with magnitudes instead of the positive part so that signed
explainers are read as in the other suites).  An all-zero map stays zero.
Comparisons are strict: a tie (two identical maps) is never counted as
"attributed less", so an explainer that ignores its input cannot score IDR.
"""

from __future__ import annotations

import numpy as np
import torch

IIR_T = 0.10  # the paper's visually imperceptible change of g_c
#: δ counts as functionally neutral where f's logits move by at most this (relative L2) and the class stays
NEUTRAL_TOLERANCE = 0.10


def normalised_maps(attr: np.ndarray) -> np.ndarray:
    """``(N, C, H, W)`` attributions -> ``(N, H, W)`` maps in [0, 1]."""
    m = np.abs(np.asarray(attr, dtype=np.float64)).mean(axis=1)
    cap = np.percentile(m.reshape(len(m), -1), 99, axis=1)[:, None, None]
    return np.divide(np.minimum(m, cap), cap, out=np.zeros_like(m), where=cap > 0)


def region_attribution(smaps: np.ndarray, regions: np.ndarray) -> np.ndarray:
    """g_c per image: the mean of the map over the region's pixels."""
    size = regions.reshape(len(regions), -1).sum(axis=1)
    if (size == 0).any():
        raise ValueError("an empty region has no attribution")
    return (smaps * regions).reshape(len(smaps), -1).sum(axis=1) / size


def random_regions(regions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The paper's random I_c: each region moved to a uniformly random place
    (same shape and size) — the baseline of MCS and IDR."""
    n, h, w = regions.shape
    out = np.zeros_like(regions)
    for i, r in enumerate(regions):
        ys, xs = np.nonzero(r)
        y0, x0 = ys.min(), xs.min()
        rh, rw = ys.max() - y0 + 1, xs.max() - x0 + 1
        dy, dx = int(rng.integers(0, h - rh + 1)), int(rng.integers(0, w - rw + 1))
        out[i, ys - y0 + dy, xs - x0 + dx] = True
    return out


def model_contrast(g1: np.ndarray, correct1: np.ndarray, g2: np.ndarray, correct2: np.ndarray) -> float:
    """MCS = G_c(f1) − G_c(f2), each G_c the mean g_c over that model's correctly classified inputs."""
    if not correct1.any() or not correct2.any():
        return float("nan")
    return float(g1[correct1].mean() - g2[correct2].mean())


def input_dependence(g_with: np.ndarray, g_without: np.ndarray, correct: np.ndarray) -> float:
    """IDR: the share of correctly classified pairs where the common feature is
    attributed strictly less than the scene pixels it covers."""
    if not correct.any():
        return float("nan")
    return float((g_with[correct] < g_without[correct]).mean())


def input_independence(g_x: np.ndarray, g_delta: np.ndarray, keep: np.ndarray, t: float = IIR_T) -> float:
    """IIR: the share of kept inputs where adding δ changes g_c by less than ``t``
    (relative to g_c without δ; where that is 0, only an unchanged 0 counts)."""
    if not keep.any():
        return float("nan")
    change = np.abs(g_delta - g_x)
    rel = np.divide(change, g_x, out=np.where(change > 0, np.inf, 0.0), where=g_x > 0)
    return float((rel[keep] < t).mean())


def neutral_patch(
    model: torch.nn.Module,
    x: torch.Tensor,
    init: torch.Tensor,
    region: torch.Tensor,
    steps: int = 100,
    lr: float = 0.01,
    eta1: float = 0.01,
    radius: float = 0.15,
) -> torch.Tensor:
    """BAM's δ: starting from ``init`` (the object's pixels pasted into the
    region, as a difference to ``x``), gradient steps on
    ``‖f(x+δ) − f(x)‖₂ − η₁‖δ‖₂`` that keep δ inside the region (the paper's
    η₃ term taken to its limit), within ``radius`` of its start (the paper's
    "small L2 distance of initialization") and ``x + δ`` within [0, 1] (its
    η₂ term, as a projection).  All tensors ``(N, C, H, W)``; ``region`` is
    ``(N, 1, H, W)`` float.  Returns δ (detached)."""
    with torch.no_grad():
        target = model(x)
    delta = init.clone().requires_grad_(True)
    opt = torch.optim.Adam([delta], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        out = model(x + delta * region)
        loss = (out - target).norm(dim=1).sum() - eta1 * (delta * region).flatten(1).norm(dim=1).sum()
        loss.backward()
        opt.step()
        with torch.no_grad():
            delta.copy_(torch.minimum(torch.maximum(delta, init - radius), init + radius))
            delta.copy_((x + delta).clamp(0, 1) - x)
    return (delta * region).detach()
