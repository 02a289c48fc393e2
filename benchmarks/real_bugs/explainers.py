"""The attribution libraries' methods as the replay registers them: each name a corpus
entry's ``explainers`` may list beyond the plugin's built-ins, made with the plugin's own
adapters, the way a library's CI registers its methods (docs/explainers.md).

The library is imported when the method is made, inside the run, so the release the
replay put first on ``PYTHONPATH`` is the one that runs.  A wrapper entry (``wrapper =
"name"`` in the corpus) swaps the method for :data:`WRAPPERS`' function of that name in
its "bad" run: the reported behaviour reintroduced on the current release.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch


def _zennit(composite_name: str) -> Callable[..., object]:
    from zennit import composites

    from pytest_chaosmining.explainers.adapters import zennit_method

    return zennit_method(getattr(composites, composite_name))


def _grad_cam(name: str) -> Callable[..., object]:
    import pytorch_grad_cam

    from pytest_chaosmining.explainers.adapters import grad_cam_method

    return grad_cam_method(getattr(pytorch_grad_cam, name))


def _torchcam(name: str) -> Callable[..., object]:
    try:
        from torchcam import methods
    except ImportError:  # torchcam before 0.3.1 kept its CAM classes in torchcam.cams
        from torchcam import cams as methods  # type: ignore[no-redef]

    from pytest_chaosmining.explainers.adapters import torchcam_method

    return torchcam_method(getattr(methods, name))


def _shap(name: str) -> Callable[..., object]:
    import shap

    from pytest_chaosmining.explainers.adapters import shap_method

    return shap_method(getattr(shap, name))


def _captum(name: str) -> Callable[..., object]:
    from captum import attr

    return getattr(attr, name)


#: registered name -> a maker of the method (called inside the run)
METHODS: dict[str, Callable[[], Callable[..., object]]] = {
    "zennit-EpsilonPlus": lambda: _zennit("EpsilonPlus"),
    "zennit-EpsilonAlpha2Beta1": lambda: _zennit("EpsilonAlpha2Beta1"),
    "zennit-EpsilonPlusFlat": lambda: _zennit("EpsilonPlusFlat"),
    "gradcam-GradCAM": lambda: _grad_cam("GradCAM"),
    "gradcam-GradCAMPlusPlus": lambda: _grad_cam("GradCAMPlusPlus"),
    "gradcam-LayerCAM": lambda: _grad_cam("LayerCAM"),
    "gradcam-ScoreCAM": lambda: _grad_cam("ScoreCAM"),
    "torchcam-GradCAM": lambda: _torchcam("GradCAM"),
    "torchcam-GradCAMpp": lambda: _torchcam("GradCAMpp"),
    "torchcam-ScoreCAM": lambda: _torchcam("ScoreCAM"),
    "shap-GradientExplainer": lambda: _shap("GradientExplainer"),
    "shap-DeepExplainer": lambda: _shap("DeepExplainer"),
    "captum-DeepLift": lambda: _captum("DeepLift"),
    "captum-GuidedBackprop": lambda: _captum("GuidedBackprop"),
    "captum-IntegratedGradients": lambda: _captum("IntegratedGradients"),
}


class _CalledActivation(torch.nn.Module):
    """An activation called as a function inside ``forward`` (``F.relu`` in a custom
    module): what a DeepLift that hooks only the activation module types it knows sees."""

    def __init__(self, function: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.function = function

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x)


def _unhooked_activations(captum_class: Callable[..., object]) -> Callable[..., object]:
    """captum#1082: DeepLift on a network whose ReLUs are called functionally falls back to
    the plain gradient through them.  The bad method runs the library's own DeepLift on a
    copy of the model with every ``nn.ReLU`` module replaced by the same function called
    from a module DeepLift does not know (the model itself is not touched)."""

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
        twin = copy.deepcopy(model)
        for parent in list(twin.modules()):
            for name, child in parent.named_children():
                if isinstance(child, torch.nn.ReLU):
                    setattr(parent, name, _CalledActivation(torch.relu))
        return captum_class(twin).attribute(inputs, target=target)  # type: ignore[attr-defined]

    return explain


def _deep_explainer_without_gelu_rule(method: Callable[..., object]) -> Callable[..., object]:
    """shap#3719: before shap 0.47 PyTorch's DeepExplainer had no rule for ``nn.GELU`` and
    passed the plain gradient through it.  Old shap releases do not import with numpy 2,
    so the bad method is today's release with its GELU rule taken out for the call."""

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: object) -> object:
        from shap.explainers._deep import deep_pytorch

        saved = deep_pytorch.op_handler.pop("GELU", None)
        try:
            return method(model, inputs, target, context)
        finally:
            if saved is not None:
                deep_pytorch.op_handler["GELU"] = saved

    return explain


#: wrapper name -> a maker of the bad method, given the good method's maker
WRAPPERS: dict[str, Callable[[Callable[[], Callable[..., object]]], Callable[..., object]]] = {
    "unhooked-activations": lambda make: _unhooked_activations(make()),
    "deep-explainer-without-gelu-rule": lambda make: _deep_explainer_without_gelu_rule(make()),
}
