"""The run as the suites see it, in four faces besides the judge: what runs
(:class:`RunPlan`), the explainers judged (:class:`JudgedExplainers`), where the
work runs and is kept (:class:`Runtime`), and the results reused
(:class:`~pytest_chaosmining.run.result_reuse.ResultReuse`, as it is).

Each face is a thin view over the session's collaborators: it owns no state of
its own, so the plugin side and the suites see the same run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.run.case_selection import CaseSelection
from pytest_chaosmining.run.model_memo import ModelMemo
from pytest_chaosmining.run.placement import Placement
from pytest_chaosmining.run.progress import ProgressLines
from pytest_chaosmining.run.roster import ExplainerRoster
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining import timing
    from pytest_chaosmining.core.metrics import measuring
    from pytest_chaosmining.core.metrics.cost import Cost
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Progress
else:  # torch: the timing of attribution calls loads with the first timed call
    timing = lazy_module("pytest_chaosmining.timing")
    measuring = lazy_module("pytest_chaosmining.core.metrics.measuring")

#: given how a test makes its cost records, whether a cost would fail the baseline's gate
CostRecheck = Callable[[Callable[[str, float], "Record"]], "Callable[[Cost], bool] | None"]

T = TypeVar("T")
C = TypeVar("C")


class RunPlan:
    """What the run covers: its settings, tier and data, the selected cases, the training modes."""

    def __init__(self, settings: Settings, selection: CaseSelection):
        self.settings = settings
        self._selection = selection

    @property
    def tier(self) -> str:
        """The run's tier name."""
        return self.settings.tier

    @property
    def data_dir(self) -> str | None:
        """``--chaosmining-data`` as a string (None: the embedded data)."""
        return str(self.settings.data_dir) if self.settings.data_dir else None

    def cases(self, suite: str, cases: Sequence[C]) -> list[C]:
        """Those of ``cases`` with a selected test (all of them before collection ends)."""
        return self._selection.cases(suite, cases)

    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode (``--chaosmining-training``; None: standard)."""
        return [
            dataclasses.replace(case, guide=guide)  # type: ignore[type-var]
            for guide in self.settings.guides()
            for case in cases
        ]


class JudgedExplainers(Mapping[str, "Explainer"]):
    """The explainers the run judges, by name (a mapping), and which of them run where."""

    def __init__(self, roster: ExplainerRoster, selection: CaseSelection):
        self._roster = roster
        self._selection = selection

    def __getitem__(self, name: str) -> Explainer:
        return self._roster.selected[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._roster.selected)

    def __len__(self) -> int:
        return len(self._roster.selected)

    @property
    def registered(self) -> dict[str, Explainer]:
        """Every registered explainer, judged in this run or not (the built-ins included)."""
        return self._roster.registered

    def in_suite(self, suite: str) -> list[str]:
        """The names of those ``suite`` runs."""
        return self._roster.explainers_in(suite)

    def in_case(self, suite: str, case_id: str) -> list[str]:
        """The names of those with a selected test on ``suite``'s case ``case_id``."""
        return self._selection.explainers(suite, case_id)


class Runtime:
    """Where the work runs and is kept: the device, the model cache, the models
    in memory, ensemble training, progress lines, the timing of attribution calls."""

    def __init__(
        self,
        placement: Placement,
        cache: Callable[[], ModelCache],
        memo: ModelMemo,
        progress: ProgressLines,
        cost_recheck: CostRecheck,
    ):
        self._placement = placement
        self._cache = cache
        self._memo = memo
        self._progress = progress
        self._cost_recheck = cost_recheck
        #: the devices this process already paid its start-up on (:func:`.measuring.warm_up`)
        self._warmed: set[str] = set()

    @property
    def device(self) -> torch.device:
        """The run's torch device (:class:`~pytest_chaosmining.run.placement.Placement`)."""
        return self._placement.device

    @property
    def ensemble(self) -> bool:
        """Whether same-shape models train together as one batched ensemble."""
        return self._placement.ensemble

    @property
    def cache(self) -> ModelCache:
        """The on-disk model cache (with the shipped pack behind it)."""
        return self._cache()

    def memo(self, key: Hashable, load: Callable[[], T]) -> T:
        """``load()`` kept in memory under ``key`` (the last few models)."""
        return self._memo(key, load)

    def progress(self, label: str) -> Progress | None:
        """A training's progress callback printing lines under ``label`` (None under ``-q``)."""
        return self._progress(label)

    def timer(
        self,
        benchmark: BenchmarkFixture | None,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        record: Callable[[str, float], Record] | None = None,
    ) -> timing.AttributionTimer:
        """Times the test's attribution calls through ``benchmark`` (:mod:`pytest_chaosmining.timing`),
        the device's start-up paid first (once a process); with ``record`` (how the test makes its
        cost records) a first call that would fail the baseline's cost gate is measured again first."""
        recheck = self._cost_recheck(record) if record is not None else None
        if str(self.device) not in self._warmed:
            measuring.warm_up(self.device)  # before the process's first timed call on the device
            self._warmed.add(str(self.device))
        return timing.AttributionTimer(benchmark, self.device, suite, case, explainer, rounds, recheck)
