"""What every reference formula shares: the model and inputs in float64 on a private
copy, and the explained output of each sample (one output: a regressor's; else the
target class's score)."""

from __future__ import annotations

import copy

import torch

from pytest_chaosmining.explainers import NotApplicable

#: what a formula explains: a regressor's output (None, 0) or one class per sample
Target = int | torch.Tensor | None


def exact_copy(model: torch.nn.Module, inputs: torch.Tensor) -> tuple[torch.nn.Module, torch.Tensor]:
    """A float64 copy of ``model`` (its mode kept: the suites explain models in eval mode)
    and ``inputs`` in float64, detached."""
    return copy.deepcopy(model).double(), inputs.detach().double()


def explained_output(output: torch.Tensor, target: Target) -> torch.Tensor:
    """Each sample's explained output ``(N,)``: the one output of a regressor, else the
    ``target`` entry (an int, or one class per sample) of each row."""
    if output.dim() == 1:
        return output
    rows = output.reshape(output.shape[0], -1)
    if rows.shape[1] == 1:
        return rows[:, 0]
    if target is None:
        raise NotApplicable("a reference formula needs a target on a model with several outputs")
    index = torch.as_tensor(target, device=rows.device).reshape(-1).expand(rows.shape[0]).long()
    return rows.gather(1, index[:, None])[:, 0]


def gradient(model: torch.nn.Module, inputs: torch.Tensor, target: Target) -> torch.Tensor:
    """``∂y/∂x`` of each sample's explained output (samples do not interact: eval mode)."""
    x = inputs.detach().requires_grad_(True)
    with torch.enable_grad():
        (grad,) = torch.autograd.grad(explained_output(model(x), target).sum(), x)
    return grad


def outputs(model: torch.nn.Module, inputs: torch.Tensor, target: Target) -> torch.Tensor:
    """Each sample's explained output, without gradients."""
    with torch.no_grad():
        return explained_output(model(inputs), target)
