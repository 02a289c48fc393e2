"""The one path from an explainer's score to its verdict, top to bottom.

:func:`judge_explainer` is every judged explainer test: the suite scores the
explainer (:meth:`~.seam.CheckedSuite.scored`: a model suite through
:func:`model_scored`, a suite with a protocol of its own, such as IteROAR's chain
or BAM's model pairs, its own way, timed by :func:`timed_score`); the path records
what the scoring made and the suite's recorded scores, judges each declared
:class:`~.seam.ScoreCheck` against its bar, adds the checks the scoring asks for
beside them (a model suite's own merit and, against a baseline, its drift:
:func:`~pytest_chaosmining.verdict.drift.drift_checks`) and gives one verdict (the judge adds the baseline's rules).
:func:`judge_model` is a model suite's model test."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.records import MODEL_LEVEL, NOISE_SOURCE, TARGETS
from pytest_chaosmining.suite_kit import merit, module_rules
from pytest_chaosmining.suite_kit.seam import (
    COST,
    Case,
    CaseT,
    CheckedSuite,
    ModelSuite,
    ModelT,
    RecordedCase,
    Recorder,
    Scored,
    case_record,
    number,
    samples_of,
)
from pytest_chaosmining.verdict.drift import drift_checks
from pytest_chaosmining.verdict.judge import Check, explainer_failures, report_only_reason

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView

#: a suite's scores of an explainer
ScoresT = TypeVar("ScoresT", bound=Mapping[str, object])


def judge_explainer(
    run: RunView,
    suite: CheckedSuite,
    case: RecordedCase,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
) -> None:
    """An explainer test: tag it as ``explainer``'s; the suite scores the explainer on
    ``case``; record the scoring's records and the suite's recorded scores; judge each
    declared check against its bar (looked up under the suite's bar key of the case;
    a check the score lacks is left out where it is declared so), then the checks the
    scoring asks for beside them, all in one verdict."""
    make = suite.records(case, explainer)
    run.judge.tag_test(node, suite.name, explainer)
    scored = suite.scored(run, case, explainer, benchmark, node, make)
    values = scored.values
    for made in scored.records:
        run.judge.record(node, made)
    for metric in suite.recorded:
        if metric in values:
            run.judge.record(node, make(metric, number(values, metric)))
    key = suite.bar_key(case.case_fields())
    what = f"{explainer} on {case.id}"
    tier, bars = run.plan.tier, run.judge.thresholds
    sampler = merit.judged_as_sampler(run, suite.name, explainer, values.get(NOISE_SOURCE))
    checks: list[Check] = []
    for check in suite.checks:
        if check.when_present and check.source not in values:
            continue
        record = make(check.metric, number(values, check.source))
        samples = values.get(samples_of(check.source))
        if isinstance(samples, list):  # the per-sample values its mean is made of (a baseline pairs them)
            record.samples = [float(v) for v in samples]
            labels = values.get(TARGETS)
            if isinstance(labels, list) and len(labels) >= len(samples):  # each sample's class (a failure names them)
                record.labels = [int(c) for c in labels[: len(samples)]]
        if check.bar == "quality_gate":
            bar: float | None = bars.quality_gate(suite.name, tier)
        else:
            bar = bars.optional_metric(suite.name, tier, check.metric, key, explainer, stochastic=sampler)
        checks.append((record, bar, check.message.format(what=what, **values)))
    uncalibrated = suite.uncalibrated(run, case)
    if scored.further is not None and uncalibrated is None:  # a report-only case is recorded, not judged
        checks += scored.further(what)
    run.judge.require_all(node, checks, uncalibrated)


def timed_score(
    run: RunView,
    suite: str,
    case: Case,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
    score: Callable[[Explainer], ScoresT],
    record: Recorder | None = None,
) -> ScoresT:
    """``score(explainer)``, its first attribution call timed through ``benchmark`` where
    pytest-benchmark times, else by hand; with ``record``, its time and peak memory
    recorded (gated against a baseline) from the score's ``cost`` where the timer
    measured none (replayed, where a result of an earlier run stood in: never gated
    against a measured one)."""
    with (
        run.runtime.timer(
            benchmark, suite, case.id, explainer, recheck=None if record is None else run.judge.cost_recheck(record)
        ) as timer,
        explainer_failures(node.config),
    ):
        result = score(run.explainers[explainer])
    if record is not None:
        cost = result[COST]
        if not isinstance(cost, Cost):
            raise TypeError(f"the {suite} score's cost is {type(cost).__name__}, not a Cost")
        run.judge.record_costs(node, timer.cost_or(cost), record, measured=timer.measured)
    return result


def model_scored(
    suite: ModelSuite[CaseT, ModelT],
    run: RunView,
    case: CaseT,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
    record: Recorder,
) -> Scored:
    """A model suite's scoring, its :meth:`~.seam.CheckedSuite.scored` (a model suite
    declares ``scored = model_scored``): skipped where ``case``'s model is below the
    tier's quality gate; the suite's scores of the explainer, timed, with its costs;
    then its own-merit checks, its checks on the module patterns (where the suite declares
    them) and, against a baseline, the drift check."""
    trained = suite.model(run, case)
    gate = run.judge.thresholds.quality_gate(suite.name, run.plan.tier)
    quality = suite.quality(trained)
    if quality < gate and suite.uncalibrated(run, case) is None:  # a report-only case records its explainers
        pytest.skip(
            f"model {case.id} is below its quality gate ({suite.quality_metric} {quality:.3f} < {gate:.3f}); "
            "its explainers are not judged on it"
        )
    values = timed_score(
        run, suite.name, case, explainer, benchmark, node, lambda e: suite.score(run, trained, e), record
    )
    key = suite.bar_key(case.case_fields())

    def further(what: str) -> list[Check]:
        checks = merit.own_merit_checks(run, suite, case, explainer, node, record, what)
        checks += module_rules.pattern_checks(run, suite, case, explainer, node, record, what)
        noise = merit.drift_noise(run, suite, case, explainer)
        declared = run.explainers[explainer]
        return checks + drift_checks(
            run.judge,
            node,
            suite.name,
            explainer,
            values,
            record,
            key,
            what,
            noise,
            declared.size_promised,
            declared.stochastic,
            merit.retargeting(run, suite, case, explainer),
        )

    return Scored(values, further=further)


def judge_model(run: RunView, suite: ModelSuite[CaseT, ModelT], case: CaseT, node: pytest.Item) -> None:
    """A model suite's model test: the model's quality at least the tier's gate (an
    expected failure where the bars declare the model not expected to learn), with the
    suite's :attr:`~.seam.ModelSuite.model_records`."""
    trained = suite.model(run, case)
    make = functools.partial(case_record, suite.name, case, MODEL_LEVEL)
    made = {
        "train_seconds": lambda: float(getattr(trained, "train_seconds")),
        "params_m": lambda: sum(p.numel() for p in getattr(trained.model, "parameters")()) / 1e6,
    }
    for metric in suite.model_records:
        run.judge.record(node, make(metric, made[metric]()))
    tier = run.plan.tier
    gate = run.judge.thresholds.quality_gate(suite.name, tier)
    quality = suite.quality(trained)
    uncalibrated = suite.uncalibrated(run, case)
    if uncalibrated is not None:
        run.judge.record(node, make(suite.quality_metric, quality))
        pytest.skip(report_only_reason(f"model {case.id}", uncalibrated))
    keys = suite.unlearned_keys(case)
    reason = run.judge.thresholds.unlearned(suite.name, tier, *keys) if keys else None
    if reason and quality < gate:
        run.judge.record(node, make(suite.quality_metric, quality))
        pytest.xfail(f"{reason} ({suite.quality_metric} {quality:.3f} < gate {gate:.3f})")
    run.judge.require(node, make(suite.quality_metric, quality), gate, f"model {case.id}")
