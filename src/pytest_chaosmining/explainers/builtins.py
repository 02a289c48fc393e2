"""The built-in explainers: the paper's four, the other captum methods, and the control."""

from __future__ import annotations

from pytest_chaosmining.explainers.builtin_limitations import BUILTIN_LIMITATIONS
from pytest_chaosmining.explainers.builtin_settings import IG_STEPS, NOISE_SAMPLES
from pytest_chaosmining.explainers.context import Applicability
from pytest_chaosmining.explainers.contract import Explainer

#: the built-in explainers (the paper's four first), and the control
BUILTIN_NAMES = ("SA", "DL", "IG", "FA", "IxG", "GBP", "SG", "GS", "OCC", "GradCAM", "KS", "random")
#: the explainers of the ChaosMining paper
PAPER_NAMES = ("SA", "DL", "IG", "FA")
CONTROL_NAME = "random"


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
    from pytest_chaosmining.explainers import builtin_methods as m  # captum and torch: a --chaosmining run

    image = Applicability(domains=frozenset({"image"}), needs_layer=True)
    tabular = Applicability(domains=frozenset({"tabular"}))
    return {
        "SA": Explainer("SA", m.Saliency, {"abs": False}, "gradient", "builtin"),
        "DL": Explainer("DL", m.DeepLift, {}, "path", "builtin", completeness=True, known=BUILTIN_LIMITATIONS["DL"]),
        "IG": Explainer(
            "IG",
            m.IntegratedGradients,
            {"n_steps": IG_STEPS, "internal_batch_size": 4096},
            "path",
            "builtin",
            completeness=True,
        ),
        "FA": Explainer("FA", m.FeatureAblation, {"perturbations_per_eval": 8}, "ablation", "builtin"),
        "IxG": Explainer("IxG", m.InputXGradient, {}, None, "builtin"),
        "GBP": Explainer("GBP", m.GuidedBackprop, {}, None, "builtin", known=BUILTIN_LIMITATIONS["GBP"]),
        "SG": Explainer("SG", m.smoothgrad, {}, None, "builtin", stochastic=True),
        "GS": Explainer(
            "GS", m.GradientShap, {"n_samples": NOISE_SAMPLES, "stdevs": 0.0}, None, "builtin", stochastic=True
        ),
        "OCC": Explainer("OCC", m.occlusion, {}, None, "builtin"),
        "GradCAM": Explainer("GradCAM", m.LayerGradCam, {"relu_attributions": True}, None, "builtin", applies_to=image),
        "KS": Explainer(
            "KS",
            m.KernelShap,
            {"perturbations_per_eval": 64},
            None,
            "builtin",
            applies_to=tabular,
            in_default_run=False,
        ),
        CONTROL_NAME: Explainer(CONTROL_NAME, m.random_attribution, {}, None, "builtin", control=True),
    }
