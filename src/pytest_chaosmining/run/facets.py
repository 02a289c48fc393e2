"""The run as the suites see it, in four faces besides the judge: what runs
(:class:`RunPlan`), the explainers judged (:class:`JudgedExplainers`), where the
work runs and is kept (:class:`Runtime`), and the results reused
(:class:`~pytest_chaosmining.run.result_reuse.ResultReuse`, as it is).

Each face is a thin view over the session's collaborators: it owns no state of
its own, so the plugin side and the suites see the same run.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from pathlib import Path
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
    from pytest_chaosmining.core.storage import cache as model_cache
    from pytest_chaosmining.core.storage import pack as model_pack
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Progress
else:  # torch: the timing of attribution calls loads with the first timed call, the model cache on first use
    timing = lazy_module("pytest_chaosmining.timing")
    measuring = lazy_module("pytest_chaosmining.core.metrics.measuring")
    model_cache = lazy_module("pytest_chaosmining.core.storage.cache")
    model_pack = lazy_module("pytest_chaosmining.core.storage.pack")

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
        return str(self.settings.data) if self.settings.data else None

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
        self, placement: Placement, cache_root: Path, pack: Path | None, memo: ModelMemo, progress: ProgressLines
    ):
        self._placement = placement
        self._cache_root = cache_root
        self._pack = pack
        self._memo = memo
        self._progress = progress
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

    @functools.cached_property
    def cache(self) -> ModelCache:
        """The on-disk model cache under ``--chaosmining-cache`` (with the shipped pack
        behind it, ``--chaosmining-pack``), made on first use."""
        return model_cache.ModelCache(self._cache_root, model_pack.ModelPack(self._pack) if self._pack else None)

    def trained_on(self) -> list[str]:
        """The device types the models this process used were trained on (none where it used
        no model cache)."""
        cache = self.__dict__.get("cache")
        return sorted(cache.trained_on) if cache is not None else []

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
        recheck: Callable[[Cost], bool] | None = None,
    ) -> timing.AttributionTimer:
        """Times the test's attribution calls through ``benchmark`` (:mod:`pytest_chaosmining.timing`),
        the device's start-up paid first (once a process); with ``recheck`` (whether a cost would
        fail the baseline's gate: :meth:`~pytest_chaosmining.verdict.judge.Judge.cost_recheck`) a first call
        that would is measured again first."""
        if str(self.device) not in self._warmed:
            measuring.warm_up(self.device)  # before the process's first timed call on the device
            self._warmed.add(str(self.device))
        return timing.AttributionTimer(benchmark, self.device, suite, case, explainer, rounds, recheck)
