"""One-line registration of attribution methods from libraries other than captum.

Each adapter returns an explainer callable ``(model, inputs, target, *, context)``
(:mod:`pytest_chaosmining.explainers.binding`) that runs the library's method on the model
it is given and returns a map of the inputs' shape::

    import quantus, shap
    from pytorch_grad_cam import GradCAM
    from zennit.composites import EpsilonPlus
    from pytest_chaosmining.explainers.adapters import grad_cam_method, quantus_method, shap_method, zennit_method

    @pytest.hookimpl(optionalhook=True)
    def pytest_chaosmining_explainers(config):
        return {"shap": shap_method(shap.GradientExplainer), "grad-cam": grad_cam_method(GradCAM),
                "quantus-IG": quantus_method(quantus.explain, method="IntegratedGradients"),
                "LRP": zennit_method(EpsilonPlus)}

Every adapter returns a callable ``(model, inputs, target, context)``; a map the
library returns as numpy is converted by the plugin (with its usual shape
checks).  The libraries are imported by the caller (install them yourself, or
the ``interop`` extra); this module imports none of them at import time, only torch
and numpy, which every one of those libraries imports itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from pytest_chaosmining.explainers import NotApplicable
from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.upsampling import upsampled

# pytorch_grad_cam and zennit are optional: imported where an adapter of theirs runs

#: an explainer callable that takes the suite's context; its map a tensor, or a numpy array the plugin converts
ContextExplainer = Callable[
    ["torch.nn.Module", "torch.Tensor", "int | torch.Tensor | None", AttributionContext], object
]


def _one_hot(output: torch.Tensor, target: int | torch.Tensor | None) -> torch.Tensor:
    """The relevance seed: 1 at each sample's target output, 0 elsewhere."""

    seed = torch.zeros_like(output)
    if target is None:
        return torch.ones_like(output)
    index = torch.as_tensor(target, device=output.device).long().reshape(-1, 1)
    return seed.scatter_(1, index.expand(output.shape[0], 1), 1.0)


def zennit_method(
    composite: Callable[..., object] | None,
    attributor: Callable[..., object] | None = None,
    canonizers: Callable[[], list[object]] | None = None,
) -> ContextExplainer:
    """An explainer from a zennit composite class (``EpsilonPlus``, ``EpsilonGammaBox``
    with its bounds bound by ``functools.partial``, ...) and an attributor class
    (default ``zennit.attribution.Gradient``): LRP-style relevance of each
    sample's target output (``composite=None``: zennit's plain gradient, the same
    method as the built-in SA).  ``canonizers`` makes the composite's canonizers; by
    default a model with batch norm gets zennit's ``SequentialMergeBatchNorm``
    (LRP's rules assume batch norm merged into the layer before it).  A composite's
    relevance is marked ``sized``: against a baseline its maps' size is compared too."""

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        from zennit.attribution import Gradient
        from zennit.canonizers import SequentialMergeBatchNorm

        if canonizers is not None:
            made = canonizers()
        else:
            batch_norm = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules())
            made = [SequentialMergeBatchNorm()] if batch_norm else []
        make: Any = attributor or Gradient  # a zennit Attributor class
        rules = composite(canonizers=made) if composite is not None else None
        with make(model=model, composite=rules) as attribute:
            _, relevance = attribute(inputs, lambda output: _one_hot(output, target))
        return relevance

    explain.__name__ = f"zennit_{getattr(composite, '__name__', 'gradient')}"
    if composite is not None:  # relevance: its size is what LRP conserves (Explainer.size_promised)
        setattr(explain, "sized", True)  # noqa: B010 - a function's attribute, not a typed field
    return explain


def torchcam_method(method: Callable[..., object]) -> ContextExplainer:
    """An explainer from a torchcam CAM class (``GradCAM``, ``LayerCAM``, ...) on the
    suite's suggested layer (the last 2-D convolution), its map upsampled to the
    input; not applicable (skipped) on models without one."""

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:

        if context.layer_name is None or inputs.dim() != 4:
            raise NotApplicable(f"{getattr(method, '__name__', method)} needs an image model with a 2-D convolution")
        classes = [int(t) for t in torch.as_tensor(target).reshape(-1).expand(inputs.shape[0])]
        make: Any = method  # a torchcam CAM class
        with torch.enable_grad():
            cam = make(model, target_layer=context.layer_name, input_shape=tuple(inputs.shape[1:]))
            try:  # not a context manager before 0.4.0: its hooks removed as every release can
                scores = model(inputs)
                maps = cam(classes, scores, normalized=False)
            finally:
                cam.remove_hooks()
        return upsampled((maps[0] if isinstance(maps, list | tuple) else maps).unsqueeze(1), inputs)

    explain.__name__ = f"torchcam_{getattr(method, '__name__', 'method')}"
    return explain


def _classes(target: int | torch.Tensor | None, n: int) -> list[int]:
    """One output index per sample (0 for a model with one output)."""

    if target is None:
        return [0] * n
    return [int(t) for t in torch.as_tensor(target).reshape(-1).expand(n)]


def shap_method(explainer: Callable[..., object], **kwargs: object) -> ContextExplainer:
    """An explainer from a shap explainer class built on a PyTorch model and a
    background (``shap.GradientExplainer``, ``shap.DeepExplainer``): made on the
    model with the suite's background sample, each sample's map that of its target
    output (numpy, converted by the plugin); ``kwargs`` go to ``shap_values``."""

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> object:

        background = context.background
        if background is None:
            raise NotApplicable("shap needs a background sample; this suite offers none")
        make: Any = explainer  # a shap explainer class
        values = np.asarray(make(model, background).shap_values(inputs, **kwargs))
        if values.ndim == inputs.dim() + 1:  # one map per model output, outputs last
            values = values[np.arange(inputs.shape[0]), ..., _classes(target, inputs.shape[0])]
        return values

    explain.__name__ = f"shap_{getattr(explainer, '__name__', 'explainer')}"
    return explain


def grad_cam_method(cam: Callable[..., object], **kwargs: object) -> ContextExplainer:
    """An explainer from a pytorch-grad-cam class (``pytorch_grad_cam.GradCAM``,
    ``GradCAMPlusPlus``, ``ScoreCAM``, ...) on the suite's suggested layer (the last
    2-D convolution), one ``ClassifierOutputTarget`` per sample, its hooks released
    after the call (a context manager); the map (resized by the library to the
    image) repeated over the input channels.  Not applicable (skipped) on models
    without a 2-D convolution; ``kwargs`` go to the CAM class."""

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

        if context.layer is None or inputs.dim() != 4:
            raise NotApplicable(f"{getattr(cam, '__name__', cam)} needs an image model with a 2-D convolution")
        make: Any = cam  # a pytorch-grad-cam class
        targets = [ClassifierOutputTarget(c) for c in _classes(target, inputs.shape[0])]
        with torch.enable_grad(), make(model=model, target_layers=[context.layer], **kwargs) as method:
            maps = method(input_tensor=inputs, targets=targets)
        return torch.as_tensor(maps, device=inputs.device).unsqueeze(1).expand_as(inputs).contiguous()

    explain.__name__ = f"grad_cam_{getattr(cam, '__name__', 'method')}"
    return explain


def quantus_method(explain_func: Callable[..., object], **kwargs: object) -> ContextExplainer:
    """An explainer from a Quantus ``explain_func`` (``quantus.explain``, with
    ``method=`` among ``kwargs``, or your own of the same signature): called with
    the model, the inputs and one target per sample as numpy.  Quantus sums a map
    over axis 1 by default (an image's colour channels; on audio, the very
    channels a suite judges): the adapter asks for the full map (``reduce_axes=()``)
    unless ``kwargs`` say otherwise; a map whose channels were reduced anyway (one
    channel, or none) is repeated over the channels."""
    options = {"reduce_axes": (), **kwargs}

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> object:

        targets = np.asarray(_classes(target, inputs.shape[0]))
        out = np.asarray(
            explain_func(
                model=model, inputs=inputs.detach().cpu().numpy(), targets=targets, device=str(inputs.device), **options
            )
        )
        shape = tuple(inputs.shape)
        if out.ndim == inputs.dim() - 1 and out.shape[1:] == shape[2:]:  # the channel axis dropped
            out = out[:, None]
        if out.ndim == inputs.dim() and out.shape[1] == 1 and out.shape[2:] == shape[2:]:  # channels summed
            out = np.repeat(out, shape[1], axis=1)
        return out

    explain.__name__ = f"quantus_{kwargs.get('method', getattr(explain_func, '__name__', 'explain'))}"
    return explain
