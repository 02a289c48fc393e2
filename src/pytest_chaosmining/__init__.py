"""pytest-chaosmining: conformance tests for feature-attribution methods.

This module is imported by pytest's entry-point machinery; it must stay free of
heavy imports (torch, captum, sympy are imported lazily by the suites).
"""

import pytest

__version__ = "0.1.0"


class ChaosminingWarning(pytest.PytestWarning):
    """The plugin's warnings (a replaced explainer, a corrupt cache entry, an unusable
    shipped model, a report section not written), pytest's kind of a plugin's warning:
    filter them with ``-W ignore::pytest_chaosmining.ChaosminingWarning``, or make
    every plugin's an error with ``-W error::pytest.PytestWarning``."""
