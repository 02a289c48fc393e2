"""A faster end for the process that ran the suites.

At interpreter shutdown Python collects cyclic garbage over every object still
alive; with torch, captum and a run's models loaded that pass costs about a
second per process (each xdist worker, then the controller that waits for them).
Freezing the heap from an ``atexit`` handler moves every live object out of the
collector's reach first: memory is returned to the system by the exit anyway.
The handler runs only when the interpreter exits (after every other ``atexit``
handler registered later), so a process that calls ``pytest.main`` and goes on
keeps its collector as it was.
"""

from __future__ import annotations

import atexit
import gc


def freeze_heap_at_exit() -> None:
    """Register :func:`gc.freeze` to run when the interpreter exits (once per process)."""
    atexit.unregister(gc.freeze)  # a second run in one process registers it once
    atexit.register(gc.freeze)
