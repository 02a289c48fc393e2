"""Where the work of a run runs and is kept (the runtime face): the device, the model
cache with the shipped pack behind it, the models in memory, ensembles, progress lines and
the timing of attribution calls.  Heavy (torch at the top of what it imports): the session
loads it where the run's device is first asked for."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pytest_chaosmining import timing
from pytest_chaosmining.core.machine import Machine
from pytest_chaosmining.core.metrics import measuring
from pytest_chaosmining.core.storage.cache import ModelCache
from pytest_chaosmining.core.storage.pack import ModelPack
from pytest_chaosmining.run.model_memo import ModelMemo
from pytest_chaosmining.run.placement import Placement
from pytest_chaosmining.run.progress import ProgressLines

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.metrics.cost import Cost
    from pytest_chaosmining.run_view import Progress

T = TypeVar("T")


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

    def machine(self) -> Machine:
        """The machine the run measures its costs on (:meth:`Placement.machine`)."""
        return self._placement.machine()

    @property
    def ensemble(self) -> bool:
        """Whether same-shape models train together as one batched ensemble."""
        return self._placement.ensemble

    @functools.cached_property
    def cache(self) -> ModelCache:
        """The on-disk model cache under ``--chaosmining-cache`` (with the shipped pack
        behind it, ``--chaosmining-pack``), made on first use."""
        return ModelCache(self._cache_root, ModelPack(self._pack) if self._pack else None)

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
