"""The composition root of a ``--chaosmining`` run: the settings and the small
collaborators the suites share, each with one job (device placement, explainer
roster, case selection, result reuse, model memo, progress lines), plus the
bars, baseline, model cache and judge they are wired to.

Created by the plugin when ``--chaosmining`` is on; heavy imports happen in the
collaborators, lazily, never in the entry module.  Nothing here knows a suite by
name: suites reach their cases and models through :mod:`pytest_chaosmining.suites`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs
import pytest

from pytest_chaosmining.run.case_selection import CaseSelection
from pytest_chaosmining.run.facets import JudgedExplainers, RunPlan
from pytest_chaosmining.run.model_memo import ModelMemo
from pytest_chaosmining.run.placement import Placement
from pytest_chaosmining.run.progress import ProgressLines
from pytest_chaosmining.run.result_reuse import ResultReuse
from pytest_chaosmining.run.roster import ExplainerRoster
from pytest_chaosmining.settings import Settings
from pytest_chaosmining.suites import get_spec, metric_catalog, planned, registered_suites
from pytest_chaosmining.verdict.baseline import Baseline
from pytest_chaosmining.verdict.baseline_scope import BaselineScope
from pytest_chaosmining.verdict.judge import Judge
from pytest_chaosmining.verdict.rule import BaselineRule

if TYPE_CHECKING:
    from pytest_chaosmining.core.metrics.catalog import MetricCatalog
    from pytest_chaosmining.run.runtime import Runtime
    from pytest_chaosmining.verdict.thresholds import Thresholds


class ChaosminingSession:
    """Everything the suites need from the run, created once per process."""

    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self.placement = Placement(config, settings)
        self.roster = ExplainerRoster(config, settings)
        self.selection = CaseSelection(self.roster.explainers_in)
        #: the model cache's folder (``--chaosmining-cache``, else the user cache dir)
        self.cache_root = settings.cache or Path(platformdirs.user_cache_dir("pytest-chaosmining"))
        #: where built-in and reference results are reused
        self.results = ResultReuse(config, settings, self.cache_root, self.placement)
        #: ``memo(key, load)``: the models of the last few keys used, kept in memory
        self.memo = ModelMemo()
        #: ``progress(label)``: a training callback printing progress lines (None under ``-q``)
        self.progress = ProgressLines(config)

    @functools.cached_property
    def plan(self) -> RunPlan:
        """What the run covers: settings, tier, data, the selected cases, the training modes."""
        return RunPlan(self.settings, self.selection)

    @functools.cached_property
    def explainers(self) -> JudgedExplainers:
        """The explainers the run judges, by name, and which of them run where."""
        return JudgedExplainers(self.roster, self.selection)

    @functools.cached_property
    def runtime(self) -> Runtime:
        """Where the work runs and is kept: device, model cache, models in memory, timers
        (the heavy face: loaded here, where the run's device is first asked for)."""
        from pytest_chaosmining.run.runtime import Runtime

        return Runtime(self.placement, self.cache_root, self.settings.pack, self.memo, self.progress)

    @property
    def thresholds(self) -> Thresholds:
        """The shipped bars, with ``--chaosmining-thresholds`` merged over them."""
        return self.roster.thresholds

    @functools.cached_property
    def metric_catalog(self) -> MetricCatalog:
        """The metrics the registered suites declare (direction, judged, gated costs)."""
        return metric_catalog()

    @functools.cached_property
    def baseline(self) -> Baseline | None:
        """The ``--chaosmining-baseline`` results, if given, set to gate costs as this
        machine allows (:meth:`Baseline.against_machine`)."""
        if not self.settings.baseline:
            return None
        baseline = Baseline.load(self.settings.baseline, self.metric_catalog)
        baseline.require_tier(self.settings.tier)
        baseline.against_machine(self.placement.machine())
        return baseline

    @functools.cached_property
    def baseline_rule(self) -> BaselineRule | None:
        """How this run's results are judged against the baseline (None: no baseline)."""
        baseline = self.baseline
        if baseline is None:
            return None
        settings = self.settings
        return BaselineRule(baseline, self.thresholds, settings.tier, settings.max_drop, settings.max_slowdown)

    def baseline_scope(self) -> BaselineScope:
        """Which of the baseline's judged results this run judges again: the named
        explainers, the selected suites and their seeds, this shard's tests."""
        settings = self.settings
        return BaselineScope(
            retired=settings.retired,
            registered=frozenset(registered_suites()),
            seeds={name: get_spec(name).seeds(settings.tier, settings.seeds) for name in settings.suites},
            shard_tests=None if settings.shard is None else self.shard_tests,
        )

    def shard_tests(self) -> frozenset[tuple[str, str]]:
        """(suite, test parameter id) of every test this shard's cases can have, for this
        run's explainers and the baseline's (an explainer no longer registered included)."""
        names = set(self.explainers) | (self.baseline.explainers if self.baseline is not None else set())
        tests: set[tuple[str, str]] = set()
        for suite_name in self.settings.suites:
            cases = planned(self, get_spec(suite_name))
            for case in cases:
                tests.add((suite_name, case.id))
                tests.update((suite_name, case.explainer_id(e)) for e in names)
            if cases:  # a suite of one case parametrised by explainer alone (cost)
                tests.update((suite_name, e) for e in names)
        return frozenset(tests)

    def models_trained_on(self) -> list[str]:
        """The device types the models this process used were trained on (none where it used
        no model cache)."""
        return self.runtime.trained_on() if "runtime" in self.__dict__ else []

    @functools.cached_property
    def judge(self) -> Judge:
        """Records results and asserts bars (see :class:`~pytest_chaosmining.verdict.judge.Judge`)."""
        tier, thresholds = self.settings.tier, self.thresholds
        return Judge(
            self.explainers,
            self.baseline_rule,
            tier=tier,
            catalog=self.metric_catalog,
            map_notes=self.roster.map_notes,
            report_only=frozenset(thresholds.report_only(list(self.settings.suites), tier)),
            thresholds=thresholds,
            hold_known_defects=self.settings.known_defects == "hold",
        )
