"""captum's methods registered as captum's own CI would register them, with the known
limitations they declare (docs/explainers.md): run beside the built-ins with

    pytest --chaosmining -p no:randomly --rootdir examples/captum -c /dev/null \
        --chaosmining-explainers own examples/captum

Each limitation cites the captum issue it stands for; a correct method weaker than a
shared bar declares the level it is judged at (``weaker=True``).
"""

import pytest
from captum.attr import (
    DeepLift,
    FeatureAblation,
    GradientShap,
    GuidedBackprop,
    InputXGradient,
    IntegratedGradients,
    LayerGradCam,
    Lime,
    NoiseTunnel,
    Occlusion,
    Saliency,
)

from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.explainers.builtin_limitations import DEEPLIFT


def smoothgrad(model, inputs, target):
    """captum's NoiseTunnel around Saliency, SmoothGrad as its tutorial calls it."""
    tunnel = NoiseTunnel(Saliency(model))
    return tunnel.attribute(inputs, nt_type="smoothgrad", nt_samples=10, stdevs=0.1, target=target)


def occlusion(model, inputs, target):
    """captum's Occlusion with a window of one feature (tabular) or a 3x3 patch (images)."""
    window = (1,) * (inputs.dim() - 1) if inputs.dim() == 2 else (1,) + (3,) * (inputs.dim() - 2)
    return Occlusion(model).attribute(inputs, sliding_window_shapes=window, target=target)


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {
        "captum-DeepLift": Explainer("captum-DeepLift", DeepLift, completeness=True, known=DEEPLIFT),
        "captum-IG": Explainer("captum-IG", IntegratedGradients, completeness=True),
        "captum-Saliency": Saliency,
        "captum-IxG": InputXGradient,
        "captum-GBP": GuidedBackprop,
        "captum-GradientShap": Explainer("captum-GradientShap", GradientShap, stochastic=True),
        "captum-SmoothGrad": Explainer("captum-SmoothGrad", smoothgrad, stochastic=True),
        "captum-Occlusion": occlusion,
        "captum-FeatureAblation": FeatureAblation,
        "captum-LayerGradCam": LayerGradCam,
        "captum-Lime": Explainer("captum-Lime", Lime, stochastic=True),
    }
