"""One-line registration of attribution methods from libraries other than captum.

Each adapter returns an explainer callable ``(model, inputs, target, *, context)``
(:mod:`pytest_chaosmining.binding`) that runs the library's method on the model
it is given and returns a map of the inputs' shape::

    from torchcam.methods import GradCAM
    from zennit.composites import EpsilonPlus
    from pytest_chaosmining.adapters import torchcam_method, zennit_method

    def pytest_chaosmining_explainers(config):
        return {"torchcam-GradCAM": torchcam_method(GradCAM), "LRP-EpsilonPlus": zennit_method(EpsilonPlus)}

The libraries are imported by the caller (install them yourself, or the
``interop`` extra); this module imports neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.attribution_context import AttributionContext

if TYPE_CHECKING:
    import torch

#: an explainer callable that takes the suite's context
ContextExplainer = Callable[["torch.nn.Module", "torch.Tensor", "int | torch.Tensor | None", AttributionContext],
                            "torch.Tensor"]


def _one_hot(output: torch.Tensor, target: int | torch.Tensor | None) -> torch.Tensor:
    """The relevance seed: 1 at each sample's target output, 0 elsewhere."""
    import torch

    seed = torch.zeros_like(output)
    if target is None:
        return torch.ones_like(output)
    index = torch.as_tensor(target, device=output.device).long().reshape(-1, 1)
    return seed.scatter_(1, index.expand(output.shape[0], 1), 1.0)


def zennit_method(composite: Callable[[], object], attributor: Callable[..., object] | None = None) -> ContextExplainer:
    """An explainer from a zennit composite class (``EpsilonPlus``, ``EpsilonGammaBox``
    with its bounds bound by ``functools.partial``, ...) and an attributor class
    (default ``zennit.attribution.Gradient``): LRP-style relevance of each
    sample's target output."""

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None,
                context: AttributionContext) -> torch.Tensor:
        from zennit.attribution import Gradient

        make: Any = attributor or Gradient  # a zennit Attributor class
        with make(model=model, composite=composite()) as attribute:
            _, relevance = attribute(inputs, lambda output: _one_hot(output, target))
        return relevance

    explain.__name__ = f"zennit_{getattr(composite, '__name__', 'composite')}"
    return explain


def torchcam_method(method: Callable[..., object]) -> ContextExplainer:
    """An explainer from a torchcam CAM class (``GradCAM``, ``LayerCAM``, ...) on the
    suite's suggested layer (the last 2-D convolution), its map upsampled to the
    input; not applicable (skipped) on models without one."""

    def explain(model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None,
                context: AttributionContext) -> torch.Tensor:
        import torch

        from pytest_chaosmining.binding import upsampled
        from pytest_chaosmining.explainers import NotApplicable

        if context.layer_name is None or inputs.dim() != 4:
            raise NotApplicable(f"{getattr(method, '__name__', method)} needs an image model with a 2-D convolution")
        classes = [int(t) for t in torch.as_tensor(target).reshape(-1).expand(inputs.shape[0])]
        make: Any = method  # a torchcam CAM class
        with torch.enable_grad(), make(model, target_layer=context.layer_name, input_shape=tuple(inputs.shape[1:])) as cam:
            scores = model(inputs)
            maps = cam(classes, scores, normalized=False)[0]
        return upsampled(maps.unsqueeze(1), inputs)

    explain.__name__ = f"torchcam_{getattr(method, '__name__', 'method')}"
    return explain
