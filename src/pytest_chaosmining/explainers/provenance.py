"""Which installed library an explainer's method comes from, and its release, for the
messages that name what broke (``captum 0.9.0``)."""

from __future__ import annotations

import functools
import importlib.metadata
import inspect

from pytest_chaosmining.explainers.contract import Explainer

#: modules whose objects are wrappers, not the library that explains
_WRAPPERS = {"pytest_chaosmining", "functools", "builtins", "torch", "numpy", "typing"}


def _origin(method: object, seen: set[int]) -> str | None:
    """The top-level module of the first object inside ``method`` (itself, a partial's
    function and arguments, a closure's cells) that is not a wrapper."""
    if id(method) in seen:
        return None
    seen.add(id(method))
    top = (getattr(method, "__module__", None) or type(method).__module__ or "").split(".")[0]
    if top and top not in _WRAPPERS and top != "__main__":
        return top
    inner: list[object] = []
    if isinstance(method, functools.partial):
        inner += [method.func, *method.args, *method.keywords.values()]
    wrapped = getattr(method, "__wrapped__", None)
    if wrapped is not None:
        inner.append(wrapped)
    if inspect.isfunction(method) and method.__closure__:
        inner += [cell.cell_contents for cell in method.__closure__ if _filled(cell)]
    for item in inner:
        if callable(item) and (found := _origin(item, seen)):
            return found
    return None


def _filled(cell: object) -> bool:
    try:
        getattr(cell, "cell_contents")
    except ValueError:  # an empty cell
        return False
    return True


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


def library_of(explainer: Explainer) -> str:
    """The library ``explainer``'s method comes from and its release (``captum 0.9.0``,
    ``grad-cam 1.5.0``); a built-in wraps captum; a method of no installed distribution
    is named by its module (``conftest``)."""
    top = _origin(explainer.method, set()) or ("captum" if explainer.source == "builtin" else None)
    if top is None:
        return str(getattr(explainer.method, "__module__", "") or "its own code")
    for dist in _distributions().get(top, []):
        try:
            return f"{dist} {importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return top
