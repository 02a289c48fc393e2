"""The composition root of a ``--chaosmining`` run: the settings and the small
collaborators the suites share, each with one job (device placement, explainer
roster, case selection, result reuse, model memo, progress lines), plus the
bars, baseline, model cache and judge they are wired to.

Created by the plugin when ``--chaosmining`` is on; heavy imports happen in the
collaborators, lazily, never in the entry module.  Nothing here knows a suite by
name: suites reach their cases and models through :mod:`pytest_chaosmining.suites`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_chaosmining.run.case_selection import CaseSelection
from pytest_chaosmining.run.model_memo import ModelMemo
from pytest_chaosmining.run.placement import Placement
from pytest_chaosmining.run.progress import ProgressLines
from pytest_chaosmining.run.result_reuse import ResultReuse
from pytest_chaosmining.run.roster import ExplainerRoster
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.metrics.catalog import MetricCatalog
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.verdicts.baseline import Baseline
    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.core.verdicts.thresholds import Thresholds
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.judge import Judge
    from pytest_chaosmining.timing import AttributionTimer

C = TypeVar("C")


class ChaosminingSession:
    """Everything the suites need from the run, created once per process."""

    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self.placement = Placement(config, settings)
        self.roster = ExplainerRoster(config, settings, lambda: self.thresholds)
        self.selection = CaseSelection(self.roster.explainers_in)
        self.reuse = ResultReuse(config, settings, lambda: self.cache.root, lambda: self.device.type)
        #: ``memo(key, load)``: the models of the last few keys used, kept in memory
        self.memo = ModelMemo()
        #: ``progress(label)``: a training callback printing progress lines (None under ``-q``)
        self.progress = ProgressLines(config)

    @property
    def tier(self) -> str:
        """The run's tier name."""
        return self.settings.tier

    @property
    def data_dir(self) -> str | None:
        """``--chaosmining-data`` as a string (None: the embedded data)."""
        return str(self.settings.data_dir) if self.settings.data_dir else None

    @property
    def device(self) -> torch.device:
        """The run's torch device (:class:`~pytest_chaosmining.run.placement.Placement`)."""
        return self.placement.device

    @property
    def explainers(self) -> dict[str, Explainer]:
        """The selected explainers (:class:`~pytest_chaosmining.run.roster.ExplainerRoster`)."""
        return self.roster.selected

    @functools.cached_property
    def thresholds(self) -> Thresholds:
        """The shipped bars, with ``--chaosmining-thresholds`` merged over them."""
        from pytest_chaosmining.suites import shipped_thresholds

        return shipped_thresholds(self.settings.thresholds_file, self.roster.own_bars_only)

    @functools.cached_property
    def metric_catalog(self) -> MetricCatalog:
        """The metrics the registered suites declare (direction, judged, gated costs)."""
        from pytest_chaosmining.suites import metric_catalog

        return metric_catalog()

    @functools.cached_property
    def baseline(self) -> Baseline | None:
        """The ``--chaosmining-baseline`` results, if given."""
        from pytest_chaosmining.core.verdicts.baseline import Baseline

        if not self.settings.baseline_file:
            return None
        return Baseline.load(self.settings.baseline_file, self.metric_catalog)

    @functools.cached_property
    def cache(self) -> ModelCache:
        """The on-disk model cache (``--chaosmining-cache``, else the user cache dir)."""
        from pytest_chaosmining.core.storage.cache import ModelCache
        from pytest_chaosmining.core.storage.pack import ModelPack

        root = self.settings.cache_dir
        if root is None:
            import platformdirs

            root = Path(platformdirs.user_cache_dir("pytest-chaosmining"))
        return ModelCache(root, ModelPack(self.settings.pack) if self.settings.pack else None)

    @functools.cached_property
    def judge(self) -> Judge:
        """Records results and asserts bars (see :class:`~pytest_chaosmining.judge.Judge`)."""
        from pytest_chaosmining.judge import Judge

        fixed, tier, thresholds = self.settings.max_drop, self.tier, self.thresholds

        def max_drop(suite: str, metric: str) -> float:
            return fixed if fixed is not None else thresholds.max_drop(suite, tier, metric)

        return Judge(
            self.explainers, self.baseline, max_drop, self.settings.max_slowdown, self.metric_catalog,
            self.roster.map_notes, frozenset(thresholds.report_only(list(self.settings.suites), tier)),
        )  # fmt: skip

    def timer(
        self,
        benchmark: BenchmarkFixture | None,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        record: Callable[[str, float], Record] | None = None,
    ) -> AttributionTimer:
        """Times the test's attribution calls through ``benchmark`` (:mod:`pytest_chaosmining.timing`);
        with ``record`` (how the test makes its cost records) a first call that would fail the
        baseline's cost gate is measured again first."""
        from pytest_chaosmining.timing import AttributionTimer

        recheck = self.judge.cost_recheck(record) if record is not None else None
        return AttributionTimer(benchmark, self.device, suite, case, explainer, rounds, recheck)

    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode (``--chaosmining-training``; None: standard)."""
        return [
            dataclasses.replace(case, guide=guide)  # type: ignore[type-var]
            for guide in self.settings.guides()
            for case in cases
        ]
