"""The built-in explainers: the paper's four, the other captum methods, and the control."""

from __future__ import annotations

from typing import Any

from pytest_chaosmining.explainers.context import Applicability, AttributionContext
from pytest_chaosmining.explainers.contract import Explainer

# captum and torch are imported where used: heavy, they wait for --chaosmining.


#: the built-in explainers (the paper's four first), and the control
BUILTIN_NAMES = ("SA", "DL", "IG", "FA", "IxG", "GBP", "SG", "GS", "OCC", "GradCAM", "KS", "random")
#: the explainers of the ChaosMining paper
PAPER_NAMES = ("SA", "DL", "IG", "FA")
CONTROL_NAME = "random"
IG_STEPS = 10
#: noisy samples of SmoothGrad and GradientShap
NOISE_SAMPLES = 10


def _random_attribution(model: Any, inputs: Any, target: Any) -> Any:
    """The control: uniform noise, seeded, independent of the model."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    return torch.rand(inputs.shape, generator=gen, dtype=inputs.dtype).to(inputs.device)


def _smoothgrad(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """SmoothGrad: the mean gradient over :data:`NOISE_SAMPLES` copies of the inputs
    with Gaussian noise of 0.15 × the inputs' standard deviation (seeded per call; drawn
    on the CPU on every device: :mod:`~pytest_chaosmining.explainers.cpu_noise`)."""
    from captum.attr import Saliency

    from pytest_chaosmining.explainers.cpu_noise import CpuNoiseTunnel

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


def _occlusion(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """Occlusion with overlapping windows: one feature of the suite's grid per
    window, sliding by half a window (a tabular column: by one), zero baseline."""
    from captum.attr import Occlusion

    window = context.window or (1,) * (inputs.dim() - 1)
    strides = tuple(max(1, w // 2) if i > 0 or len(window) == 1 else w for i, w in enumerate(window))
    return Occlusion(model).attribute(
        inputs,
        sliding_window_shapes=window,
        strides=strides,
        target=target,
        perturbations_per_eval=int(context.settings.get("perturbations_per_eval", 8)),
    )


def builtin_explainers() -> dict[str, Explainer]:
    """The built-ins (each with a short name):

    - the paper's four: SA (Saliency), DL (DeepLift), IG (IntegratedGradients,
      10 steps, zero baseline), FA (FeatureAblation over the suite's features);
    - IxG (InputXGradient), GBP (GuidedBackprop), SG (SmoothGrad: Saliency
      under a NoiseTunnel), GS (GradientShap, 10 samples over a training
      background), OCC (Occlusion, overlapping windows), GradCAM (LayerGradCam
      on the last 2-D convolution, upsampled; images only) and KS (KernelShap
      over the features; tabular only);
    - ``random``: the control (seeded uniform noise, independent of the model).
    """
    from captum.attr import (
        DeepLift,
        FeatureAblation,
        GradientShap,
        GuidedBackprop,
        InputXGradient,
        IntegratedGradients,
        KernelShap,
        LayerGradCam,
        Saliency,
    )

    image = Applicability(domains=frozenset({"image"}), needs_layer=True)
    tabular = Applicability(domains=frozenset({"tabular"}))
    return {
        "SA": Explainer("SA", Saliency, {"abs": False}, "gradient", "builtin"),
        "DL": Explainer("DL", DeepLift, {}, "path", "builtin", completeness=True),
        "IG": Explainer(
            "IG",
            IntegratedGradients,
            {"n_steps": IG_STEPS, "internal_batch_size": 4096},
            "path",
            "builtin",
            completeness=True,
        ),
        "FA": Explainer("FA", FeatureAblation, {"perturbations_per_eval": 8}, "ablation", "builtin"),
        "IxG": Explainer("IxG", InputXGradient, {}, None, "builtin"),
        "GBP": Explainer("GBP", GuidedBackprop, {}, None, "builtin"),
        "SG": Explainer("SG", _smoothgrad, {}, None, "builtin", stochastic=True),
        "GS": Explainer(
            "GS", GradientShap, {"n_samples": NOISE_SAMPLES, "stdevs": 0.0}, None, "builtin", stochastic=True
        ),
        "OCC": Explainer("OCC", _occlusion, {}, None, "builtin"),
        "GradCAM": Explainer("GradCAM", LayerGradCam, {"relu_attributions": True}, None, "builtin", applies_to=image),
        "KS": Explainer(
            "KS", KernelShap, {"perturbations_per_eval": 64}, None, "builtin", applies_to=tabular, in_default_run=False
        ),
        CONTROL_NAME: Explainer(CONTROL_NAME, _random_attribution, {}, None, "builtin", control=True),
    }
