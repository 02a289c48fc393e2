"""What a suite (and a report figure drawn from models) may use of the run:
:class:`RunView`, the session as the suites see it (the run's session satisfies
it; neither the suites nor the reports import the session).

Each member names the collaborator it comes from, so that a suite's reach into
the run is written down in one place."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.core.verdicts.thresholds import Thresholds
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.judge import Judge
    from pytest_chaosmining.settings import Settings
    from pytest_chaosmining.timing import AttributionTimer

T = TypeVar("T")
C = TypeVar("C")

#: a training's progress callback: (epoch, epochs, loss, seconds)
Progress = Callable[[int, int, float, float], None]


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


class Roster(Protocol):
    """The registered explainers and those each suite runs (the run's roster)."""

    @property
    def registered(self) -> dict[str, Explainer]: ...

    def explainers_in(self, suite: str) -> list[str]: ...


class Selection(Protocol):
    """The cases and explainers whose tests the run selected."""

    def cases(self, suite: str, cases: Sequence[C]) -> list[C]: ...

    def explainers(self, suite: str, case_id: str) -> list[str]: ...


class Placement(Protocol):
    """Where models train: the device and whether same-shape models train as one ensemble."""

    @property
    def ensemble(self) -> bool: ...


class RunView(Protocol):
    """The run as a suite sees it."""

    @property
    def settings(self) -> Settings: ...

    @property
    def tier(self) -> str: ...

    @property
    def data_dir(self) -> str | None: ...

    @property
    def device(self) -> torch.device: ...

    @property
    def explainers(self) -> dict[str, Explainer]: ...

    @property
    def thresholds(self) -> Thresholds: ...

    @property
    def judge(self) -> Judge: ...

    @property
    def cache(self) -> ModelCache: ...

    @property
    def reuse(self) -> ResultStore: ...

    @property
    def roster(self) -> Roster: ...

    @property
    def selection(self) -> Selection: ...

    @property
    def placement(self) -> Placement: ...

    def memo(self, key: Hashable, load: Callable[[], T]) -> T:
        """``load()`` kept in memory under ``key`` (the last few models)."""
        ...

    def progress(self, label: str) -> Progress | None:
        """A training's progress callback printing lines under ``label`` (None under ``-q``)."""
        ...

    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode."""
        ...

    def timer(
        self,
        benchmark: BenchmarkFixture | None,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        record: Callable[[str, float], Record] | None = None,
    ) -> AttributionTimer:
        """Times the test's attribution calls."""
        ...
