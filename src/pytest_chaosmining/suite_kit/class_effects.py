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

import numpy as np
import torch

from pytest_chaosmining.core.metrics.attribution import feature_sums

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

    member = torch.from_numpy(np.broadcast_to(np.asarray(mask), inputs.shape[1:]).astype(np.int64)).to(inputs.device)

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
            groups = int(member.max()) + 1
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
            feature_sums(gradient.detach().cpu().double().numpy(), mask),
            feature_sums(path.detach().cpu().double().numpy(), mask),
            ablation.numpy(),
        ),
        change.detach().cpu().double().numpy(),
    )
