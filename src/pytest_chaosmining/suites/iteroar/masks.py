"""IteROAR's masking step and metrics (Palacio et al., ``papers/iteroar.txt``).

A mask marks the top ``1 − τ`` of a map (τ = 95th percentile: 5% of the
pixels) for removal.  Maps are ``|attribution|`` averaged over channels, as in
the vision suite.  Exactly ``round((1 − τ)·A)`` pixels are marked per image and
ties at the cut are broken by a seeded random draw, so a flat map (or an
all-zero one) masks random pixels: it cannot dodge masking by thresholding to
nothing, nor land on the truth by scan order.

Overlaps are reported as fractions of the new mask (the paper's ``‖·‖₀`` counts
divided by the mask size), so they read the same at every canvas size: 0 means
the new mask avoids the earlier ones, 1 means it falls entirely on them.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

FILLS = ("zero", "mean")


def maps(attr: np.ndarray) -> np.ndarray:
    """``(N, C, H, W)`` attributions -> ``(N, H, W)`` maps: |·| averaged over channels."""
    return np.abs(np.asarray(attr, dtype=np.float64)).mean(axis=1)


def top_fraction_masks(smaps: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean ``(N, H, W)`` masks of the ``round(fraction · H·W)`` largest pixels
    of each map (True = removed); ties at the cut broken at random."""
    n, h, w = smaps.shape
    k = int(round(fraction * h * w))
    if not 0 < k <= h * w:
        raise ValueError(f"mask fraction {fraction} selects {k} of {h * w} pixels")
    flat = smaps.reshape(n, -1)
    jitter = rng.random(flat.shape)
    out = np.zeros(flat.shape, dtype=bool)
    for i in range(n):
        order = np.lexsort((jitter[i], -flat[i]))[:k]
        out[i, order] = True
    return out.reshape(n, h, w)


def apply_masks(images: np.ndarray, masks: np.ndarray, fill: str) -> np.ndarray:
    """``images`` ``(N, C, H, W)`` uint8 with the masked pixels replaced by zeros
    or by the per-image, per-channel mean of the pixels being masked."""
    if fill not in FILLS:
        raise ValueError(f"fill must be one of {FILLS}, got {fill!r}")
    out = images.copy()
    m = np.broadcast_to(masks[:, None], images.shape)
    if fill == "zero":
        out[m] = 0
        return out
    count = masks.reshape(len(masks), -1).sum(axis=1).clip(min=1)[:, None]
    sums = (images.astype(np.float64) * masks[:, None]).reshape(len(images), images.shape[1], -1).sum(axis=2)
    means = np.rint(sums / count).astype(images.dtype)  # (N, C)
    filled = np.broadcast_to(means[:, :, None, None], images.shape)
    out[m] = filled[m]
    return out


def overlap(new: np.ndarray, earlier: np.ndarray) -> np.ndarray:
    """Per image: the fraction of ``new``'s pixels that ``earlier`` also covers."""
    size = new.reshape(len(new), -1).sum(axis=1).clip(min=1)
    return (new & earlier).reshape(len(new), -1).sum(axis=1) / size


def cumulative_area(masks: list[np.ndarray]) -> float:
    """Mean share of the canvas that ``masks`` remove together (IteROAR eq. 4, CMA
    as a fraction of the canvas: ≈ ρ when masks never overlap); 0 for no masks."""
    if not masks:
        return 0.0
    union = np.logical_or.reduce(masks)
    return float(union.reshape(len(union), -1).mean(axis=1).mean())


def mask_metrics(masks: list[np.ndarray]) -> dict[str, float]:
    """MMO (new mask on the previous one) and MAMO (new mask on all earlier ones),
    IteROAR eqs. 1-2 as fractions of the new mask, over consecutive masks of the
    same images, and their cumulative masked area (:func:`cumulative_area`)."""
    if not masks:
        raise ValueError("no masks")
    mmo, mamo = [], []
    accumulated = masks[0].copy()
    for prev, new in zip(masks, masks[1:]):
        mmo.append(overlap(new, prev).mean())
        mamo.append(overlap(new, accumulated).mean())
        accumulated |= new
    return {
        "mmo": float(np.mean(mmo)) if mmo else float("nan"),
        "mamo": float(np.mean(mamo)) if mamo else float("nan"),
        "cma": cumulative_area(masks),
    }


def box_shares(masks: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per image: the share of the mask that lies on the true foreground box, and
    the share of the box that the mask covers."""
    on_box, covered = np.empty(len(masks)), np.empty(len(masks))
    for i, (m, (x, y, w, h)) in enumerate(zip(masks, boxes)):
        inside = m[int(y) : int(y) + int(h), int(x) : int(x) + int(w)].sum()
        on_box[i] = inside / max(int(m.sum()), 1)
        covered[i] = inside / (int(w) * int(h))
    return on_box, covered


def leakage_accuracy(
    train_masks: np.ndarray,
    train_labels: np.ndarray,
    test_masks: np.ndarray,
    test_labels: np.ndarray,
    seed: int,
    shuffle_labels: bool = False,
    pool: int = 3,
    steps: int = 300,
) -> float:
    """IteROAR §4.7: test accuracy of a classifier trained on the masks alone
    (labels kept, or shuffled for the random-label baseline).  The masks are
    average-pooled ``pool``×``pool`` (position, size and coarse shape survive)
    and fed to a one-hidden-layer network trained full-batch with Adam."""
    gen = torch.Generator().manual_seed(seed)
    labels = torch.from_numpy(np.asarray(train_labels, dtype=np.int64))
    if shuffle_labels:
        labels = labels[torch.randperm(len(labels), generator=gen)]

    def features(m: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(m.astype(np.float32))[:, None]
        return nn.functional.avg_pool2d(t, pool, ceil_mode=True).flatten(1)

    x, xt = features(train_masks), features(test_masks)
    n_classes = max(int(labels.max()), int(np.max(test_labels))) + 1
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(x.shape[1], 64), nn.ReLU(), nn.Linear(64, n_classes))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), labels).backward()
        opt.step()
    with torch.no_grad():
        pred = net(xt).argmax(1).numpy()
    return float((pred == np.asarray(test_labels)).mean())
