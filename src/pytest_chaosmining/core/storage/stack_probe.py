"""A stack's numerics in a few numbers: what tells whether results computed on one
torch, numpy and device hold on another.

:func:`probe` draws from numpy's and torch's seeded generators (the suites' data and
the samplers' noise come from them) and runs a fixed network's forward and input
gradient through the layers the suites' models use (linear, 1-D and 2-D convolution,
pooling, a GRU, ReLU, tanh, softmax) and through module hooks (the rules of DeepLift
and Guided Backprop) on ``device``.  The shipped results keep the
probe of the stack that computed them (:func:`probe` at pack time); a run on another
stack compares its own (:func:`differences`): the draws equal (to the last bits), the
network's values and one AdamW step of its GRU within :data:`TOLERANCE` (relative to the
largest magnitude; CPUs differ at about 1e-8, a GPU without TF32 at about 1e-6).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING

from pytest_chaosmining.core.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import torch
else:  # heavy: loaded when the probe runs
    np = lazy_module("numpy")
    torch = lazy_module("torch")

#: largest difference of the network's values, relative to their largest magnitude
TOLERANCE = 1e-4
#: the probe's entries that are draws of a generator (compared to 1e-12 of their largest value:
#: integer draws exactly, a float draw within the last bits another libm may round differently)
DRAWS = (
    "numpy_normal", "numpy_uniform", "numpy_integers", "numpy_permutation",
    "torch_randn", "torch_rand", "torch_randint", "torch_randperm", "torch_bernoulli",
)  # fmt: skip
DRAW_TOLERANCE = 1e-12


@functools.cache
def stack_versions() -> dict[str, str]:
    """The versions of the numerical libraries a result was computed with (torch, numpy)."""
    found = {}
    for package in ("torch", "numpy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "absent"
    return found


def probe(device: torch.device | str) -> dict[str, list[float]]:
    """The probe's values on this stack and ``device`` (draws on CPU, the network on ``device``)."""
    rng = np.random.default_rng(0)
    generator = torch.Generator().manual_seed(0)
    values: dict[str, list[float]] = {
        "numpy_normal": rng.normal(size=8).tolist(),
        "numpy_uniform": rng.uniform(size=8).tolist(),
        "numpy_integers": rng.integers(0, 1000, size=8).astype(float).tolist(),
        "numpy_permutation": rng.permutation(16).astype(float).tolist(),
        "torch_randn": torch.randn(8, generator=generator).tolist(),
        "torch_rand": torch.rand(8, generator=generator).tolist(),
        "torch_randint": torch.randint(0, 1000, (8,), generator=generator).double().tolist(),
        "torch_randperm": torch.randperm(16, generator=generator).double().tolist(),
        "torch_bernoulli": torch.bernoulli(torch.full((16,), 0.5), generator=generator).tolist(),
    }
    weights = torch.Generator().manual_seed(1)

    def param(*shape: int) -> torch.Tensor:
        return (torch.randn(*shape, generator=weights) / shape[-1] ** 0.5).to(device)

    image = torch.rand(4, 1, 12, 12, generator=weights).to(device).requires_grad_(True)
    clip = torch.rand(4, 2, 16, generator=weights).to(device).requires_grad_(True)
    with torch.random.fork_rng(devices=[]):  # its initialisation draws from the global generator
        gru = torch.nn.GRU(2, 4, batch_first=True)
    with torch.no_grad():
        for parameter in gru.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=weights) / 2)
    gru = gru.to(device)
    conv2d, conv1d = param(3, 1, 3, 3), param(3, 2, 3)
    hidden = torch.nn.functional.max_pool2d(torch.relu(torch.nn.functional.conv2d(image, conv2d)), 2).flatten(1)
    sequence = torch.tanh(torch.nn.functional.conv1d(clip, conv1d))
    recurrent = gru(clip.transpose(1, 2))[0][:, -1]
    logits = hidden @ param(hidden.shape[1], 5) + sequence.flatten(1) @ param(sequence[0].numel(), 5)
    logits = logits + recurrent @ param(4, 5)
    out = torch.softmax(logits, dim=1)
    out[:, 0].sum().backward()
    values["network_output"] = out.detach().flatten().cpu().double().tolist()
    values["network_image_gradient"] = image.grad.flatten().cpu().double().tolist()  # type: ignore[union-attr]
    values["network_clip_gradient"] = clip.grad.flatten().cpu().double().tolist()  # type: ignore[union-attr]
    optimiser = torch.optim.AdamW(gru.parameters(), lr=0.01)  # a training step, as the suites train
    optimiser.step()
    values["network_trained"] = torch.cat([p.detach().flatten().cpu() for p in gru.parameters()]).double().tolist()
    values["network_hooked_gradient"] = _hooked_gradient(device, param, weights)
    return values


def _hooked_gradient(
    device: torch.device | str, param: Callable[..., torch.Tensor], weights: torch.Generator
) -> list[float]:
    """An input gradient through module hooks, as DeepLift and Guided Backprop take theirs:
    a forward hook on a ReLU module, and a full backward hook that keeps only the positive
    gradient (Guided Backprop's rule), on a network that calls the module twice."""
    relu = torch.nn.ReLU()
    relu.register_forward_hook(lambda module, args, out: out * 1.5)

    def guided(module: torch.nn.Module, grad_in: tuple[torch.Tensor, ...], grad_out: object) -> tuple[torch.Tensor]:
        return (grad_in[0].clamp(min=0.0),)

    relu.register_full_backward_hook(guided)
    x = (torch.rand(4, 6, generator=weights) - 0.5).to(device).requires_grad_(True)
    first, second = param(6, 8), param(8, 3)
    out = relu(relu(x @ first) @ second)
    out.sum().backward()
    return x.grad.flatten().cpu().double().tolist()  # type: ignore[union-attr]


def differences(then: dict[str, list[float]], now: dict[str, list[float]]) -> list[str]:
    """What differs between two probes (empty: the stacks compute alike)."""
    if not then:
        return ["no probe to compare"]
    found = []
    for name, expected in then.items():
        got = now.get(name)
        if got is None or len(got) != len(expected):
            found.append(f"{name}: missing or of another length")
            continue
        largest = max((abs(v) for v in expected), default=0.0) or 1.0
        worst = max((abs(a - b) for a, b in zip(expected, got, strict=True)), default=0.0)
        allowed = (DRAW_TOLERANCE if name in DRAWS else TOLERANCE) * largest
        if worst > allowed:
            found.append(f"{name} differs by {worst:.3g} (allowed {allowed:.3g})")
    return found
