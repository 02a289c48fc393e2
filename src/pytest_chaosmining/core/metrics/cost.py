"""The cost of one call (wall time, peak memory, CPU time) and clocks; measuring it on a
device is :mod:`.measuring`'s."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


@dataclass(frozen=True)
class Cost:
    """Wall time in milliseconds, peak memory growth in MiB and the process's CPU
    time in milliseconds (what a baseline gates: unlike wall time, it does not grow
    when another job shares the machine)."""

    time_ms: float
    peak_mem_mb: float
    cpu_ms: float = 0.0


def is_cuda(device: torch.device | str) -> bool:
    """Whether ``device`` (a torch device or its name) is a CUDA device."""
    return getattr(device, "type", str(device)) == "cuda"


def clocked(fn: Callable[[], T]) -> tuple[T, float]:
    """Call ``fn``; its result and wall time in milliseconds."""
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000


def clocked_cpu(fn: Callable[[], T]) -> tuple[T, float, float]:
    """Call ``fn``; its result, wall time and the process's CPU time, in milliseconds."""
    cpu = time.process_time()
    result, elapsed_ms = clocked(fn)
    return result, elapsed_ms, (time.process_time() - cpu) * 1000
