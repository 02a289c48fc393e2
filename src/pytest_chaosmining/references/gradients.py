"""The gradient methods as their papers define them: saliency (Simonyan et al. 2014,
arXiv:1312.6034, §3.1: ``w = ∂S_c/∂I``, the map its magnitude), input × gradient
(Shrikumar et al. 2016, arXiv:1605.01713: ``x ⊙ ∂f/∂x``), integrated gradients
(Sundararajan et al. 2017, arXiv:1703.01365, Eq. 3: ``(x − x') ⊙ ∫₀¹ ∂F(x' + α(x − x'))/∂x dα``,
the integral by a stated rule and number of steps) and SmoothGrad (Smilkov et al. 2017,
arXiv:1706.03825, Eq. 3: the mean gradient over ``n`` copies of ``x`` with Gaussian noise
of standard deviation ``σ``)."""

from __future__ import annotations

import numpy as np
import torch

from pytest_chaosmining.explainers import NotApplicable
from pytest_chaosmining.references.exact import Target, gradient

#: the quadrature rules of the path integral: nodes and weights on [0, 1] for ``steps`` points
RULES = ("riemann_right", "riemann_left", "riemann_middle", "riemann_trapezoid", "gausslegendre")


def saliency(model: torch.nn.Module, inputs: torch.Tensor, target: Target, absolute: bool = True) -> torch.Tensor:
    """Saliency: the gradient of the explained output, its magnitude where ``absolute``
    (Simonyan et al. take the magnitude, then the maximum over colour channels for a picture)."""
    grad = gradient(model, inputs, target)
    return grad.abs() if absolute else grad


def input_x_gradient(model: torch.nn.Module, inputs: torch.Tensor, target: Target) -> torch.Tensor:
    """Input × gradient."""
    return inputs * gradient(model, inputs, target)


def quadrature(rule: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes ``α`` in [0, 1] and their weights for ``rule`` with ``steps`` points
    (Eq. 3 of the paper is ``riemann_right``: ``α = k/m``, ``k = 1..m``, weights ``1/m``)."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, not {steps}")
    k = np.arange(steps, dtype=np.float64)
    if rule == "riemann_right":
        return (k + 1) / steps, np.full(steps, 1.0 / steps)
    if rule == "riemann_left":
        return k / steps, np.full(steps, 1.0 / steps)
    if rule == "riemann_middle":
        return (k + 0.5) / steps, np.full(steps, 1.0 / steps)
    if rule == "riemann_trapezoid":
        if steps < 2:
            raise ValueError("the trapezoid rule needs at least 2 steps")
        weights = np.full(steps, 1.0 / (steps - 1))
        weights[[0, -1]] /= 2
        return k / (steps - 1), weights
    if rule == "gausslegendre":
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        return (nodes + 1) / 2, weights / 2
    raise ValueError(f"unknown rule {rule!r}: one of {', '.join(RULES)}")


def integrated_gradients(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: Target,
    baseline: torch.Tensor | None,
    steps: int = 50,
    rule: str = "riemann_right",
) -> torch.Tensor:
    """Integrated gradients from ``baseline`` (zeros where None) by ``rule`` with ``steps`` points."""
    start = torch.zeros_like(inputs) if baseline is None else baseline.to(inputs).expand_as(inputs)
    nodes, weights = quadrature(rule, steps)
    total = torch.zeros_like(inputs)
    for alpha, weight in zip(nodes, weights, strict=True):
        total += float(weight) * gradient(model, start + float(alpha) * (inputs - start), target)
    return (inputs - start) * total


def smoothgrad(
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: Target,
    samples: int = 50,
    stdev: float | None = None,
    noise_level: float = 0.15,
    seed: int | None = None,
) -> torch.Tensor:
    """SmoothGrad of the gradient: ``samples`` noisy copies, the noise's standard deviation
    ``stdev`` or, where None, ``noise_level`` × each sample's range (``x_max − x_min``, the
    paper's σ); the draws from a generator seeded with ``seed`` (None: torch's, which the
    suites seed before each call)."""
    if samples < 1:
        raise NotApplicable(f"SmoothGrad needs at least one sample, not {samples}")
    flat = inputs.reshape(inputs.shape[0], -1)
    spread = flat.max(1).values - flat.min(1).values
    sigma = torch.full_like(spread, stdev) if stdev is not None else noise_level * spread
    sigma = sigma.reshape(-1, *([1] * (inputs.dim() - 1)))
    generator = None if seed is None else torch.Generator(device=inputs.device).manual_seed(seed)
    total = torch.zeros_like(inputs)
    for _ in range(samples):
        noise = torch.randn(inputs.shape, generator=generator, device=inputs.device, dtype=inputs.dtype)
        total += gradient(model, inputs + sigma * noise, target)
    return total / samples
