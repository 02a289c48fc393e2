"""Which of a baseline's judged results this run should judge again (a missing
one fails the run): the selected suites, seeds and shard; every explainer of the
baseline but those the run retires (``--chaosmining-retired``), whatever
``--chaosmining-explainers`` names: a renamed or dropped explainer is missing."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from pytest_chaosmining.core.records import Record, parameter_id


@dataclass(frozen=True, eq=False)
class BaselineScope:
    """The run's scope as the baseline check sees it (the session states it):
    ``retired``: ``--chaosmining-retired``, the baseline's explainers not judged again; ``registered``: the registered
    suites; ``seeds``: each selected suite → the seeds this run judges (None: all);
    ``shard_tests``: in a shard run, (suite, test parameter id) of every test this shard's
    cases can have (asked once, at the first record of a selected suite; kept beside
    the fields, so the scope compares by identity)."""

    retired: tuple[str, ...]
    registered: frozenset[str]
    seeds: Mapping[str, Collection[int] | None]
    shard_tests: Callable[[], frozenset[tuple[str, str]]] | None = None

    def covers(self, record: Record) -> bool:
        """Whether this run should judge ``record`` of the baseline again: a registered
        suite's record when its suite was selected and its seed is among this run's
        (every record of a user's own test suite), unless the run retires its explainer;
        in a shard run, only this shard's cases."""
        if record.explainer in self.retired:
            return False
        if record.suite not in self.registered:
            return True
        if record.suite not in self.seeds:
            return False
        seeds = self.seeds[record.suite]
        if seeds is not None and record.seed not in seeds:
            return False
        if self.shard_tests is None:
            return True
        return (record.suite, parameter_id(record.nodeid)) in self._shard_tests

    @functools.cached_property
    def _shard_tests(self) -> frozenset[tuple[str, str]]:
        assert self.shard_tests is not None
        return self.shard_tests()
