"""The papers' formulas as explainers: :func:`paper` makes one, with its settings in its
name (``paper:IG(rule=riemann_trapezoid, steps=50)``), to register or to declare as what
an explainer implements (``Explainer(..., same_as=paper("GradCAM++"))``).  Each computes
on a float64 copy of the model; its map has the inputs' shape and dtype (a layer map
summed over channels, brought to the input's size bilinearly and repeated over its
channels, as the plugin's layer methods are)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.contract import Explainer
from pytest_chaosmining.explainers.upsampling import upsampled
from pytest_chaosmining.references import cam, gradients, perturbation
from pytest_chaosmining.references.exact import Target, exact_copy

#: the prefix of a reference formula's name
PREFIX = "paper:"

#: a formula's computation on the float64 model and inputs
Computed = Callable[[torch.nn.Module, torch.Tensor, Target, AttributionContext], torch.Tensor]


def _saliency(absolute: bool = True) -> Computed:
    return lambda model, x, target, _context: gradients.saliency(model, x, target, absolute)


def _input_x_gradient() -> Computed:
    return lambda model, x, target, _context: gradients.input_x_gradient(model, x, target)


def _integrated_gradients(steps: int = 50, rule: str = "riemann_right") -> Computed:
    gradients.quadrature(rule, steps)  # a bad setting fails where it is made

    def computed(model: torch.nn.Module, x: torch.Tensor, target: Target, context: AttributionContext) -> torch.Tensor:
        return gradients.integrated_gradients(model, x, target, context.baseline, steps, rule)

    return computed


def _smoothgrad(
    samples: int = 50, stdev: float | None = None, noise_level: float = 0.15, seed: int | None = None
) -> Computed:
    return lambda model, x, target, _context: gradients.smoothgrad(model, x, target, samples, stdev, noise_level, seed)


def _occlusion(window: tuple[int, ...] | None = None, strides: tuple[int, ...] | None = None) -> Computed:
    def computed(model: torch.nn.Module, x: torch.Tensor, target: Target, context: AttributionContext) -> torch.Tensor:
        shape = window or context.window
        if shape is None:
            raise ValueError("occlusion needs a window: the suite offers none, give window=")
        return perturbation.occlusion(model, x, target, tuple(shape), strides)

    return computed


def _feature_ablation() -> Computed:
    return lambda model, x, target, context: perturbation.feature_ablation(model, x, target, context.feature_mask)


def _cam(rule: cam.LayerRule) -> Callable[..., Computed]:
    def made(normalised: bool = False, **rule_settings: float) -> Computed:
        rule(torch.ones(1, 1, 1, 1), torch.ones(1, 1, 1, 1), **rule_settings)  # a bad setting fails where it is made

        def computed(
            model: torch.nn.Module, x: torch.Tensor, target: Target, context: AttributionContext
        ) -> torch.Tensor:
            a, g = cam.activations_and_gradients(model, x, target, context.layer_name)
            layer_map = rule(a, g, **rule_settings)
            return upsampled((cam.min_max(layer_map) if normalised else layer_map).unsqueeze(1), x)

        return computed

    return made


#: each formula's maker (its settings as keyword arguments) and where it is defined
FORMULAS: dict[str, tuple[Callable[..., Computed], str]] = {
    "saliency": (_saliency, "Simonyan et al. 2014, arXiv:1312.6034, §3.1"),
    "IxG": (_input_x_gradient, "Shrikumar et al. 2016, arXiv:1605.01713"),
    "IG": (_integrated_gradients, "Sundararajan et al. 2017, arXiv:1703.01365, Eq. 3"),
    "SmoothGrad": (_smoothgrad, "Smilkov et al. 2017, arXiv:1706.03825, Eq. 3"),
    "occlusion": (_occlusion, "Zeiler & Fergus 2014, arXiv:1311.2901, §4.2"),
    "ablation": (_feature_ablation, "feature ablation: the drop when a feature is set to the baseline"),
    **{name: (_cam(rule), cam.CITATIONS[name]) for name, rule in cam.CAMS.items()},
}


def named(name: str) -> Explainer | None:
    """The formula a ``same_as`` string names with its default settings (``paper:GradCAM++``;
    None: not a reference's name)."""
    if not name.startswith(PREFIX):
        return None
    return paper(name[len(PREFIX) :])


def paper(name: str, **settings: object) -> Explainer:
    """The formula ``name`` (:data:`FORMULAS`) with ``settings`` as an explainer, not in
    the default run (register it or name it in ``same_as``)."""
    if name not in FORMULAS:
        raise ValueError(f"no reference formula {name!r}: one of {', '.join(FORMULAS)}")
    made, _cited = FORMULAS[name]
    computed = made(**settings)
    shown = ", ".join(f"{k}={v}" for k, v in sorted(settings.items()))
    title = f"{PREFIX}{name}" + (f"({shown})" if shown else "")

    def explain(
        model: torch.nn.Module, inputs: torch.Tensor, target: Target, context: AttributionContext
    ) -> torch.Tensor:
        exact, x = exact_copy(model, inputs)
        return computed(exact, x, target, context).to(inputs.dtype)

    explain.__name__ = title
    return Explainer(title, explain, source="reference", in_default_run=False)
