"""A module imported on first use: how a light module (a suite's declarations, read by the
registry, the tools and the parametrisation) names its heavy half, which imports torch at
its top, without loading it.  Declare it as

    if TYPE_CHECKING:
        from pytest_chaosmining.suites.cost import evaluation
    else:
        evaluation = lazy_module("pytest_chaosmining.suites.cost.evaluation")

so that type checkers and the architecture tests see the import.  Nothing is put in
``sys.modules`` before the first use (a tool that walks ``sys.modules`` reading attributes
loads nothing and sees no half-made module), and the module, once imported, is the one
every ``import`` statement gets."""

from __future__ import annotations

import importlib
from types import ModuleType


class _OnFirstUse(ModuleType):
    """Stands for module ``name``: the first attribute read imports it, every read is its."""

    def __init__(self, name: str) -> None:
        super().__init__(name, f"module {name}, imported on first use")

    def __getattr__(self, attribute: str) -> object:
        return getattr(importlib.import_module(self.__name__), attribute)


def lazy_module(name: str) -> ModuleType:
    """Module ``name``, imported (with its parent packages) when an attribute is first read."""
    return _OnFirstUse(name)
