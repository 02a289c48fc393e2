"""A case's names written as templates of its attributes: ``stem = formatted("{canvas}px-{model_id}")``."""

from __future__ import annotations

from typing import overload


class _Attributes:
    """``case``'s attributes as the mapping ``str.format_map`` reads (``{base.seed}`` works too)."""

    def __init__(self, case: object):
        self.case = case

    def __getitem__(self, name: str) -> object:
        return getattr(self.case, name)


class formatted:  # noqa: N801 (used like ``property``)
    """A read-only attribute of a case formatted from its other attributes, as an f-string
    of them would be (format specs included): ``size_id = formatted("n{n_samples}-e{epochs}")``."""

    def __init__(self, template: str):
        self.template = template

    @overload
    def __get__(self, case: None, owner: type) -> formatted: ...

    @overload
    def __get__(self, case: object, owner: type | None = None) -> str: ...

    def __get__(self, case: object, owner: type | None = None) -> formatted | str:
        if case is None:
            return self
        return self.template.format_map(_Attributes(case))
