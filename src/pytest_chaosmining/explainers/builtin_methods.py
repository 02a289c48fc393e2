"""The built-in explainers' methods (torch and captum at the top: loaded when the built-ins
are first built, :func:`~pytest_chaosmining.explainers.builtins.builtin_explainers`): the
captum classes they name and the three written here."""

from __future__ import annotations

from typing import Any

import torch
from captum.attr import (
    DeepLift,
    FeatureAblation,
    GradientShap,
    GuidedBackprop,
    InputXGradient,
    IntegratedGradients,
    KernelShap,
    LayerGradCam,
    Occlusion,
    Saliency,
)

from pytest_chaosmining.explainers.builtin_settings import NOISE_SAMPLES
from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.cpu_noise import CpuNoiseTunnel

__all__ = [
    "DeepLift",
    "FeatureAblation",
    "GradientShap",
    "GuidedBackprop",
    "InputXGradient",
    "IntegratedGradients",
    "KernelShap",
    "LayerGradCam",
    "Saliency",
    "occlusion",
    "random_attribution",
    "smoothgrad",
]


def random_attribution(model: Any, inputs: Any, target: Any) -> Any:
    """The control: uniform noise, seeded, independent of the model."""
    gen = torch.Generator(device="cpu").manual_seed(0)
    return torch.rand(inputs.shape, generator=gen, dtype=inputs.dtype).to(inputs.device)


def smoothgrad(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """SmoothGrad: the mean gradient over :data:`NOISE_SAMPLES` copies of the inputs
    with Gaussian noise of 0.15 × the inputs' standard deviation (seeded per call; drawn
    on the CPU on every device: :mod:`~pytest_chaosmining.explainers.cpu_noise`)."""
    sigma = float(0.15 * inputs.detach().float().std())
    return CpuNoiseTunnel(Saliency(model)).attribute(
        inputs,
        nt_type="smoothgrad",
        nt_samples=NOISE_SAMPLES,
        nt_samples_batch_size=NOISE_SAMPLES,
        stdevs=sigma,
        target=target,
        abs=False,
    )


def occlusion(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """Occlusion with overlapping windows: one feature of the suite's grid per
    window, sliding by half a window (a tabular column: by one), zero baseline."""
    window = context.window or (1,) * (inputs.dim() - 1)
    strides = tuple(max(1, w // 2) if i > 0 or len(window) == 1 else w for i, w in enumerate(window))
    return Occlusion(model).attribute(
        inputs,
        sliding_window_shapes=window,
        strides=strides,
        target=target,
        perturbations_per_eval=int(context.settings.get("perturbations_per_eval", 8)),
    )
