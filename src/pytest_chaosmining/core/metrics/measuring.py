"""Measuring the cost of one call on a device (torch and psutil at the top: loaded on
first use).

Memory is the peak growth over the call:

- on CUDA, of ``torch.cuda.max_memory_allocated`` (the caching allocator's own
  statistics: every tensor byte, exact);
- on CPU, of the process's resident set.  On Linux the kernel's high-water mark
  (``VmHWM``, reset through ``/proc/self/clear_refs`` when the call starts) gives
  the exact peak; elsewhere, and where that file cannot be written, the resident
  set as psutil reads it, sampled every millisecond by a thread, which can miss a
  buffer that lives between two samples (a lower bound).  It counts every page
  the process touches (tensors, numpy arrays, Python objects).  On glibc, memory
  freed before the call is handed back to the system first (``malloc_trim``), so that the call's allocations show as
  growth instead of being served from already resident free memory; elsewhere
  the reading is a lower bound.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

import psutil
import torch

from pytest_chaosmining.core.metrics.cost import Cost, clocked_cpu, is_cuda

T = TypeVar("T")

#: how often the CPU sampler reads the resident set, in seconds
SAMPLE_PERIOD_S = 0.001


def _trim_heap() -> None:
    """Return the C heap's free memory to the system (glibc only; else nothing)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reset_high_water() -> bool:
    """Reset the kernel's peak resident set of this process (Linux); whether it could
    and the mark can be read back."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return _high_water() > 0


def _high_water() -> int:
    """The kernel's peak resident set of this process in bytes since the last reset (0 if unreadable)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def synchronised(fn: Callable[[], T], device: torch.device | str) -> Callable[[], T]:
    """``fn``, returning only once the device's queued work is done (CUDA; else ``fn``)."""
    if not is_cuda(device):
        return fn

    def call() -> T:
        out = fn()
        torch.cuda.synchronize(device)
        return out

    return call


class PeakMemory:
    """Context manager measuring the peak memory growth inside it on ``device``
    (see the module docstring); :attr:`mb` after the block."""

    def __init__(self, device: torch.device | str):
        self.cuda = is_cuda(device)
        self.device = device
        self.mb = 0.0

    def __enter__(self) -> PeakMemory:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            self._base = torch.cuda.memory_allocated(self.device)
            torch.cuda.reset_peak_memory_stats(self.device)
            return self
        _trim_heap()
        self._process = psutil.Process()
        self._base = self._peak = self._process.memory_info().rss
        self._thread: threading.Thread | None = None  # no sampler where the kernel keeps the peak
        if not _reset_high_water():
            self._halt = threading.Event()
            self._thread = threading.Thread(target=self._sample, daemon=True, name="chaosmining-rss")
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._halt.wait(SAMPLE_PERIOD_S):
            self._peak = max(self._peak, self._process.memory_info().rss)

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            self.mb = (torch.cuda.max_memory_allocated(self.device) - self._base) / 2**20
            return
        if self._thread is None:
            self._peak = max(self._peak, _high_water())
        else:
            self._halt.set()
            self._thread.join()
        self._peak = max(self._peak, self._process.memory_info().rss)
        self.mb = max(0, self._peak - self._base) / 2**20


def warm_up(device: torch.device | str) -> None:
    """Pay a process's one-time start-up on ``device`` before anything is timed: a
    small convolutional network's forward and backward passes, so that the first
    measured call does not carry the autograd engine's threads, the kernels' first
    dispatch or, on CUDA, the context, cuBLAS and cuDNN handles (measured on an H100:
    2.3 s in the first explainer call of a worker against 72 ms after)."""
    # the global generators are left as they were: the layers' initialisation draws from them
    with torch.random.fork_rng(devices=[device] if is_cuda(device) else []):
        torch.manual_seed(0)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3)
        ).to(device)
        inputs = torch.rand(8, 1, 8, 8).to(device).requires_grad_(True)
        for _ in range(3):
            net(inputs).sum().backward()
    synchronised(lambda: None, device)()


def measure(fn: Callable[[], T], device: torch.device | str) -> tuple[T, Cost]:
    """Call ``fn`` once and return its result with its :class:`Cost`."""
    with PeakMemory(device) as memory:
        result, elapsed_ms, cpu_ms = clocked_cpu(synchronised(fn, device))
    return result, Cost(elapsed_ms, memory.mb, cpu_ms)
