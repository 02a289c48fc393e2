"""Axiom checks: properties an explainer declares about its maps, checked where
the suite can measure them.

Completeness (IG, DeepLift): a sample's attributions sum to the change of the
explained output from the baseline to the input, ``Σ a = f(x) − f(b)``.  The
check is on the sign of that sum, balanced over the samples whose output rose and
those whose output fell: a rescaled map (×1000, or divided per sample by its
largest value) keeps every sign and passes; a flipped sign scores 0; a map that
ignores the sample (another sample's map, a constant, the random control's
positive noise) scores about 0.5, whatever share of outputs rose.
"""

from __future__ import annotations

import numpy as np
import torch

#: a sample counts when its output change is at least this share of the mean |change|
#: (nearer 0 the sign is within the method's approximation error)
CHANGE_FLOOR = 0.1
#: the fewest counted samples of each sign for a judgement
MIN_PER_SIGN = 10


def sign_agreement(sums: np.ndarray, change: np.ndarray) -> float | None:
    """Balanced agreement of the signs of ``sums`` (each sample's attributions
    summed) with the signs of ``change`` (``f(x) − f(baseline)`` per sample): the
    mean of the share of rising outputs with a positive sum and the share of
    falling outputs with a negative sum, in [0, 1].  None where fewer than
    :data:`MIN_PER_SIGN` samples of either sign clear :data:`CHANGE_FLOOR` (on
    such samples a map of one sign everywhere would agree by construction)."""
    sums = np.asarray(sums, dtype=np.float64).ravel()
    change = np.asarray(change, dtype=np.float64).ravel()
    if sums.shape != change.shape:
        raise ValueError(f"sign_agreement: shapes differ {sums.shape} vs {change.shape}")
    counted = np.abs(change) >= CHANGE_FLOOR * np.abs(change).mean()
    rose, fell = counted & (change > 0), counted & (change < 0)
    if rose.sum() < MIN_PER_SIGN or fell.sum() < MIN_PER_SIGN:
        return None
    return float(0.5 * ((sums[rose] > 0).mean() + (sums[fell] < 0).mean()))


def output_change(model: torch.nn.Module, inputs: torch.Tensor, target: int, baseline: torch.Tensor) -> np.ndarray:
    """``f(inputs) − f(baseline)`` of output ``target`` per sample (the quantity a
    complete explainer's attributions sum to)."""

    with torch.no_grad():
        now = model(inputs).reshape(len(inputs), -1)[:, target]
        then = model(baseline).reshape(len(inputs), -1)[:, target]
    return (now - then).double().cpu().numpy()
