"""xdist scheduling for ``--dist loadgroup`` that keeps every test of one model on
one worker, whatever pytest does to node ids.

pytest-xdist's ``loadgroup`` tells the controller a test's ``xdist_group`` by
appending ``@group`` to its node id on the worker; since pytest 9.2 that rename
no longer takes effect, and the groups are silently ignored
(pytest-xdist#1386): a model's tests spread over the workers, and each
worker trains (or waits for) the same model.  :class:`CaseGroupScheduling`
is xdist's own scope scheduler with the scope of a test read from the run's
plan instead (:func:`case_groups`): the suite from
the shipped test module's name, the case from the parameter id.  Tests outside
the plan (the user's own, a statistical RFE method) are each a scope of their own,
or their ``xdist_group``'s where the node id carries it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xdist.scheduler import LoadScopeScheduling

from pytest_chaosmining.core.records import parameter_id
from pytest_chaosmining.suite_kit.parametrize import group_name, planned
from pytest_chaosmining.suites import get_spec

if TYPE_CHECKING:
    import pytest
    from xdist.remote import Producer

    from pytest_chaosmining.run_view import RunView

#: the suite of a shipped suite test, from its module's file name
SUITE_MODULE = re.compile(r"(?:^|/)test_chaosmining_(\w+)\.py::")


def scope_of(nodeid: str, groups: dict[tuple[str, str], str]) -> str:
    """The scheduling scope of ``nodeid``: its case's group where the plan names one; a
    user's test with an ``xdist_group`` mark (``…@group``, where pytest keeps xdist's
    rename) its group, as xdist's ``loadgroup`` does; else the node id."""
    suite, param = SUITE_MODULE.search(nodeid), parameter_id(nodeid)
    if suite is None or param is None:
        return nodeid.rsplit("@", 1)[-1] if "@" in nodeid else nodeid
    return groups.get((suite.group(1), param), nodeid)


class CaseGroupScheduling(LoadScopeScheduling):
    """Scope scheduling with one scope per model (see the module docstring)."""

    def __init__(self, config: pytest.Config, log: Producer | None, groups: dict[tuple[str, str], str]):
        super().__init__(config, log)
        self.groups = groups

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid, self.groups)


def case_groups(session: RunView) -> dict[tuple[str, str], str]:
    """(suite, test parameter id) → group, for every test :func:`parametrize_cases`
    gives a group in this run (the ids of a case's tests and of its explainer tests)."""
    groups: dict[tuple[str, str], str] = {}
    for name in session.plan.settings.suites:
        suite = get_spec(name)
        cases = planned(session, suite)
        explainers = session.explainers.in_suite(suite.name)
        for case in cases:
            groups[(suite.name, case.id)] = group_name(suite, case)
            groups.update({(suite.name, case.explainer_id(e)): group_name(suite, case) for e in explainers})
        if cases:  # a suite of one case parametrised by explainer alone (cost)
            for e in explainers:
                groups.setdefault((suite.name, e), group_name(suite, cases[0]))
    return groups
