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
import dataclasses
from collections.abc import Callable

import torch


def _zennit(composite_name: str) -> Callable[..., object]:
    from zennit import composites

    from pytest_chaosmining.explainers.adapters import zennit_method

    return zennit_method(getattr(composites, composite_name))


def _grad_cam(name: str) -> Callable[..., object]:
    import pytorch_grad_cam

    from pytest_chaosmining.explainers.adapters import grad_cam_method

    try:
        from pytorch_grad_cam.utils import model_targets  # noqa: F401 - grad-cam 1.3.7 and later
    except ImportError:
        return _grad_cam_before_1_3_7(getattr(pytorch_grad_cam, name))
    return grad_cam_method(getattr(pytorch_grad_cam, name))


def _grad_cam_before_1_3_7(cam: Callable[..., object]) -> Callable[..., object]:
    """A pytorch-grad-cam class as a CI of grad-cam 1.3.x called it: ``target_category``
    (one class per sample) where later releases take ``ClassifierOutputTarget`` objects,
    ``target_layer`` (1.3.1) or ``target_layers`` (1.3.2 to 1.3.6).  Releases before 1.3.2
    never remove their hooks, so the class gets a copy of the model (the suites' isolation
    check would otherwise fail it for a leak its users did not report here)."""
    import inspect

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: object) -> torch.Tensor:
        from pytest_chaosmining.explainers import NotApplicable

        layer_name = getattr(context, "layer_name", None)
        if layer_name is None or inputs.dim() != 4:
            raise NotApplicable("a CAM needs an image model with a 2-D convolution")
        twin = copy.deepcopy(model)
        layer = dict(twin.named_modules())[layer_name]
        classes = [int(t) for t in torch.as_tensor(target).reshape(-1).expand(inputs.shape[0])]
        singular = "target_layer" in inspect.signature(cam).parameters
        method = cam(twin, **({"target_layer": layer} if singular else {"target_layers": [layer]}))
        with torch.enable_grad():
            maps = method(input_tensor=inputs, target_category=classes)
        release = getattr(method.activations_and_grads, "release", None)
        if release is not None:
            release()
        return torch.as_tensor(maps, device=inputs.device).unsqueeze(1).expand_as(inputs).contiguous()

    return explain


def _torchcam(name: str) -> Callable[..., object]:
    try:
        from torchcam import methods
    except ImportError:  # torchcam before 0.3.1 kept its CAM classes in torchcam.cams, with another call
        from torchcam import cams

        return _torchcam_before_0_3_1(getattr(cams, name))

    from pytest_chaosmining.explainers.adapters import torchcam_method

    return torchcam_method(getattr(methods, name))


def _torchcam_before_0_3_1(method: Callable[..., object]) -> Callable[..., object]:
    """A torchcam CAM class of ``torchcam.cams`` (0.2.x and 0.3.0) as its users called it:
    one sample and one class index per call (``cam(class_idx, scores)``), the map of the
    hooked layer upsampled to the input, the hooks cleared after the call."""

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: object) -> torch.Tensor:
        from pytest_chaosmining.explainers import NotApplicable
        from pytest_chaosmining.explainers.binding import upsampled

        layer_name = getattr(context, "layer_name", None)
        if layer_name is None or inputs.dim() != 4:
            raise NotApplicable("a CAM needs an image model with a 2-D convolution")
        classes = [int(t) for t in torch.as_tensor(target).reshape(-1).expand(inputs.shape[0])]
        cam = method(model, target_layer=layer_name, input_shape=tuple(inputs.shape[1:]))
        maps = []
        try:
            with torch.enable_grad():
                for row, index in zip(inputs, classes, strict=True):
                    scores = model(row.unsqueeze(0))
                    found = cam(index, scores, normalized=False)
                    maps.append((found[0] if isinstance(found, list) else found).reshape(_map_shape(found)))
        finally:
            cam.clear_hooks()
        return upsampled(torch.stack(maps).unsqueeze(1), inputs)

    return explain


def _map_shape(found: object) -> tuple[int, int]:
    """The (height, width) of one torchcam map (0.3.0 returns a list, one per layer)."""
    first = found[0] if isinstance(found, list) else found
    return tuple(first.shape[-2:])  # type: ignore[attr-defined,return-value]


def _shap(name: str) -> Callable[..., object]:
    import shap

    from pytest_chaosmining.explainers.adapters import shap_method

    return shap_method(getattr(shap, name))


def _shap_deep_zero() -> Callable[..., object]:
    """shap's DeepExplainer against the zero baseline (a background of one zero sample), as
    DeepLift runs in the suites: its values then sum to f(x) - f(0), the completeness it is
    registered as promising.  shap's own additivity assertion (``check_additivity``) is
    off: it raises on every network where the sums miss by 0.01 (the vision CNN's
    ``AdaptiveMaxPool2d``), where the suites judge them by calibrated bars instead."""
    import shap

    from pytest_chaosmining.explainers.adapters import shap_method

    method = shap_method(shap.DeepExplainer, check_additivity=False)  # the gate judges the sums, calibrated

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: object) -> object:
        blank = torch.zeros_like(inputs[:1])
        zero = dataclasses.replace(context, background_source=lambda: blank)  # type: ignore[type-var]
        return method(model, inputs, target, zero)

    return explain


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
    "shap-DeepExplainer-zero": _shap_deep_zero,
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
