"""Registration: the built-ins, entry points and the ``pytest_chaosmining_explainers``
hook merged, and the selection of a run's explainers."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.explainers.builtins import CONTROL_NAME, builtin_explainers
from pytest_chaosmining.explainers.captum_methods import captum_class, is_complete, is_stochastic
from pytest_chaosmining.explainers.context import AttributedShape
from pytest_chaosmining.explainers.contract import Explainer

ENTRY_POINT_GROUP = "pytest_chaosmining.explainers"


def as_explainer(name: str, obj: Any, source: str) -> Explainer:
    """Normalise a registered object into an :class:`Explainer`."""
    if isinstance(obj, Explainer):
        return dataclasses.replace(obj, name=name, source=source)  # the caller's object stays as it was

    if captum_class(obj) is not None:
        return Explainer(name, obj, source=source, completeness=is_complete(obj), stochastic=is_stochastic(obj))
    if callable(obj):
        return Explainer(name, obj, source=source)
    return Explainer(name, _not_an_explainer(name, obj), source=source)


def _not_an_explainer(name: str, obj: Any) -> Callable[..., Any]:
    def fail(model: Any, inputs: Any, target: Any) -> Any:
        raise TypeError(f"registered object {obj!r} is neither a captum Attribution class nor a callable")

    return fail


def _failed_load(error: BaseException) -> Callable[..., Any]:
    def fail(model: Any, inputs: Any, target: Any) -> Any:
        raise RuntimeError(f"could not load entry point: {type(error).__name__}: {error}")

    return fail


def collect_explainers(hook_results: list[dict[str, Any]]) -> dict[str, Explainer]:
    """Merge built-ins, entry-point explainers and hook results (later wins, with a warning)."""
    registry = builtin_explainers()

    def add(name: str, obj: Any, source: str) -> None:
        if name in registry:
            warnings.warn(
                f"chaosmining: explainer {name!r} from {source} replaces the one from {registry[name].source}",
                ChaosminingWarning,
                stacklevel=2,
            )
        registry[name] = as_explainer(name, obj, source)

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken package fails its own tests, not the session
            obj = _failed_load(exc)
        add(ep.name, obj, f"entry point {ep.value}")
    for result in hook_results:
        if not isinstance(result, dict):
            raise TypeError(f"pytest_chaosmining_explainers must return a dict, got {type(result).__name__}")
        for name, obj in result.items():
            add(str(name), obj, "pytest_chaosmining_explainers hook")
    return registry


#: the name that selects the explainers a user registered (and the control): ``--chaosmining-explainers own``
OWN = "own"


def select(
    registry: dict[str, Explainer],
    names: list[str] | None,
    suites: Mapping[str, Sequence[AttributedShape]] | None = None,
) -> dict[str, Explainer]:
    """Keep only ``names`` (when None: those ``in_default_run``, less the
    built-ins that apply in none of ``suites``: suite name → the shapes it
    attributes); :data:`OWN` among them stands for every explainer registered by
    the hook or an entry point (not a built-in) and the control.  Unknown names
    raise ``ValueError`` listing the known ones, :data:`OWN` with no explainer of the
    user's ``ValueError``, and a named or registered explainer that applies in none
    of ``suites`` (when given) ``ValueError``."""
    if names and OWN in names:
        own = [n for n, e in registry.items() if e.source != "builtin"]
        if not own:
            raise ValueError(
                f"{OWN!r}: no explainer of yours is registered (a conftest's pytest_chaosmining_explainers hook "
                "or an entry point registers them); registered: built-ins only"
            )
        names = list(dict.fromkeys([*own, CONTROL_NAME, *(n for n in names if n != OWN)]))
    if not names:
        chosen = {
            n: e
            for n, e in registry.items()
            if e.in_default_run and not (e.source == "builtin" and suites is not None and applies_nowhere(e, suites))
        }
    else:
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise ValueError(f"unknown explainer(s) {unknown}; registered: {sorted(registry)}")
        chosen = {n: registry[n] for n in names}
    if suites is not None:
        nowhere = [n for n, e in chosen.items() if applies_nowhere(e, suites)]
        if nowhere:
            raise ValueError(
                f"explainer(s) {nowhere} apply in none of the selected suites {list(suites)} "
                f"(declared: {[chosen[n].applies_to for n in nowhere]})"
            )
    return chosen


def applies_nowhere(explainer: Explainer, suites: Mapping[str, Sequence[AttributedShape]]) -> bool:
    """Whether ``explainer`` declares an applicability none of ``suites`` (name → shapes) attributes."""
    return explainer.applies_to is not None and not explainer.applies_to.applies_in(
        shape for shapes in suites.values() for shape in shapes
    )
