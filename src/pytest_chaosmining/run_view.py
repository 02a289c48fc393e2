"""What a suite (and a report figure drawn from models) may use of the run:
:class:`RunView`, the session as the suites see it (the run's session satisfies
it; neither the suites nor the reports import the session).

Five faces: the judge (verdicts, bars, baseline), the plan (settings, tier,
selected cases), the explainers judged, the runtime (device, model cache,
models in memory, timers) and the results reused; a suite's whole reach into
the run is written down here."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.metrics.cost import Cost
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.settings import Settings
    from pytest_chaosmining.timing import AttributionTimer
    from pytest_chaosmining.verdict.judge import Judge

T = TypeVar("T")
C = TypeVar("C")

#: a training's progress callback: (epoch, epochs, loss, seconds)
Progress = Callable[[int, int, float, float], None]

#: ``remembered(key, compute)``: ``compute()``, or the result kept under ``key`` from an earlier
#: run (the run's :meth:`ResultStore.reused`, handed to code that does not see the run)
Remembered = Callable[[dict[str, object], Callable[[], T]], T]


class ResultStore(Protocol):
    """Where built-in and reference results are reused (the run's result reuse)."""

    @property
    def reuses_builtin_results(self) -> bool: ...

    @property
    def fresh_timings(self) -> bool: ...

    def evaluated(
        self,
        suite: str,
        parts: dict[str, object],
        explainer: Explainer,
        compute: Callable[[], T],
        types: tuple[type, ...] = (),
    ) -> T: ...

    def reused(
        self, suite: str, key: dict[str, object], compute: Callable[[], T], types: tuple[type, ...] = ()
    ) -> T: ...


class Plan(Protocol):
    """What the run covers (the run's plan)."""

    @property
    def settings(self) -> Settings: ...

    @property
    def tier(self) -> str: ...

    @property
    def data_dir(self) -> str | None: ...

    def cases(self, suite: str, cases: Sequence[C]) -> list[C]:
        """Those of ``cases`` with a selected test."""
        ...

    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode."""
        ...


class Explainers(Protocol):
    """The explainers the run judges, by name, and which of them run where."""

    def __getitem__(self, name: str) -> Explainer: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def get(self, name: str) -> Explainer | None: ...

    @property
    def registered(self) -> dict[str, Explainer]: ...

    def in_suite(self, suite: str) -> list[str]:
        """The names of those the suite runs."""
        ...

    def in_case(self, suite: str, case_id: str) -> list[str]:
        """The names of those with a selected test on the suite's case."""
        ...


class Runtime(Protocol):
    """Where the work runs and is kept (the run's runtime)."""

    @property
    def device(self) -> torch.device: ...

    @property
    def ensemble(self) -> bool: ...

    @property
    def cache(self) -> ModelCache: ...

    def memo(self, key: Hashable, load: Callable[[], T]) -> T:
        """``load()`` kept in memory under ``key`` (the last few models)."""
        ...

    def progress(self, label: str) -> Progress | None:
        """A training's progress callback printing lines under ``label`` (None under ``-q``)."""
        ...

    def timer(
        self,
        benchmark: BenchmarkFixture | None,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        recheck: Callable[[Cost], bool] | None = None,
    ) -> AttributionTimer:
        """Times the test's attribution calls (``recheck``: whether a cost would fail the
        baseline's gate, so that a first call that would is measured again)."""
        ...


class RunView(Protocol):
    """The run as a suite sees it: five faces."""

    @property
    def judge(self) -> Judge: ...

    @property
    def plan(self) -> Plan: ...

    @property
    def explainers(self) -> Explainers: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def results(self) -> ResultStore: ...
