"""The part every model suite's explainer test shares (symbolic, vision, audio)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_chaosmining.core.verdicts.records import Record
from pytest_chaosmining.judge import explainer_failures

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.session import ChaosminingSession
    from pytest_chaosmining.suites import Case, ModelSuite


class RecordedCase(Protocol):
    """A model suite's case as its records name it."""

    @property
    def model_id(self) -> str: ...

    @property
    def seed(self) -> int: ...

    def case_fields(self) -> dict[str, Any]: ...


def case_record(suite: str, case: RecordedCase, explainer: str, metric: str, value: float) -> Record:
    """A record of ``case`` in ``suite``: its model, seed and reported fields."""
    return Record(suite, case.model_id, explainer, case.seed, metric, float(value), case.case_fields())


def scored(
    chaosmining: ChaosminingSession,
    suite: ModelSuite,
    case: Case,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
    record: Callable[[str, float], Record],
) -> dict[str, object]:
    """Tag the test as ``explainer``'s, skip it when ``case``'s model is below the
    tier's quality gate, score the explainer (its first attribution call timed
    through ``benchmark`` where pytest-benchmark times, else by hand) and record
    its time and peak memory (``record(metric, value)`` makes the records; gated
    against a baseline).  The suite's scores."""
    chaosmining.judge.tag_test(node, suite.name, explainer)
    trained = suite.model(chaosmining, case)
    gate = chaosmining.thresholds.quality_gate(suite.name, chaosmining.settings.tier)
    quality = suite.quality(trained)
    if quality < gate:
        pytest.skip(
            f"model {case.id} is below its quality gate ({suite.quality_metric} {quality:.3f} < {gate:.3f}); "
            "its explainers are not judged on it"
        )
    with (
        chaosmining.timer(benchmark, suite.name, case.id, explainer, record=record) as timer,
        explainer_failures(node.config),
    ):
        result = suite.score(chaosmining, trained, chaosmining.explainers[explainer])
    chaosmining.judge.record_costs(node, timer.cost_or(result["cost"]), record)  # type: ignore[arg-type]
    return result
