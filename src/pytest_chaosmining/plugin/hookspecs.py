"""Hooks that conftest files and plugins may implement."""

from __future__ import annotations

import pluggy
import pytest

hookspec = pluggy.HookspecMarker("pytest")


@hookspec
def pytest_chaosmining_explainers(config: pytest.Config) -> dict[str, object]:
    """Return ``{name: explainer}`` to register explainers for the suites.

    An explainer is a captum ``Attribution`` class, a callable
    ``(model, inputs, target) -> Tensor`` of the inputs' shape, or a
    :class:`pytest_chaosmining.explainers.Explainer`.  Every implementation is
    called once per session; results are merged.
    """
    raise NotImplementedError  # a specification: pytest calls the implementations, never this
