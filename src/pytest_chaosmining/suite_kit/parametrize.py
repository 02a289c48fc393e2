"""How suite tests are parametrised: a suite's cases in this run's shard, times the
explainers, with ids, the control's mark and an xdist group per case."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

import pytest

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView

from pytest_chaosmining.suite_kit.seam import Case

C = TypeVar("C")


class Planned(Protocol):
    """A suite as its tests are parametrised: its name, its case's fixture and its plan."""

    @property
    def name(self) -> str: ...

    @property
    def case_arg(self) -> str | None: ...
    def plan(self, run: RunView) -> Sequence[Case]: ...


def in_shard(suite: str, case_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether the case ``case_id`` of ``suite`` belongs to ``shard`` (``(i, n)``: the
    i-th of n; None: every case does).  It follows from the ids alone, so every run,
    on any machine, splits the cases the same way."""
    if shard is None:
        return True
    index, count = shard
    return zlib.crc32(f"{suite}/{case_id}".encode()) % count == index - 1


def sharded(run: RunView, suite: str, cases: Sequence[C]) -> list[C]:
    """Those of ``cases`` (of ``suite``) in this run's shard (``--chaosmining-shard``)."""
    return [case for case in cases if in_shard(suite, str(getattr(case, "id")), run.plan.settings.shard)]


def planned(run: RunView | None, suite: Planned) -> list[Case]:
    """The suite's cases in this run's shard (none without a session)."""
    return sharded(run, suite.name, suite.plan(run)) if run is not None else []


def parametrize_cases(metafunc: pytest.Metafunc, run: RunView | None, suite: Planned) -> None:
    """The one parametrisation of suite tests: over the suite's cases (its
    ``case_arg``) in this run's shard and, where the test takes ``explainer_name``,
    over cases × registered explainers, with the case's ids, the control's
    strict-xfail mark and an ``xdist_group`` per case (with ``--dist loadgroup``
    a model's tests run on one worker).  Without a session (suites collected
    without ``--chaosmining``) every parameter set is empty."""
    cases = planned(run, suite)
    case_arg = suite.case_arg if suite.case_arg in metafunc.fixturenames else None

    def group(case: Case) -> pytest.MarkDecorator:
        return pytest.mark.xdist_group(group_name(suite, case))

    if "explainer_name" in metafunc.fixturenames:
        explainers = run.explainers.in_suite(suite.name) if run is not None else []
        if case_arg is not None:
            params = [
                pytest.param(case, name, id=case.explainer_id(name), marks=[*run.judge.marks_for(name), group(case)])
                for case in cases
                for name in explainers
                if run is not None
            ]
            metafunc.parametrize((case_arg, "explainer_name"), params)
        else:  # the tests of the suite's one case, measured, never judged: no control mark
            metafunc.parametrize(
                "explainer_name",
                [pytest.param(name, marks=[group(case) for case in cases[:1]]) for name in explainers] if cases else [],
            )
    elif case_arg is not None:
        metafunc.parametrize(case_arg, [pytest.param(c, id=c.id, marks=group(c)) for c in cases])


def group_name(suite: Planned, case: Case) -> str:
    """The xdist group of ``case``'s tests: every test of one model runs on one worker."""
    return f"{suite.name}:{case.id}"
