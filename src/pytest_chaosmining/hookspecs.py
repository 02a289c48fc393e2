"""Hooks that conftest files and plugins may implement."""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_chaosmining_explainers(config: Any) -> dict[str, Any]:
    """Return ``{name: explainer}`` to register explainers for the suites.

    An explainer is a captum ``Attribution`` class, a callable
    ``(model, inputs, target) -> Tensor`` of the inputs' shape, or a
    :class:`pytest_chaosmining.explainers.Explainer`.  Every implementation is
    called once per session; results are merged.
    """
