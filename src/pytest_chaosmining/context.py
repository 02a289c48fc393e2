"""The per-session state the suites use: settings, device, explainers,
thresholds, baseline, model cache, progress lines and result recording.

Created by the plugin when ``--chaosmining`` is on; heavy imports happen here,
lazily, never in the entry module.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .results import OUTCOME_PROPERTY, USER_PROPERTY, Record
from .settings import Settings


MODELS_IN_MEMORY = 8


class ConformanceFailure(AssertionError):
    """A measured value fell below its threshold or its baseline."""


class ControlPassedBar(Exception):
    """The random control met a bar: the bar cannot tell an explainer from noise.

    Deliberately not a :class:`ConformanceFailure`, so the control's strict
    xfail does not absorb it: every bar must reject the control on its own."""


class ChaosminingContext:
    """Everything a suite needs from the session, created once per process."""

    def __init__(self, config: Any, settings: Settings):
        self.config = config
        self.settings = settings
        self._models: OrderedDict[Any, Any] = OrderedDict()

    # -- lazily built session resources ------------------------------------
    @functools.cached_property
    def device(self) -> Any:
        import torch

        name = self.settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        device = torch.device(name)  # raises RuntimeError on a malformed name
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device {name!r} requested but CUDA is not available")
        return device

    @functools.cached_property
    def all_explainers(self) -> dict[str, Any]:
        from .explainers import collect_explainers

        return collect_explainers(self.config.hook.pytest_chaosmining_explainers(config=self.config))

    @functools.cached_property
    def explainers(self) -> dict[str, Any]:
        """The registered explainers, filtered by ``--chaosmining-explainers``."""
        from .explainers import select

        return select(self.all_explainers, list(self.settings.explainers))

    @functools.cached_property
    def thresholds(self) -> Any:
        from .thresholds import Thresholds

        return Thresholds.load(self.settings.thresholds_file)

    @functools.cached_property
    def baseline(self) -> Any:
        from .baseline import Baseline

        return Baseline.load(self.settings.baseline_file) if self.settings.baseline_file else None

    @functools.cached_property
    def cache(self) -> Any:
        from .cache import ModelCache

        root = self.settings.cache_dir
        if root is None:
            import platformdirs

            root = Path(platformdirs.user_cache_dir("pytest-chaosmining"))
        return ModelCache(root)

    # -- symbolic suite -----------------------------------------------------
    def symbolic_cases(self) -> list[Any]:
        from .symbolic_suite import plan_cases
        from .tiers import SYMBOLIC

        return self._per_training(
            plan_cases(SYMBOLIC[self.settings.tier], self.settings.seeds, list(self.settings.sweeps)))

    def _per_training(self, cases: list[Any]) -> list[Any]:
        """``cases`` once per selected training mode (``--chaosmining-training``)."""
        import dataclasses

        return [dataclasses.replace(case, guide=guide) for guide in self.settings.guides() for case in cases]

    def symbolic_cost_case(self) -> Any:
        from .symbolic_suite import cost_case
        from .tiers import SYMBOLIC

        return cost_case(SYMBOLIC[self.settings.tier])

    def _memo(self, case: Any, load: Any) -> Any:
        """Keep the last few models in memory (tests of one model run together);
        older ones are reloaded from the disk cache when needed again."""
        if case in self._models:
            self._models.move_to_end(case)
        else:
            self._models[case] = load()
            while len(self._models) > MODELS_IN_MEMORY:
                self._models.popitem(last=False)
        return self._models[case]

    def symbolic_model(self, case: Any) -> Any:
        """The trained model of ``case``, trained at most once (and cached on disk)."""
        from .symbolic_suite import trained_model

        return self._memo(case, lambda: trained_model(case, self.cache, self.device, self.progress(f"symbolic {case.id}")))

    def marks_for(self, explainer: str) -> list[Any]:
        """The random control must fail: its tests are strict xfails, so a
        threshold loose enough to let it pass turns the run red (XPASS)."""
        import pytest

        if self.explainers[explainer].control:
            return [pytest.mark.xfail(raises=ConformanceFailure, strict=True,
                                      reason="control: random attributions must fail every threshold")]
        return []

    # -- vision suite -------------------------------------------------------
    @property
    def vision_tier(self) -> Any:
        from .tiers import VISION

        return VISION[self.settings.tier]

    def vision_cases(self) -> list[Any]:
        from .vision_suite import plan_cases

        data = self.settings.data_dir
        return self._per_training(plan_cases(self.vision_tier, self.settings.seeds,
                                             "torchvision" if data else "embedded", str(data) if data else None))

    def vision_model(self, case: Any) -> Any:
        """The trained classifier of ``case``, trained at most once (and cached on disk)."""
        from .vision_suite import trained_model

        return self._memo(case, lambda: trained_model(case, self.cache, self.device, self.progress(f"vision {case.id}")))

    # -- audio suite --------------------------------------------------------
    @property
    def audio_tier(self) -> Any:
        from .tiers import AUDIO

        return AUDIO[self.settings.tier]

    def audio_cases(self) -> list[Any]:
        from .audio_suite import plan_cases

        data = self.settings.data_dir
        return self._per_training(plan_cases(self.audio_tier, self.settings.seeds, "files" if data else "embedded",
                                             str(data) if data else None))

    def audio_model(self, case: Any) -> Any:
        """The trained classifier of ``case``, trained at most once (and cached on disk)."""
        from .audio_suite import trained_model

        return self._memo(case, lambda: trained_model(case, self.cache, self.device, self.progress(f"audio {case.id}")))

    # -- RFEwNA suite ----------------------------------------------------------
    @property
    def rfe_tier(self) -> Any:
        from .tiers import RFE_TIERS

        return RFE_TIERS[self.settings.tier]

    def rfe_cases(self) -> list[Any]:
        from .rfe_suite import plan_cases

        data = self.settings.data_dir
        return plan_cases(self.rfe_tier, self.settings.seeds, str(data) if data else None)

    def rfe_selection(self, case: Any, method: str) -> Any:
        """The selection of ``method`` (a registered explainer driving RFEwNA, or
        ``RFE-<estimator>``) on ``case``, computed at most once per process."""
        from .rfe_suite import run_rfewna, run_statistical

        if method.startswith("RFE-"):
            return self._memo(("rfe", case, method),
                              lambda: run_statistical(case, method[4:], self.device, self.cache))
        return self._memo(("rfe", case, method),
                          lambda: run_rfewna(case, self.explainers[method], self.cache, self.device))

    # -- saliency guided training suite ---------------------------------------
    def saliency_cases(self) -> list[Any]:
        from .saliency_suite import plan_cases
        from .tiers import SALIENCY

        tier, data = self.settings.tier, self.settings.data_dir
        sources = (("torchvision", str(data)), ("files", str(data))) if data else (("embedded", None),) * 2
        return plan_cases(tier, SALIENCY[tier], self.settings.guide(), self.settings.seeds, *sources)

    # -- IteROAR suite -------------------------------------------------------------
    def iteroar_cases(self) -> list[Any]:
        from .iteroar_suite import plan_cases
        from .tiers import ITEROAR

        data = self.settings.data_dir
        return plan_cases(ITEROAR[self.settings.tier], self.vision_tier, self.settings.seeds,
                          "torchvision" if data else "embedded", str(data) if data else None)

    def iteroar_chain(self, case: Any, explainer: str | None) -> Any:
        """The chain of ``explainer`` (None: the random-pixel reference) on ``case``,
        run at most once per process; its retrained models are cached on disk."""
        from .iteroar_suite import REFERENCE, run_chain
        from .vision_suite import _data

        def run() -> Any:
            f0 = self.vision_model(case.base)
            train = self._memo(("vision-train", case.base), lambda: _data(case.base, "train"))
            name = explainer or REFERENCE
            return run_chain(case, f0, train, self.explainers[explainer] if explainer else None, self.cache,
                             self.device, self.vision_tier.internal_batch_size,
                             self.progress(f"iteroar {case.id} {name}"), stream=name)

        return self._memo(("iteroar", case, explainer), run)

    # -- BAM suite -------------------------------------------------------------------
    @property
    def bam_tier(self) -> Any:
        from .tiers import BAM

        return BAM[self.settings.tier]

    def bam_cases(self) -> list[Any]:
        from .bam_suite import plan_cases

        data = self.settings.data_dir
        return plan_cases(self.bam_tier, self.settings.seeds, "torchvision" if data else "embedded",
                          str(data) if data else None)

    def bam_models(self, case: Any) -> Any:
        """The BAM models of ``case`` (f_o, f_s, every f_k), trained at most once (and cached on disk)."""
        from .bam_suite import trained_models

        return self._memo(("bam", case), lambda: trained_models(
            case, self.cache, self.device, lambda label: self.progress(f"bam {case.id} {label}")))

    # -- recording and asserting ---------------------------------------------
    def tag_test(self, node: Any, suite: str, explainer: str) -> None:
        """Mark ``node`` as a conformance test of ``explainer`` (for outcome counts)."""
        node.user_properties.append((OUTCOME_PROPERTY, {"suite": suite, "explainer": explainer}))

    def record(self, node: Any, record: Record) -> Record:
        """Attach ``record`` to the test report (travels through xdist to the controller)."""
        record.nodeid = node.nodeid
        node.user_properties.append((USER_PROPERTY, record.to_dict()))
        return record

    def require(self, node: Any, record: Record, threshold: float, what: str) -> None:
        """Record ``record`` with its threshold, then fail if it is below the threshold
        or regressed against the baseline."""
        record.threshold = threshold
        record.passed = record.value >= threshold
        regression = self.baseline.regression(record, self.settings.max_drop) if self.baseline else None
        if regression:
            record.passed = False
        self.record(node, record)
        if record.value < threshold:
            raise ConformanceFailure(
                f"{what}: {record.metric} {record.value:.4f} < threshold {threshold:.4f} "
                f"(margin {record.value - threshold:+.4f})"
            )
        if regression:
            raise ConformanceFailure(f"{what}: {regression}")

    def require_all(self, node: Any, checks: list[tuple[Record, float | None, str]]) -> None:
        """:meth:`require` each ``(record, threshold, what)``, recording all of them,
        then fail once with every bar that was missed.  A check without a bar (None:
        not judged there) is recorded only; a test none of whose checks has a bar
        skips.  For the random control every bar must be missed: one it meets
        raises :class:`ControlPassedBar`."""
        import pytest

        judged = [(record, threshold, what) for record, threshold, what in checks if threshold is not None]
        for record, threshold, _ in checks:
            if threshold is None:
                self.record(node, record)
        if not judged:
            pytest.skip("not judged: no calibrated bar for " + ", ".join(
                f"{r.metric}" for r, _, _ in checks) + f" here ({checks[0][2]}); the values are recorded")
        failures = []
        for record, threshold, what in judged:
            try:
                self.require(node, record, threshold, what)
            except ConformanceFailure as exc:
                failures.append(str(exc))
        passed_by_control = [f"{what}: {record.metric} {record.value:.4f} >= threshold {threshold:.4f}"
                             for record, threshold, what in judged
                             if record.passed and self._is_control(record.explainer)]
        if passed_by_control:
            raise ControlPassedBar("the random control passed a bar on its own, so that bar cannot tell an "
                                   "explainer from noise: " + "; ".join(passed_by_control))
        if failures:
            raise ConformanceFailure("; ".join(failures))

    def _is_control(self, explainer: str) -> bool:
        found = self.explainers.get(explainer)
        return bool(found is not None and found.control)

    # -- progress lines --------------------------------------------------------
    def progress(self, label: str, every_s: float = 2.0) -> Any:
        """A training callback printing ``label``, epoch and elapsed time, at most
        every ``every_s`` seconds and once at the end; silent under ``-q`` or on xdist workers."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.get_verbosity() < 0 or hasattr(self.config, "workerinput"):
            return None
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        last = [time.monotonic()]

        def report(epoch: int, epochs: int, elapsed: float, loss: Any) -> None:
            now = time.monotonic()
            if epoch != epochs and now - last[0] < every_s:
                return
            last[0] = now
            line = f"chaosmining: training {label}: epoch {epoch}/{epochs}, loss {float(loss):.4g}, {elapsed:.1f} s"
            if capture is not None:
                with capture.global_and_fixture_disabled():
                    reporter.write_line(line)
            else:
                reporter.write_line(line)

        return report


@contextlib.contextmanager
def explainer_failures() -> Iterator[None]:
    """Turn an :class:`~pytest_chaosmining.explainers.ExplainerError` raised inside
    into a failure of the current test with the error's message alone (no
    traceback: the message names the explainer and what it did wrong)."""
    import pytest

    from .explainers import ExplainerError

    try:
        yield
    except ExplainerError as exc:
        failure = pytest.fail.Exception(str(exc), pytrace=False)
        failure.__suppress_context__ = True  # the message says it all: no chained traceback
        raise failure from None


def parametrize(metafunc: Any, context: ChaosminingContext | None, case_arg: str, cases: Any) -> None:
    """Parametrise a suite's tests: over cases (``case_arg``) and, where the test
    takes ``explainer_name``, over cases × registered explainers, with readable
    ids and the control's strict-xfail mark.  Without a context (suites collected
    without ``--chaosmining``) every parameter set is empty."""
    import pytest

    cases = list(cases()) if context is not None else []
    if "explainer_name" in metafunc.fixturenames:
        params = [
            pytest.param(case, name, id=case.explainer_id(name), marks=context.marks_for(name))
            for case in cases
            for name in context.explainers
        ]
        metafunc.parametrize((case_arg, "explainer_name"), params)
    elif case_arg in metafunc.fixturenames:
        metafunc.parametrize(case_arg, [pytest.param(c, id=c.id) for c in cases])
