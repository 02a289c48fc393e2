"""Attribution drift: how far an explainer's maps moved from a baseline's.

A run keeps a compact fingerprint of each explainer's maps per case: the
|attribution| mass of each of the suite's features (a tabular column, an image
patch, an audio channel × time segment) for the first :data:`FINGERPRINT_SAMPLES`
explained samples.  Against a baseline the agreement is the cosine similarity of
the fingerprints, per sample, averaged: rescaling a map (×1000, per sample) and
flipping its sign keep it at 1 (the sign check judges signs); moving mass between
features lowers it, whether or not the top-k overlap changes.
"""

from __future__ import annotations

import numpy as np

from pytest_chaosmining.core.metrics.attribution import feature_sums

#: explained samples whose maps a fingerprint keeps
FINGERPRINT_SAMPLES = 4
#: significant digits kept of each feature's mass (a fingerprint is stored in results.json)
DIGITS = 5


def fingerprint(attr: np.ndarray, feature_mask: np.ndarray | None = None) -> list[list[float]]:
    """The |attribution| mass per feature of the first :data:`FINGERPRINT_SAMPLES`
    samples of ``attr`` (``feature_mask``: integer feature ids broadcastable to one
    sample's map; None: every value its own feature)."""
    flat = feature_sums(np.abs(np.asarray(attr, dtype=np.float64)[:FINGERPRINT_SAMPLES]), feature_mask)
    return [[float(f"{v:.{DIGITS}g}") for v in row] for row in flat]


def map_agreement(now: list[list[float]], then: list[list[float]]) -> tuple[float, int, float]:
    """Mean cosine similarity of two fingerprints over their samples, the sample
    that agrees least and its similarity (two all-zero maps agree: 1; a zero map
    against a non-zero one: 0)."""
    a, b = np.asarray(now, dtype=np.float64), np.asarray(then, dtype=np.float64)
    if a.shape != b.shape:
        return 0.0, 0, 0.0
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    both_zero = (na == 0) & (nb == 0)
    cos = np.where(both_zero, 1.0, (a * b).sum(axis=1) / np.maximum(na * nb, 1e-300))
    worst = int(np.argmin(cos))
    return float(cos.mean()), worst, float(cos[worst])
