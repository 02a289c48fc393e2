"""What a model suite offers the own-merit checks (:mod:`.merit`): a :class:`Probe` of a
trained model, a few samples and their targets; a classifier's from its predictions."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from pytest_chaosmining.explainers.context import AttributionContext


@dataclass(frozen=True)
class Probe:
    """What a suite offers the own-merit checks: a trained model, a few distinct
    samples and their targets (the suite's own), for classifiers another class per
    sample whose logit differs from the target's, the call's context, the feature
    mask the drift fingerprint sums over and a guard around every call."""

    model: torch.nn.Module
    inputs: torch.Tensor
    target: int | torch.Tensor | None
    context: AttributionContext
    other_target: torch.Tensor | None = None
    fingerprint_mask: np.ndarray | None = None
    guard: Callable[[], contextlib.AbstractContextManager[object]] = field(default=contextlib.nullcontext)


def classifier_probe(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    predictions: np.ndarray,
    context: AttributionContext,
    fingerprint_mask: np.ndarray,
    guard: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> Probe:
    """A classifier's :class:`Probe`: ``inputs`` explained for their predicted classes
    (``predictions``), each also for the runner-up class of the model's logits."""

    target = torch.from_numpy(predictions).to(inputs.device)
    with torch.no_grad(), guard():
        logits = model(inputs)
    return Probe(model, inputs, target, context, other_classes(logits, target), fingerprint_mask, guard)


def other_classes(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """For each sample the class with the highest logit other than its target's."""

    masked = logits.detach().clone().float()
    masked[torch.arange(len(target)), target] = -float("inf")
    return masked.argmax(dim=1)
