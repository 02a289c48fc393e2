"""Useless and misbehaving explainers every suite must reject.

A bar is only as good as what it rejects.  These explainers know nothing about
the model (or misbehave towards it), and every suite's bars must fail each of
them; the project's tests register them in every suite, and the calibration
report lists their values beside the bars.  They work on every input shape the
suites use: tabular ``(N, F)``, audio ``(N, C, T)`` and images ``(N, C, H, W)``.

Model-free maps (computed from the inputs alone):
    ``input_magnitude``: ``|x|``;
    ``edges``: the magnitude of the input's finite differences along its last
    axis or axes (an edge detector on images, an onset detector on audio);
    ``fixed_gradient``: input gradients of a fixed random function, not the model.
Priors (computed from the shape alone):
    ``centre``: a Gaussian bump at the centre of the image / sequence / columns;
    ``first``: favours the first column, channel or row;
    ``constant``: every feature tied.

Misbehaving (for the isolation checks; each also returns a random map):
    ``zero_weights``, ``leave_hook``, ``train_mode``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Explain = Callable[[torch.nn.Module, torch.Tensor, object], torch.Tensor]


def input_magnitude(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """``|x|``: ignores the model."""
    return inputs.abs()


def edges(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Magnitude of finite differences of the input (images: both spatial axes)."""
    axes = (-1, -2) if inputs.dim() == 4 else (-1,)
    out = torch.zeros_like(inputs)
    for axis in axes:
        diff = inputs.diff(dim=axis).abs()
        pad = [0, 0] * (-axis - 1) + [0, 1]
        out = out + torch.nn.functional.pad(diff, pad)
    if inputs.dim() == 4:  # an edge map per pixel, shared by the channels
        out = out.mean(dim=1, keepdim=True).expand_as(inputs).clone()
    return out


def fixed_gradient(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Input gradients of ``tanh(x · w)`` summed, with ``w`` fixed by a seed: a
    gradient method that never looks at the model."""
    flat = inputs.detach().reshape(len(inputs), -1).requires_grad_(True)
    w = torch.randn(flat.shape[1], 8, generator=torch.Generator().manual_seed(0)).to(inputs.device, inputs.dtype)
    torch.tanh(flat @ w / flat.shape[1] ** 0.5).sum().backward()
    assert flat.grad is not None
    return flat.grad.reshape(inputs.shape)


def centre(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """A Gaussian bump at the centre of the spatial / time / feature axes."""
    dims = (-2, -1) if inputs.dim() == 4 else (-1,)
    bump = torch.ones((), dtype=inputs.dtype, device=inputs.device)
    for axis in dims:
        n = inputs.shape[axis]
        r = torch.arange(n, dtype=inputs.dtype, device=inputs.device) - (n - 1) / 2
        g = torch.exp(-(r**2) / (2 * max(n / 14, 0.5) ** 2))
        bump = bump.unsqueeze(-1) * g if bump.dim() else g
    return bump.expand_as(inputs).clone()


def first(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Decreasing weight along axis 1: the first column (tabular) or channel (audio, images) first."""
    n = inputs.shape[1]
    ramp = torch.linspace(1.0, 0.0, n, dtype=inputs.dtype, device=inputs.device)
    return ramp.reshape((1, n) + (1,) * (inputs.dim() - 2)).expand_as(inputs).clone()


def constant(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Every feature tied."""
    return torch.ones_like(inputs)


def _noise(inputs: torch.Tensor) -> torch.Tensor:
    return torch.rand(inputs.shape, generator=torch.Generator().manual_seed(1)).to(inputs.device, inputs.dtype)


def zero_weights(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Zeroes every parameter of the model it is given."""
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    return _noise(inputs)


def leave_hook(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Leaves a forward hook that zeroes the first module's output."""
    next(m for m in model.modules() if not list(m.children())).register_forward_hook(lambda m, i, o: o * 0)
    return _noise(inputs)


def train_mode(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """Leaves the model in train mode."""
    model.train()
    return _noise(inputs)


#: model-free maps and priors: every suite's bars must reject each of them
CHEATS: dict[str, Explain] = {
    "input_magnitude": input_magnitude,
    "edges": edges,
    "fixed_gradient": fixed_gradient,
    "centre": centre,
    "first": first,
    "constant": constant,
}
#: explainers that change what they are given: each fails its own tests, naming the change
MISBEHAVING: dict[str, Explain] = {"zero_weights": zero_weights, "leave_hook": leave_hook, "train_mode": train_mode}
