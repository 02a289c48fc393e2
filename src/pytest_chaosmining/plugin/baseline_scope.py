"""Which of a baseline's judged results this run should judge again (a missing
one fails the run): the selected suites, seeds, named explainers and shard."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, parameter_id
from pytest_chaosmining.explainers import BUILTIN_NAMES, CONTROL_NAME, OWN
from pytest_chaosmining.suites import get_suite, planned, registered_suites

if TYPE_CHECKING:
    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.run.session import ChaosminingSession


class BaselineScope:
    """``covers(record)`` for the baseline's records, in ``session``'s run."""

    def __init__(self, session: ChaosminingSession):
        self.session = session

    @staticmethod
    def is_named(explainer: str, named: tuple[str, ...]) -> bool:
        """Whether ``--chaosmining-explainers`` ``named`` names ``explainer`` (``own``: see :meth:`covers`)."""
        if explainer in named:
            return True
        return OWN in named and (explainer not in BUILTIN_NAMES or explainer == CONTROL_NAME)

    def covers(self, record: Record) -> bool:
        """Whether this run should judge ``record`` of the baseline again: a registered
        suite's record when its suite was selected and its seed is among this run's
        (every record of a user's own test suite); its explainer where
        ``--chaosmining-explainers`` names them (``own``: every explainer that is not
        a built-in, one no longer registered included, and the control); in a shard
        run, only this shard's cases."""
        settings = self.session.settings
        named = settings.explainers
        if named and record.explainer != MODEL_LEVEL and not self.is_named(record.explainer, named):
            return False
        if record.suite not in registered_suites():
            return True
        if record.suite not in settings.suites:
            return False
        seeds = get_suite(record.suite).seeds(settings.tier, settings.seeds)
        if seeds is not None and record.seed not in seeds:
            return False
        if settings.shard is None:
            return True
        return (record.suite, parameter_id(record.nodeid)) in self._shard_params

    @functools.cached_property
    def _shard_params(self) -> frozenset[tuple[str, str]]:
        """(suite, test parameter id) of every test this shard's cases can have, for this
        run's explainers and the baseline's (an explainer no longer registered included)."""
        session = self.session
        names = set(session.explainers) | (session.baseline.explainers if session.baseline is not None else set())
        params: set[tuple[str, str]] = set()
        for suite_name in session.settings.suites:
            cases = planned(session, get_suite(suite_name))
            for case in cases:
                params.add((suite_name, case.id))
                params.update((suite_name, case.explainer_id(e)) for e in names)
            if cases:  # a suite of one case parametrised by explainer alone (cost)
                params.update((suite_name, e) for e in names)
        return frozenset(params)
