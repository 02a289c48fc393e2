"""Explainers: the contract, the built-ins, the registry and a guarded call.

An explainer is either a captum ``Attribution`` class (constructed with the
model, then ``.attribute(inputs, target=..., **kwargs)``; what it needs from the
suite is passed by parameter name, see :mod:`pytest_chaosmining.explainers.binding`) or any
callable ``(model, inputs, target) -> Tensor`` of the inputs' shape, which may
also take ``context=`` (:class:`~pytest_chaosmining.explainers.context.AttributionContext`).
Wrap either in :class:`Explainer` to pass keyword arguments, to declare where it
applies (:class:`~pytest_chaosmining.explainers.context.Applicability`) or which
exact ground truth it estimates ('gradient', 'ablation' or 'path').

Registration, merged in this order: the built-ins, installed packages through
the ``pytest_chaosmining.explainers`` entry-point group (entry-point name =
explainer name), and ``pytest_chaosmining_explainers(config)`` hooks in
conftest files or plugins.
"""

from typing import TYPE_CHECKING

from pytest_chaosmining.explainers.builtin_settings import IG_STEPS, NOISE_SAMPLES
from pytest_chaosmining.explainers.builtins import (
    BUILTIN_NAMES,
    CONTROL_NAME,
    PAPER_NAMES,
    builtin_explainers,
)
from pytest_chaosmining.explainers.call import CallTimeout, explainer_frames, plain_context, time_limit
from pytest_chaosmining.explainers.contract import (
    DEFAULT_CALL_TIMEOUT_S,
    Explainer,
    ExplainerError,
    ExplainerMethod,
    ExplainerNotApplicable,
    NotApplicable,
)
from pytest_chaosmining.explainers.registry import (
    ENTRY_POINT_GROUP,
    OWN,
    applies_nowhere,
    as_explainer,
    collect_explainers,
    select,
)

__all__ = [
    "BUILTIN_NAMES",
    "CONTROL_NAME",
    "DEFAULT_CALL_TIMEOUT_S",
    "ENTRY_POINT_GROUP",
    "IG_STEPS",
    "NOISE_SAMPLES",
    "OWN",
    "PAPER_NAMES",
    "CallTimeout",
    "Explainer",
    "ExplainerError",
    "ExplainerMethod",
    "ExplainerNotApplicable",
    "NotApplicable",
    "applies_nowhere",
    "as_explainer",
    "attribute",
    "builtin_explainers",
    "collect_explainers",
    "explainer_frames",
    "plain_context",
    "select",
    "time_limit",
]

if TYPE_CHECKING:
    from pytest_chaosmining.explainers.guarded_call import attribute
else:

    def __getattr__(name: str) -> object:
        """``attribute``: the guarded call, imported (torch) on first use."""
        if name == "attribute":
            from pytest_chaosmining.explainers.guarded_call import attribute

            return attribute
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
