"""The stack probe's values (:mod:`.stack_probe`) on this stack and a device: numpy's and
torch's seeded draws and a fixed network's forward, gradient, training step and hooked
gradient."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from pytest_chaosmining.core.training.determinism import reproducible


def probe_as_explainers_run(device_type: str) -> dict[str, list[float]]:
    """:func:`probe` on ``device_type`` as the explainers run there (TF32 off on CUDA, gradients on)."""
    device = torch.device(device_type)
    with reproducible(device), torch.enable_grad():
        return probe(device)


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
