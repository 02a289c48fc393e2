"""When cached results stand in for computing them: a built-in explainer's scores
(keyed by the code that produced them, :mod:`pytest_chaosmining.core.storage.derived`),
unless ``--chaosmining-builtin-results recompute`` or benchmark results are asked for."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_chaosmining.active_timer import note_replayed
from pytest_chaosmining.benchmarking import results_asked
from pytest_chaosmining.core.storage.derived import DerivedCache
from pytest_chaosmining.run.placement import Placement
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer

T = TypeVar("T")


class ResultReuse:
    """The derived-results cache beside the model cache (``cache_root``) and the policy of using it."""

    def __init__(self, config: pytest.Config, settings: Settings, cache_root: Path, placement: Placement):
        self.config = config
        self.settings = settings
        self._cache_root = cache_root
        self._placement = placement

    @functools.cached_property
    def derived(self) -> DerivedCache:
        """Cached scores of the built-in explainers, beside the model cache."""
        return DerivedCache(self._cache_root, self.settings.pack, self._placement.device.type)

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
        the dataclasses in the result), for any other explainer always computed.  A
        result reused rather than computed marks the test's costs replayed
        (:func:`~pytest_chaosmining.active_timer.note_replayed`)."""
        if explainer.source != "builtin" or not self.reuses_builtin_results:
            return compute()
        computed = False

        def counted() -> T:
            nonlocal computed
            computed = True
            return compute()

        key = {**parts, "explainer": explainer.name, "kwargs": explainer.attribute_kwargs}
        result = self.reused(suite, key, counted, types)
        if not computed:
            note_replayed()  # the test's costs are an earlier run's: never gated against measured ones
        return result

    def reused(self, suite: str, key: dict[str, object], compute: Callable[[], T], types: tuple[type, ...] = ()) -> T:
        """``compute()`` of the plugin's own (a built-in's, a reference's) through the
        derived-results cache under ``key`` and the device type, unless
        ``--chaosmining-builtin-results recompute``."""
        if self.settings.builtin_results != "reuse":
            return compute()
        return self.derived.get_or_compute(suite, {**key, "device": self._placement.device.type}, compute, types)

    @property
    def reuses_builtin_results(self) -> bool:
        """Whether a built-in explainer's cached results stand in for computing them: not
        with ``--chaosmining-builtin-results recompute``, nor when benchmark results are
        asked for (:attr:`fresh_timings`)."""
        return self.settings.builtin_results == "reuse" and not self.fresh_timings

    @functools.cached_property
    def fresh_timings(self) -> bool:
        """Whether pytest-benchmark's results are asked for (``--benchmark-only``,
        ``-json``, ``-save``, ``-autosave``, ``-compare``) and not disabled: then the
        built-ins' results are computed afresh, so that every explainer is timed."""
        return results_asked(self.config)
