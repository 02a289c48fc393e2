"""The true effect of each feature on a classifier's logit, for the own-merit
checks of the classifier suites (vision, audio): three exact attributions of the
asked class's logit per feature group (the suite's feature mask) from a zero
baseline, and the logit's change from that baseline.

- **gradient**: the logit's gradient summed over the group;
- **path**: the path integral of the gradient from zero to the input, summed
  over the group (:data:`PATH_STEPS` midpoints: its sign, not an estimate of an
  explainer's);
- **ablation**: how much the logit falls when the group is set to zero.

Where all three agree on a group's sign, a signed map must give the group that
sign (:func:`~pytest_chaosmining.core.metrics.properties.truth_sign_agreement`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

#: midpoints of the path integral the sign check compares with
PATH_STEPS = 32
#: groups set to zero per forward pass of the ablation truth
ABLATION_BATCH = 64


@dataclass(frozen=True)
class ClassEffects:
    """Per sample and feature group (``(n, groups)``) the three exact attributions
    of the explained logit (``truths``: gradient, path, ablation) and per sample the
    logit's change from the zero baseline (``change``: f(x) − f(0))."""

    truths: tuple[np.ndarray, np.ndarray, np.ndarray]
    change: np.ndarray


def group_ids(mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The feature group of every element of one sample (``mask`` broadcast to ``shape``), flattened."""
    return np.broadcast_to(np.asarray(mask), shape).reshape(-1).astype(np.int64)


def group_sums(maps: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Each sample's map summed per feature group (``ids``: :func:`group_ids`): ``(n, groups)``."""
    flat = np.asarray(maps, dtype=np.float64).reshape(len(maps), -1)
    size = int(ids.max()) + 1
    return np.stack([np.bincount(ids, weights=row, minlength=size) for row in flat])


def class_effects(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: torch.Tensor,
    mask: np.ndarray,
    guard: Callable[[], AbstractContextManager[object]],
) -> ClassEffects:
    """The :class:`ClassEffects` of ``model``'s logit ``target`` (one class per
    sample) at ``inputs``, per group of ``mask`` (integer ids broadcastable to one
    sample)."""
    import torch

    ids = group_ids(mask, tuple(inputs.shape[1:]))

    def logit(x: torch.Tensor, which: torch.Tensor) -> torch.Tensor:
        return model(x)[torch.arange(len(x), device=x.device), which]

    with guard():
        x = inputs.detach().clone().requires_grad_(True)
        (gradient,) = torch.autograd.grad(logit(x, target).sum(), x)
        path = torch.zeros_like(inputs)
        for k in range(PATH_STEPS):
            point = (inputs * ((k + 0.5) / PATH_STEPS)).detach().requires_grad_(True)
            (g,) = torch.autograd.grad(logit(point, target).sum(), point)
            path += g
        path = path * inputs / PATH_STEPS
        with torch.no_grad():
            full = logit(inputs, target)
            change = full - logit(torch.zeros_like(inputs), target)
            groups = int(ids.max()) + 1
            member = torch.from_numpy(ids).to(inputs.device).reshape(inputs.shape[1:])
            ablation = torch.zeros(len(inputs), groups, dtype=torch.float64)
            pairs = [(i, g) for i in range(len(inputs)) for g in range(groups)]
            for start in range(0, len(pairs), ABLATION_BATCH):
                chunk = pairs[start : start + ABLATION_BATCH]
                sample = torch.tensor([i for i, _ in chunk], device=inputs.device)
                group = torch.tensor([g for _, g in chunk], device=inputs.device)
                keep = (member.unsqueeze(0) != group.view(-1, *([1] * member.dim()))).to(inputs.dtype)
                dropped = full[sample] - logit(inputs[sample] * keep, target[sample])
                ablation[sample.cpu(), group.cpu()] = dropped.double().cpu()
    return ClassEffects(
        (
            group_sums(gradient.detach().cpu().double().numpy(), ids),
            group_sums(path.detach().cpu().double().numpy(), ids),
            ablation.numpy(),
        ),
        change.detach().cpu().double().numpy(),
    )
