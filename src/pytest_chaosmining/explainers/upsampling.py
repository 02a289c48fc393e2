"""A layer method's map brought to its input's size (torch only: the captum binding and
the adapters of other libraries both use it)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from pytest_chaosmining.explainers.contract import MissingInput


def upsampled(layer_map: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """A layer method's map ``(N, C', h, w)`` summed over channels and
    interpolated (bilinear) to the inputs' size, the same in every input channel."""
    summed = layer_map.sum(1, keepdim=True) if layer_map.dim() == 4 else layer_map
    if summed.dim() != 4:
        raise MissingInput(f"layer attribution of shape {tuple(layer_map.shape)} cannot be upsampled to an image")
    up = F.interpolate(summed, size=tuple(inputs.shape[2:]), mode="bilinear", align_corners=False)
    return up.expand_as(inputs).contiguous()
