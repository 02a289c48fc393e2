"""The per-session state the suites share: settings, device, explainers,
thresholds, baseline, model cache, in-memory memo, progress lines and the judge.

Created by the plugin when ``--chaosmining`` is on; heavy imports happen here,
lazily, never in the entry module.  Nothing here knows a suite by name: suites
reach their cases and models through :mod:`pytest_chaosmining.suites`.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.baseline import Baseline
    from pytest_chaosmining.core.cache import ModelCache
    from pytest_chaosmining.core.derived import DerivedCache
    from pytest_chaosmining.core.metric_catalog import MetricCatalog
    from pytest_chaosmining.core.results import Record
    from pytest_chaosmining.core.thresholds import Thresholds
    from pytest_chaosmining.core.training_modes import SaliencyGuided
    from pytest_chaosmining.diagnosis import MapNotes
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.judge import Judge
    from pytest_chaosmining.timing import AttributionTimer

#: models kept in memory per process (tests of one model run together; older ones reload from disk)
MODELS_IN_MEMORY = 8
#: seconds between progress lines of one model on an xdist worker
WORKER_EVERY_S = 10.0

T = TypeVar("T")
C = TypeVar("C")
#: a training callback: (epoch, epochs, elapsed seconds, loss)
Progress = Callable[[int, int, float, float], None]


def worker_gpu(worker_id: str | None, gpus: int) -> int:
    """The GPU index of xdist worker ``gw<i>``: ``i mod gpus`` (0 without xdist)."""
    if worker_id is None or gpus <= 1 or not worker_id.startswith("gw"):
        return 0
    return int(worker_id[2:]) % gpus


class ChaosminingSession:
    """Everything the suites need from the session, created once per process."""

    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings
        self._memo: OrderedDict[Hashable, object] = OrderedDict()
        self._selected: dict[str, set[str]] = {}
        self._selected_explainers: dict[tuple[str, str], set[str]] = {}
        #: set once pytest has collected and selected the run's tests
        self.collection_done = False

    def note_selected(self, suite: str, params: Mapping[str, object]) -> None:
        """Record the case ids among one selected test's parameters and, with them,
        its explainer (see :meth:`selected` and :meth:`selected_explainers`)."""
        ids = self._selected.setdefault(suite, set())
        case_ids = [str(getattr(p, "id")) for p in params.values() if isinstance(getattr(p, "id", None), str)]
        ids.update(case_ids)
        explainer = params.get("explainer_name")
        if isinstance(explainer, str):
            for case_id in case_ids:
                self._selected_explainers.setdefault((suite, case_id), set()).add(explainer)

    def selected(self, suite: str, cases: Sequence[C]) -> list[C]:
        """Those of ``cases`` (of ``suite``) whose tests the run selected (all of them
        before collection has finished)."""
        if not self.collection_done:
            return list(cases)
        ids = self._selected.get(suite, set())
        return [c for c in cases if str(getattr(c, "id")) in ids]

    def selected_explainers(self, suite: str, case_id: str) -> list[str]:
        """The registered explainers of ``suite`` whose tests on case ``case_id`` the
        run selected (all of them before collection has finished), in registry order."""
        names = self.explainers_in(suite)
        if not self.collection_done:
            return list(names)
        chosen = self._selected_explainers.get((suite, case_id), set())
        return [name for name in names if name in chosen]

    # -- lazily built session resources ------------------------------------
    @functools.cached_property
    def device(self) -> torch.device:
        """The torch device of the run: ``--chaosmining-device``, else CUDA where
        present.  Plain ``cuda`` on xdist worker ``gw<i>`` of a machine with several
        GPUs is ``cuda:<i mod GPUs>``: one GPU per worker."""
        import torch

        name = self.settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        device = torch.device(name)  # raises RuntimeError on a malformed name
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device {name!r} requested but CUDA is not available")
        if device.type == "cuda":
            torch.backends.cudnn.benchmark = True  # the suites' shapes are fixed: let cuDNN pick its kernels once
            if device.index is None:
                return torch.device("cuda", worker_gpu(self.worker_id, torch.cuda.device_count()))
        return device

    @property
    def ensemble(self) -> bool:
        """Whether same-shape models train as batched ensembles (``--chaosmining-ensemble``)."""
        setting = self.settings.ensemble
        return setting == "on" or (setting == "auto" and self.device.type == "cuda")

    @property
    def worker_id(self) -> str | None:
        """This process's xdist worker id (``gw0``, …); None on the controller or without xdist."""
        workerinput: dict[str, object] = getattr(self.config, "workerinput", {})
        worker = workerinput.get("workerid")
        return str(worker) if worker is not None else None

    @functools.cached_property
    def all_explainers(self) -> dict[str, Explainer]:
        """Every registered explainer (built-ins and the ``pytest_chaosmining_explainers`` hook)."""
        from pytest_chaosmining.explainers import collect_explainers

        return collect_explainers(self.config.hook.pytest_chaosmining_explainers(config=self.config))

    @functools.cached_property
    def explainers(self) -> dict[str, Explainer]:
        """The registered explainers, filtered by ``--chaosmining-explainers``
        (``pytest.UsageError`` for an unknown name or one that applies in none of the suites)."""
        from pytest_chaosmining.explainers import select

        try:
            chosen = select(self.all_explainers, list(self.settings.explainers), list(self.settings.suites))
        except ValueError as exc:
            raise pytest.UsageError(f"--chaosmining-explainers: {exc}") from None
        return {
            name: dataclasses.replace(e, call_timeout_s=self.settings.call_timeout_s, map_notes=self.map_notes)
            for name, e in chosen.items()
        }

    @functools.cached_property
    def map_notes(self) -> MapNotes:
        """What the run's explainers noted about their maps (for the judge's messages)."""
        from pytest_chaosmining.diagnosis import MapNotes

        return MapNotes()

    def explainers_in(self, suite: str) -> list[str]:
        """The explainers ``suite`` runs: all selected ones but the built-ins beyond
        the paper's four that apply there and have no bars of their own there at
        this tier (their values would be reported, not judged), unless named in
        ``--chaosmining-explainers``.  One that does not apply there stays, to be
        skipped with its reason."""
        named = set(self.settings.explainers)

        def runs(name: str) -> bool:
            declared = self.explainers[name].applies_to
            return (
                name in named
                or not self.thresholds.lacks_own_bars(suite, self.tier, name)
                or (declared is not None and not declared.applies_in([suite]))
            )

        return [name for name in self.explainers if runs(name)]

    def left_out(self) -> dict[str, list[str]]:
        """Per suite, the selected explainers :meth:`explainers_in` leaves out."""
        from pytest_chaosmining.suites import names

        out = {}
        for suite in names():
            if suite in self.settings.suites:
                runs = set(self.explainers_in(suite))
                if left := [n for n in self.explainers if n not in runs]:
                    out[suite] = left
        return out

    @functools.cached_property
    def thresholds(self) -> Thresholds:
        """The shipped bars, with ``--chaosmining-thresholds`` merged over them; the
        built-ins beyond the paper's four are judged only where they have bars of their own."""
        from pytest_chaosmining.explainers import CONTROL_NAME, PAPER_NAMES
        from pytest_chaosmining.suites import shipped_thresholds

        own_only = frozenset(
            name
            for name, e in self.all_explainers.items()
            if e.source == "builtin" and name not in PAPER_NAMES and name != CONTROL_NAME
        )
        return shipped_thresholds(self.settings.thresholds_file, own_only)

    @functools.cached_property
    def baseline(self) -> Baseline | None:
        """The ``--chaosmining-baseline`` results, if given."""
        from pytest_chaosmining.core.baseline import Baseline

        if not self.settings.baseline_file:
            return None
        return Baseline.load(self.settings.baseline_file, self.metric_catalog)

    def in_baseline_scope(self, record: Record) -> bool:
        """Whether this run should judge ``record`` of the baseline again: a registered
        suite's record when its suite was selected and its seed is among this run's
        (every record of a user's own test suite); its explainer where
        ``--chaosmining-explainers`` names them; in a shard run, only this shard's cases
        (:meth:`_shard_params`)."""
        from pytest_chaosmining.core.results import MODEL_LEVEL, parameter_id
        from pytest_chaosmining.suites import REGISTRY, get_suite

        named = self.settings.explainers
        if named and record.explainer != MODEL_LEVEL and record.explainer not in named:
            return False
        if record.suite not in REGISTRY:
            return True
        if record.suite not in self.settings.suites:
            return False
        seeds = get_suite(record.suite).seeds(self.tier, self.settings.seeds)
        if seeds is not None and record.seed not in seeds:
            return False
        if self.settings.shard is None:
            return True
        return (record.suite, parameter_id(record.nodeid)) in self._shard_params

    @functools.cached_property
    def _shard_params(self) -> frozenset[tuple[str, str]]:
        """(suite, test parameter id) of every test this shard's cases can have, for this
        run's explainers and the baseline's (an explainer no longer registered included)."""
        from pytest_chaosmining.suites import get_suite, planned

        names = set(self.explainers) | (self.baseline.explainers if self.baseline is not None else set())
        params: set[tuple[str, str]] = set()
        for suite_name in self.settings.suites:
            cases = planned(self, get_suite(suite_name))
            for case in cases:
                params.add((suite_name, case.id))
                params.update((suite_name, case.explainer_id(e)) for e in names)
            if cases:  # a suite of one case parametrised by explainer alone (cost)
                params.update((suite_name, e) for e in names)
        return frozenset(params)

    @functools.cached_property
    def metric_catalog(self) -> MetricCatalog:
        """The metrics the registered suites declare (direction, judged, gated costs)."""
        from pytest_chaosmining.suites import metric_catalog

        return metric_catalog()

    @functools.cached_property
    def cache(self) -> ModelCache:
        """The on-disk model cache (``--chaosmining-cache``, else the user cache dir)."""
        from pytest_chaosmining.core.cache import ModelCache
        from pytest_chaosmining.core.pack import ModelPack

        root = self.settings.cache_dir
        if root is None:
            import platformdirs

            root = Path(platformdirs.user_cache_dir("pytest-chaosmining"))
        return ModelCache(root, ModelPack(self.settings.pack) if self.settings.pack else None)

    @functools.cached_property
    def derived(self) -> DerivedCache:
        """Cached scores of the built-in explainers, beside the model cache."""
        from pytest_chaosmining.core.derived import DerivedCache

        return DerivedCache(self.cache.root)

    def evaluated(
        self,
        suite: str,
        parts: dict[str, object],
        explainer: Explainer,
        compute: Callable[[], T],
        types: tuple[type, ...] = (),
    ) -> T:
        """``compute()``: for a built-in explainer through the derived-results cache
        (``parts`` names the case, the weights and the evaluation sizes; ``types``
        the dataclasses in the result), for any other explainer always computed."""
        if explainer.source != "builtin" or not self.reuses_builtin_results:
            return compute()
        return self.reused(
            suite, {**parts, "explainer": explainer.name, "kwargs": explainer.attribute_kwargs}, compute, types
        )

    def reused(self, suite: str, key: dict[str, object], compute: Callable[[], T], types: tuple[type, ...] = ()) -> T:
        """``compute()`` of the plugin's own (a built-in's, a reference's) through the
        derived-results cache under ``key`` and the device type, unless
        ``--chaosmining-builtin-results recompute``."""
        if not self.settings.reuse_builtin_results:
            return compute()
        return self.derived.get_or_compute(suite, {**key, "device": self.device.type}, compute, types)

    @property
    def reuses_builtin_results(self) -> bool:
        """Whether a built-in explainer's cached results stand in for computing them: not
        with ``--chaosmining-builtin-results recompute``, nor when benchmark results are
        asked for (:attr:`fresh_timings`)."""
        return self.settings.reuse_builtin_results and not self.fresh_timings

    @functools.cached_property
    def fresh_timings(self) -> bool:
        """Whether pytest-benchmark's results are asked for (``--benchmark-only``,
        ``-json``, ``-save``, ``-autosave``, ``-compare``) and not disabled: then the
        built-ins' results are computed afresh, so that every explainer is timed."""
        wanted = ("benchmark_only", "benchmark_json", "benchmark_save", "benchmark_autosave", "benchmark_compare")
        options = self.config.option
        if getattr(options, "benchmark_disable", False) or getattr(options, "benchmark_skip", False):
            return False
        return any(bool(getattr(options, name, None)) for name in wanted)

    def timer(
        self,
        benchmark: BenchmarkFixture | None,
        suite: str,
        case: str,
        explainer: str,
        rounds: int = 1,
        record: Callable[[str, float], Record] | None = None,
    ) -> AttributionTimer:
        """Times the test's attribution calls through ``benchmark`` (see :mod:`pytest_chaosmining.timing`);
        with ``record`` (how the test makes its cost records) a first call that would fail the
        baseline's cost gate is measured again first."""
        from pytest_chaosmining.timing import AttributionTimer

        recheck = self.judge.cost_recheck(record) if record is not None else None
        return AttributionTimer(benchmark, self.device, suite, case, explainer, rounds, recheck)

    @functools.cached_property
    def judge(self) -> Judge:
        """Records results and asserts bars (see :class:`~pytest_chaosmining.judge.Judge`)."""
        from pytest_chaosmining.judge import Judge

        fixed, tier, thresholds = self.settings.max_drop, self.tier, self.thresholds

        def max_drop(suite: str, metric: str) -> float:
            return fixed if fixed is not None else thresholds.max_drop(suite, tier, metric)

        return Judge(
            self.explainers, self.baseline, max_drop, self.settings.max_slowdown, self.metric_catalog, self.map_notes
        )

    @property
    def tier(self) -> str:
        """The run's tier name."""
        return self.settings.tier

    @property
    def data_dir(self) -> str | None:
        """``--chaosmining-data`` as a string (None: the embedded data)."""
        return str(self.settings.data_dir) if self.settings.data_dir else None

    # -- shared helpers for suites ------------------------------------------
    def per_training(self, cases: Sequence[C]) -> list[C]:
        """``cases`` once per selected training mode (``--chaosmining-training``)."""
        return [
            dataclasses.replace(case, guide=guide)  # type: ignore[type-var]
            for guide in self.guides()
            for case in cases
        ]

    def guides(self) -> list[SaliencyGuided | None]:
        """The selected training modes (None: standard training)."""
        return self.settings.guides()

    def memo(self, key: Hashable, load: Callable[[], T]) -> T:
        """``load()`` once per ``key`` while it stays among the last few used
        (tests of one model run together); older ones are loaded again (from the
        disk cache) when needed."""
        if key in self._memo:
            self._memo.move_to_end(key)
        else:
            self._memo[key] = load()
            while len(self._memo) > MODELS_IN_MEMORY:
                self._memo.popitem(last=False)
        return self._memo[key]  # type: ignore[return-value]

    # -- progress lines --------------------------------------------------------
    def progress(self, label: str, every_s: float = 2.0) -> Progress | None:
        """A training callback printing ``label``, epoch and elapsed time, at most
        every ``every_s`` seconds (``WORKER_EVERY_S`` on an xdist worker) and once at
        the end; silent under ``-q``.  On an xdist worker the line goes, prefixed
        with the worker's id, to the stderr the worker shares with the controller,
        so a ``-n 2`` run shows what trains instead of staying silent for minutes."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        worker = self.worker_id
        if self.config.get_verbosity() < 0 or (reporter is None and worker is None):
            return None
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        every = WORKER_EVERY_S if worker else every_s
        last = [time.monotonic()]

        def write(line: str) -> None:
            if worker is not None:
                sys.stderr.write(f"[{worker}] {line}\n")
                sys.stderr.flush()
            elif reporter is not None:
                reporter.write_line(line)

        def report(epoch: int, epochs: int, elapsed: float, loss: float) -> None:
            now = time.monotonic()
            if epoch != epochs and now - last[0] < every:
                return
            last[0] = now
            line = f"chaosmining: training {label}: epoch {epoch}/{epochs}, loss {float(loss):.4g}, {elapsed:.1f} s"
            if capture is not None:
                with capture.global_and_fixture_disabled():
                    write(line)
            else:
                write(line)

        return report
