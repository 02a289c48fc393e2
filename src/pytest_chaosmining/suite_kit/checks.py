"""The one path of an explainer test (score → records → bars → baseline → verdict),
run from what its suite declares (:class:`~pytest_chaosmining.suite_kit.seam.ScoreCheck`,
:class:`~pytest_chaosmining.suite_kit.seam.CheckedSuite`): a suite's test file only
parametrises and calls :func:`judge_explainer`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from pytest_chaosmining.core.verdicts.records import Record

if TYPE_CHECKING:
    import pytest
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.judge import Check
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import Case, CheckedSuite


class RecordedCase(Protocol):
    """A case as its records name it."""

    @property
    def model_id(self) -> str: ...

    @property
    def seed(self) -> int: ...
    def case_fields(self) -> dict[str, Any]: ...


def case_record(suite: str, case: RecordedCase, explainer: str, metric: str, value: float) -> Record:
    """A record of ``case`` in ``suite``: its model, seed and reported fields."""
    return Record(suite, case.model_id, explainer, case.seed, metric, float(value), case.case_fields())


def judge_explainer(
    chaosmining: RunView,
    suite: CheckedSuite,
    case: Case,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
) -> None:
    """An explainer test: the suite scores the explainer on the case; the path records
    the suite's own records and its recorded scores, judges each declared check
    against its bar (looked up under the suite's bar key of the case; a check the
    explainer's score lacks is skipped where it is declared so), then the suite's
    further checks, all in one verdict."""
    make = suite.records(case, explainer)
    scored = suite.scored(chaosmining, case, explainer, benchmark, node, make)
    values = scored.values
    for made in scored.records:
        chaosmining.judge.record(node, made)
    for metric in suite.recorded:
        if metric in values:
            chaosmining.judge.record(node, make(metric, values[metric]))  # type: ignore[arg-type]
    key = suite.bar_key(getattr(case, "case_fields")())
    what = f"{explainer} on {case.id}"
    tier, bars = chaosmining.plan.settings.tier, chaosmining.judge.thresholds
    checks: list[Check] = []
    for check in suite.checks:
        if check.when_present and check.source not in values:
            continue
        record = make(check.metric, values[check.source])  # type: ignore[arg-type]
        samples = values.get(f"{check.source}_samples")
        if isinstance(samples, list):  # the per-sample values its mean is made of (a baseline pairs them)
            record.samples = [float(v) for v in samples]
        if check.bar == "quality_gate":
            bar: float | None = bars.quality_gate(suite.name, tier)
        else:
            bar = bars.optional_metric(suite.name, tier, check.metric, key, explainer)
        if bar is None and check.unbarred_recorded:
            chaosmining.judge.record(node, record)
            continue
        checks.append((record, bar, check.message.format(what=what, **values)))
    checks += suite.more_checks(chaosmining, case, explainer, node, make, what, scored)
    chaosmining.judge.require_all(node, checks)
