"""The models a process keeps in memory: the last few used, loaded again from the
disk cache when needed after that."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")

#: models kept in memory per process (tests of one model run together; older ones reload from disk)
MODELS_IN_MEMORY = 8


class ModelMemo:
    """``memo(key, load)``: ``load()`` once per ``key`` while it stays among the last
    :data:`MODELS_IN_MEMORY` keys used."""

    def __init__(self, size: int = MODELS_IN_MEMORY):
        self.size = size
        self._kept: OrderedDict[Hashable, object] = OrderedDict()

    def __call__(self, key: Hashable, load: Callable[[], T]) -> T:
        if key in self._kept:
            self._kept.move_to_end(key)
        else:
            self._kept[key] = load()
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return self._kept[key]  # type: ignore[return-value]
