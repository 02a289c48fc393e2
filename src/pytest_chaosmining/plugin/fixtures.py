"""Public fixtures: what a user's own test can ask the ChaosMining session for.

All of them skip the test unless the run has ``--chaosmining``.

``chaosmining``
    The :class:`~pytest_chaosmining.run.session.ChaosminingSession` (settings,
    device, explainers, thresholds, model cache).
``chaosmining_judge``
    The :class:`~pytest_chaosmining.verdict.judge.Judge`: records values into the
    report and asserts bars, as the shipped suites do.
``chaosmining_cases``
    ``chaosmining_cases("vision")``: the cases a suite runs at this tier and seeds.
``chaosmining_benchmark``
    pytest-benchmark's ``benchmark`` fixture, or None where pytest-benchmark is
    absent (``-p no:benchmark``) or skips benchmarks (``--benchmark-skip``): the
    shipped tests then time their attribution calls by hand and still judge.
``chaosmining_model``
    ``chaosmining_model("symbolic", case)``: the trained model of a case of a
    model suite (symbolic, vision, audio), from the disk cache or trained once;
    it carries its data and ground truth (``.data.truth``, ``.val.boxes``,
    ``.val.channels``).

Example::

    def test_my_explainer_on_f02(chaosmining_cases, chaosmining_model, chaosmining):
        case = next(c for c in chaosmining_cases("symbolic") if c.formula == 2)
        trained = chaosmining_model("symbolic", case)
        ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import pytest

from pytest_chaosmining.benchmarking import benchmark_or_none
from pytest_chaosmining.run.threads import one_intra_op_thread
from pytest_chaosmining.suites import get_model_suite, get_spec

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run.session import ChaosminingSession
    from pytest_chaosmining.suites import Case, TrainedModel
    from pytest_chaosmining.verdict.judge import Judge

SESSION_KEY = pytest.StashKey["ChaosminingSession"]()


def get_session(config: pytest.Config) -> ChaosminingSession:
    """The run's session; skips the calling test when the run has no ``--chaosmining``."""
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        pytest.skip("ChaosMining suites run only with --chaosmining")
    return session


@pytest.fixture(scope="session")
def chaosmining(request: pytest.FixtureRequest) -> ChaosminingSession:
    """The ChaosMining session: settings, device, explainers, thresholds, model cache."""
    return get_session(request.config)


@pytest.fixture(scope="session")
def chaosmining_judge(chaosmining: ChaosminingSession) -> Judge:
    """Records values into the report and asserts bars (``require``, ``require_all``)."""
    return chaosmining.judge


@pytest.fixture
def chaosmining_benchmark(request: pytest.FixtureRequest) -> BenchmarkFixture | None:
    """pytest-benchmark's ``benchmark`` where it times; None where it is absent or told
    to skip (a conformance test is never skipped for its timing: it is timed by hand)."""
    return benchmark_or_none(request)


@pytest.fixture(scope="session")
def chaosmining_cases(chaosmining: ChaosminingSession) -> Callable[[str], Sequence[Case]]:
    """``chaosmining_cases(suite)``: the cases suite ``suite`` runs at this tier and seeds."""

    def cases(suite: str) -> Sequence[Case]:
        return get_spec(suite).plan(chaosmining)

    return cases


@pytest.fixture(scope="session")
def chaosmining_model(chaosmining: ChaosminingSession) -> Callable[[str, Case], TrainedModel]:
    """``chaosmining_model(suite, case)``: the trained model of ``case`` (symbolic, vision or audio)."""

    def model(suite: str, case: Case) -> TrainedModel:
        with one_intra_op_thread():  # trained (and cached) as the suites train it
            return get_model_suite(suite).model(chaosmining, case)

    return model
