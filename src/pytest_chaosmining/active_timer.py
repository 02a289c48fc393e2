"""The test's active attribution timer (:class:`~pytest_chaosmining.timing.AttributionTimer`),
as a context variable: light, so that the result reuse can tell the timer that a result of
an earlier run stood in for the test's work without importing the timing's torch."""

from __future__ import annotations

import contextvars
from typing import Protocol


class Replayable(Protocol):
    """What a timer is told of a result reused from an earlier run."""

    replayed: bool


#: the timer of the test now running its attribution calls (None outside one)
ACTIVE: contextvars.ContextVar[Replayable | None] = contextvars.ContextVar("chaosmining_timer", default=None)


def note_replayed() -> None:
    """Tell the test's active timer (if any) that a result reused from an earlier run
    stands in for its work: its costs are replayed, not measured."""
    timer = ACTIVE.get()
    if timer is not None:
        timer.replayed = True
