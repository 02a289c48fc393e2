"""What kind of captum method an explainer is: the class itself (or one that a
``functools.partial`` binds), whether it promises completeness, whether its maps
are random samples."""

from __future__ import annotations

import functools
import inspect


def captum_class(method: object) -> type | None:
    """The captum ``Attribution`` class ``method`` is (or a ``functools.partial`` binds), else None."""
    found = method.func if isinstance(method, functools.partial) else method
    return found if inspect.isclass(found) and hasattr(found, "attribute") else None


#: captum methods whose attributions sum to f(x) − f(baseline) (with ``multiply_by_inputs``, their default)
COMPLETE_METHODS = frozenset({"IntegratedGradients", "DeepLift"})


def is_complete(method: object) -> bool:
    """Whether ``method`` is a captum class that promises completeness, as bound
    (``partial(IntegratedGradients, multiply_by_inputs=False)`` does not)."""
    found = captum_class(method)
    keywords = method.keywords if isinstance(method, functools.partial) else {}
    return found is not None and found.__name__ in COMPLETE_METHODS and keywords.get("multiply_by_inputs", True)


#: captum methods whose maps are samples (random baselines, perturbations or noise), by name as for
#: :data:`COMPLETE_METHODS`: a subclass may be exact (``ShapleyValues`` enumerates what
#: ``ShapleyValueSampling``, its base, samples)
STOCHASTIC_METHODS = frozenset(
    {"GradientShap", "Lime", "LimeBase", "KernelShap", "ShapleyValueSampling", "FeaturePermutation", "NoiseTunnel"}
)


def is_stochastic(method: object) -> bool:
    """Whether ``method`` is a captum class whose maps are random samples (GradientShap, LIME, KernelSHAP, ...)."""
    found = captum_class(method)
    return found is not None and found.__name__ in STOCHASTIC_METHODS
