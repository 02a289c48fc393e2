"""The perturbation methods: occlusion (Zeiler & Fergus 2014, arXiv:1311.2901, §4.2: the
explained output as an occluder slides over the input; each element's attribution the
mean drop ``f(x) − f(x with the window at the baseline)`` over the windows that cover it)
and feature ablation (the drop when one feature, a group of elements, is set to the
baseline, given to each of its elements)."""

from __future__ import annotations

import itertools

import torch

from pytest_chaosmining.references.exact import Target, outputs


def occlusion(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: Target,
    window: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    baseline: float = 0.0,
) -> torch.Tensor:
    """Occlusion by a ``window`` (one extent per dimension of a sample) moved by ``strides``
    (the window's where None), the occluded elements set to ``baseline``."""
    shape = tuple(inputs.shape[1:])
    if len(window) != len(shape):
        raise ValueError(f"the window {window} has not one extent per dimension of a sample {shape}")
    strides = strides or window
    starts = [range(0, size - w + 1, s) for size, w, s in zip(shape, window, strides, strict=True)]
    plain = outputs(model, inputs, target)
    total, count = torch.zeros_like(inputs), torch.zeros_like(inputs[:1])
    for corner in itertools.product(*starts):
        region = (slice(None), *(slice(c, c + w) for c, w in zip(corner, window, strict=True)))
        occluded = inputs.clone()
        occluded[region] = baseline
        drop = plain - outputs(model, occluded, target)
        total[region] += drop.reshape(-1, *([1] * len(shape)))
        count[region] += 1
    return total / count.clamp(min=1)  # an element no window covers stays 0


def feature_ablation(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: Target,
    feature_mask: torch.Tensor | None,
    baseline: float = 0.0,
) -> torch.Tensor:
    """Feature ablation of the groups of ``feature_mask`` (integer ids broadcastable to the
    inputs; None: every element its own feature), each set to ``baseline`` in turn."""
    if feature_mask is None:
        groups = torch.arange(inputs[0].numel(), device=inputs.device).reshape(inputs.shape[1:])[None]
    else:
        groups = feature_mask.to(inputs.device)
    groups = groups.expand_as(inputs)
    plain = outputs(model, inputs, target)
    attribution = torch.zeros_like(inputs)
    for group in torch.unique(groups):
        members = groups == group
        ablated = torch.where(members, torch.full_like(inputs, baseline), inputs)
        drop = plain - outputs(model, ablated, target)
        attribution += members * drop.reshape(-1, *([1] * (inputs.dim() - 1)))
    return attribution
