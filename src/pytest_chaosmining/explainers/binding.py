"""Calling an explainer with what the suite knows, by parameter name (torch and captum at
the top: loaded with the guarded call, :mod:`.guarded_call`).

A captum ``Attribution`` class is constructed with the model (and, for layer
methods, ``layer=`` the suggested layer; their maps are upsampled to the
input) and its ``attribute`` receives, where its signature names them:

- ``feature_mask``, ``internal_batch_size``, ``perturbations_per_eval``: the
  suite's grid and batch sizes (they define the evaluation: they win over the
  explainer's own keyword arguments);
- ``baselines`` where it is required: a background sample of the training data
  for methods that take a distribution of baselines (``GradientShap``,
  ``DeepLiftShap``), the zero baseline otherwise;
- ``sliding_window_shapes`` and ``strides`` where required: one feature's window;
- ``n_samples`` for sampling surrogates (``KernelShap``, ``Lime``) when the
  explainer sets none: twice the features plus one, at least 25.

A callable receives ``context=`` when it names a ``context`` parameter.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from captum.attr import DeepLiftShap, GradientShap, LimeBase

from pytest_chaosmining.explainers.captum_methods import captum_class
from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.contract import MissingInput
from pytest_chaosmining.explainers.upsampling import upsampled

if TYPE_CHECKING:
    from pytest_chaosmining.explainers.contract import Explainer


def _required(params: dict[str, inspect.Parameter]) -> set[str]:
    return {
        name
        for name, p in params.items()
        if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }


def _takes_distribution(method: type) -> bool:
    return issubclass(method, (GradientShap, DeepLiftShap))


def _samples_surrogate(method: type) -> bool:
    return issubclass(method, LimeBase)


def _name(method: object) -> str:
    found = captum_class(method)
    return found.__name__ if found is not None else getattr(method, "__name__", repr(method))


def captum_kwargs(explainer: Explainer, context: AttributionContext) -> dict[str, object]:
    """The keyword arguments ``explainer``'s captum ``attribute`` gets in ``context``."""
    method = captum_class(explainer.method)
    assert method is not None
    params = dict(inspect.signature(getattr(method, "attribute")).parameters)
    required = _required(params) - {"inputs", "self"}
    own = dict(explainer.attribute_kwargs)
    suite: dict[str, object] = {"feature_mask": context.feature_mask, **context.settings}
    kwargs = {**own, **{k: v for k, v in suite.items() if k in params and v is not None}}
    if "baselines" in required and "baselines" not in own:
        if _takes_distribution(method):
            if context.background is None:
                raise MissingInput(f"{method.__name__} needs a background sample; suite {context.suite!r} offers none")
            kwargs["baselines"] = context.background
        else:
            kwargs["baselines"] = context.baseline
    if "sliding_window_shapes" in params and "sliding_window_shapes" not in own:
        if context.window is None:
            raise MissingInput(f"{method.__name__} needs a sliding window; suite {context.suite!r} offers none")
        kwargs["sliding_window_shapes"] = context.window
        if "strides" in params and "strides" not in own:
            kwargs["strides"] = context.window
    if "n_samples" in params and "n_samples" not in own and _samples_surrogate(method):
        kwargs["n_samples"] = max(25, 2 * context.n_features + 1)
    missing = required - set(kwargs) - {"target"}
    if missing:
        raise MissingInput(f"{method.__name__}.attribute requires {sorted(missing)}, which the suite does not offer")
    return kwargs


def call_explainer(
    explainer: Explainer,
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: int | torch.Tensor | None,
    context: AttributionContext,
) -> object:
    """Call ``explainer`` on ``model`` and ``inputs`` with what ``context`` offers (see the module)."""
    if explainer.is_captum:
        construct: Callable[..., Any] = explainer.method  # the class, or a partial binding its arguments
        bound = construct.keywords if isinstance(construct, functools.partial) else {}
        is_layer_method = "layer" in inspect.signature(construct).parameters and "layer" not in bound
        if is_layer_method:
            if context.layer is None:
                raise MissingInput(
                    f"{_name(explainer.method)} is a layer method and needs a 2-D convolution layer; the model has none"
                )
            attribution = construct(model, layer=context.layer)
        else:
            attribution = construct(model)
        out = attribution.attribute(inputs, target=target, **captum_kwargs(explainer, context))
        if is_layer_method and not isinstance(out, (tuple, list)):
            return upsampled(out, inputs)
        return out
    call: Callable[..., object] = explainer.method
    if _names_context(call):
        return call(model, inputs, target, context=context, **explainer.attribute_kwargs)
    return call(model, inputs, target, **explainer.attribute_kwargs)


def _names_context(call: Callable[..., object]) -> bool:
    try:
        return "context" in inspect.signature(call).parameters
    except (TypeError, ValueError):  # builtins without a signature
        return False
