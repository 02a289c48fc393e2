"""A test's attribution calls, timed through pytest-benchmark's ``benchmark`` fixture.

Every shipped test that runs an explainer asks for ``chaosmining_benchmark`` (the
``benchmark`` fixture, or None where pytest-benchmark is absent or told to skip:
``-p no:benchmark``, ``--benchmark-skip``; the calls are then timed by hand, and
the test still judges) and wraps its work in :class:`AttributionTimer`.  The suites measure their attribution calls
with :func:`timed`: the first one of the test goes through
``benchmark.pedantic`` (one round: attribution calls are too costly to repeat),
with its peak memory, the suite, the case and the explainer in ``extra_info``;
later ones are measured by hand and counted.  Outside a timer (the calibration
tool, direct calls) :func:`timed` is :func:`~pytest_chaosmining.core.metrics.measuring.measure`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TypeVar

from pytest_chaosmining.active_timer import ACTIVE
from pytest_chaosmining.benchmarking import call_through, label, timed_rounds, times_calls
from pytest_chaosmining.core.metrics.cost import Cost, clocked_cpu
from pytest_chaosmining.core.metrics.measuring import PeakMemory, measure, synchronised

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

T = TypeVar("T")

#: more measurements of a call whose first one would fail the baseline's cost gate (one
#: call's CPU time varies by up to 4x in a process that runs other tests between calls:
#: measured on the benign set's same-code records)
RECHECKS = 4
#: pytest-benchmark group of every explainer timing of a suite
GROUP_PREFIX = "chaosmining"


class AttributionTimer:
    """Times one test's attribution calls (see the module docstring).

    ``rounds``: how often pytest-benchmark repeats the first call (after one
    warm-up call when more than one); the cost's time is their median.
    ``recheck``: given the first call's cost, whether it would fail the
    baseline's cost gate; if so the call is measured again (:meth:`_confirmed`).
    ``cost``: the first call's :class:`Cost` (None until a call was measured: a
    built-in's result reused from the cache makes none); ``replayed``: whether a
    result reused from the pack or the derived-results cache stood in for the
    test's work (:func:`~pytest_chaosmining.active_timer.note_replayed`); ``calls`` and ``total_ms``: every call
    measured in the test."""

    def __init__(
        self,
        benchmark: BenchmarkFixture | None,
        device: torch.device,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        recheck: Callable[[Cost], bool] | None = None,
    ):
        self.benchmark = benchmark
        self.recheck = recheck
        self.device = device
        self.rounds = rounds
        self.cost: Cost | None = None
        self.replayed = False
        self.calls = 0
        self.total_ms = 0.0
        self._busy = False
        self.extra_info = label(benchmark, f"{GROUP_PREFIX} {suite}")
        self.extra_info.update(suite=suite, case=case, explainer=explainer, device=str(device))

    def __enter__(self) -> AttributionTimer:
        self._token = ACTIVE.set(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        ACTIVE.reset(self._token)

    def measure(self, fn: Callable[[], T]) -> tuple[T, Cost]:
        """Call ``fn``; the first call through pytest-benchmark, later ones by hand
        (a call made inside a measured one is part of it: called, not measured)."""
        if self._busy:
            return fn(), Cost(0.0, 0.0, 0.0)
        self._busy = True
        try:
            return self._measure(fn)
        finally:
            self._busy = False

    def _measure(self, fn: Callable[[], T]) -> tuple[T, Cost]:
        if self.cost is not None:
            result, cost = measure(fn, self.device)
        else:
            result, cost = self._first(fn)
            if self.recheck is not None and self.recheck(cost):
                cost = self._confirmed(fn, cost)
            self.cost = cost
            self.extra_info.update(peak_mem_mb=cost.peak_mem_mb, cpu_ms=cost.cpu_ms)
        self.calls += 1
        self.total_ms += cost.time_ms
        self.extra_info.update(attribution_calls=self.calls, attribution_total_ms=self.total_ms)
        return result, cost

    def _first(self, fn: Callable[[], T]) -> tuple[T, Cost]:
        benchmark, rounds, call = self.benchmark, self.rounds, synchronised(fn, self.device)
        warmup = rounds > 1
        with PeakMemory(self.device) as memory:
            if not times_calls(benchmark):  # timed by hand
                if warmup:
                    result = call_through(benchmark, call)
                    timings = [clocked_cpu(call)[1:] for _ in range(rounds)]
                else:
                    result, wall, cpu = clocked_cpu(lambda: call_through(benchmark, call))
                    timings = [(wall, cpu)]
                times, cpus = [w for w, _ in timings], [c for _, c in timings]
            else:
                cpus = []

                def counted() -> T:
                    out, _, cpu_ms = clocked_cpu(call)
                    cpus.append(cpu_ms)
                    return out

                result, times = timed_rounds(benchmark, counted, rounds, warmup)
                cpus = cpus[-rounds:]
        return result, Cost(statistics.median(times), memory.mb, statistics.median(cpus))

    def _confirmed(self, fn: Callable[[], T], first: Cost) -> Cost:
        """``first`` with the least time, CPU time and peak memory of it and
        :data:`RECHECKS` more measurements of ``fn``: a cost that would fail the
        baseline's gate is measured again before it does (the first call of a process
        or of an explainer pays one-time work, imports, allocator growth; a busy
        machine, stalls), so only a cost that every round shows fails.  Each round's
        peak memory is its own growth (the heap trimmed before it): a call that needs
        more memory every time shows it every round."""
        costs = [first] + [measure(fn, self.device)[1] for _ in range(RECHECKS)]
        self.extra_info.update(cost_rechecks=RECHECKS)
        return Cost(min(c.time_ms for c in costs), min(c.peak_mem_mb for c in costs), min(c.cpu_ms for c in costs))

    def cost_or(self, earlier: Cost) -> Cost:
        """This test's measured cost, or ``earlier`` (a reused result's) where no call was made."""
        return self.cost if self.cost is not None else earlier

    @property
    def measured(self) -> bool:
        """Whether the test's cost was measured in this run: a call was timed, or no
        result of an earlier run stood in for the work (one computed earlier in this
        process, as RFE's side-by-side selections are, was measured here)."""
        return self.cost is not None or not self.replayed


def timed(fn: Callable[[], T], device: torch.device) -> tuple[T, Cost]:
    """Call ``fn`` and return its result and :class:`Cost`, through the test's
    :class:`AttributionTimer` when one is active."""
    timer = ACTIVE.get()
    if not isinstance(timer, AttributionTimer):
        return measure(fn, device)
    return timer.measure(fn)
