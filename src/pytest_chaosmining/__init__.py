"""pytest-chaosmining: conformance tests for feature-attribution methods.

This module is imported by pytest's entry-point machinery; it must stay free of
heavy imports (torch, captum, sympy are imported lazily by the suites).
"""

__version__ = "0.1.0"
