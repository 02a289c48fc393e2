"""Time and peak memory of one call.

On CUDA the memory is the growth of ``torch.cuda.max_memory_allocated`` over
the call.  On CPU, torch keeps no allocation statistics, so it is the peak
growth of the process's resident set, sampled every millisecond by a thread:
an approximation.  So that freed tensor buffers leave the resident set (and
new ones enter it) instead of being recycled inside the heap, glibc's mmap
threshold is fixed at 64 KiB for the process the first time a CPU call is
measured.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

T = TypeVar("T")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Cost:
    """Wall time in milliseconds and peak memory growth in MiB."""

    time_ms: float
    peak_mem_mb: float


_MMAP_THRESHOLD_SET = False


def _track_buffers_in_rss() -> None:
    """Make glibc serve allocations >= 64 KiB with mmap (returned on free)."""
    global _MMAP_THRESHOLD_SET
    if _MMAP_THRESHOLD_SET:
        return
    _MMAP_THRESHOLD_SET = True
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 * 1024)  # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass  # not glibc: the sampled RSS may under-read


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except OSError:
        return 0


class _RssSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.base = _rss_bytes()
        self.peak = self.base
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.001):
            self.peak = max(self.peak, _rss_bytes())

    def stop(self) -> float:
        self._halt.set()
        self.join()
        self.peak = max(self.peak, _rss_bytes())
        return (self.peak - self.base) / 2**20


def measure(fn: Callable[[], T], device: Any) -> tuple[T, Cost]:
    """Call ``fn`` once and return its result with its :class:`Cost`."""
    import torch

    if getattr(device, "type", str(device)) == "cuda":
        torch.cuda.synchronize(device)
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        start = time.perf_counter()
        result = fn()
        torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - start
        peak = (torch.cuda.max_memory_allocated(device) - base) / 2**20
        return result, Cost(elapsed * 1000, peak)
    _track_buffers_in_rss()
    sampler = _RssSampler()
    sampler.start()
    start = time.perf_counter()
    try:
        result = fn()
    finally:
        elapsed = time.perf_counter() - start
        peak = sampler.stop()
    return result, Cost(elapsed * 1000, peak)
