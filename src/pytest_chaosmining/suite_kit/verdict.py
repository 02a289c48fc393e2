"""The one path from an explainer's score to its verdict, top to bottom.

:func:`judge_explainer` is every judged explainer test: the suite scores the
explainer (:meth:`~.seam.CheckedSuite.scored`: a model suite through
:func:`model_scored`, a suite with a protocol of its own, such as IteROAR's chain
or BAM's model pairs, its own way, timed by :func:`timed_score`); the path records
what the scoring made and the suite's recorded scores, judges each declared
:class:`~.seam.ScoreCheck` against its bar, adds the checks the scoring asks for
beside them (a model suite's own merit and, against a baseline, its drift:
:func:`drift_checks`) and gives one verdict (the judge adds the baseline's rules).
:func:`judge_model` is a model suite's model test."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import pytest

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.metrics.properties import NOISE_FACTOR
from pytest_chaosmining.core.verdicts.baseline import MOVED
from pytest_chaosmining.core.verdicts.records import FINGERPRINT, MODEL_LEVEL
from pytest_chaosmining.judge import Check, explainer_failures, report_only_reason
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

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.metrics.drift import DrawNoise
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit import merit
else:  # the own-merit checks (torch), loaded on first use
    merit = lazy_module("pytest_chaosmining.suite_kit.merit")

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
    checks: list[Check] = []
    for check in suite.checks:
        if check.when_present and check.source not in values:
            continue
        record = make(check.metric, number(values, check.source))
        samples = values.get(samples_of(check.source))
        if isinstance(samples, list):  # the per-sample values its mean is made of (a baseline pairs them)
            record.samples = [float(v) for v in samples]
        if check.bar == "quality_gate":
            bar: float | None = bars.quality_gate(suite.name, tier)
        else:
            bar = bars.optional_metric(suite.name, tier, check.metric, key, explainer)
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
    measured none."""
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
        run.judge.record_costs(node, timer.cost_or(cost), record)
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
    then its own-merit checks and, against a baseline, the drift check."""
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
        noise = merit.drift_noise(run, suite, case, explainer)
        return checks + drift_checks(run, node, suite.name, explainer, values, record, key, what, noise)

    return Scored(values, further=further)


#: one sample's map that agrees less than this with the baseline's has nothing of it left (an empty
#: map agrees 0): a sampler's floor for one sample, whatever its draws do
UNRELATED = 0.05


def drift_checks(
    run: RunView,
    node: pytest.Item,
    suite: str,
    explainer: str,
    result: Mapping[str, object],
    record: Recorder,
    where: str,
    what: str,
    noise: Callable[[], DrawNoise] | None = None,
) -> list[Check]:
    """Record the fingerprint of ``explainer``'s maps (results.json keeps it); against
    a baseline that kept one for the same case, two checks (the random control's maps
    are noise: recorded, never compared):

    - ``map_agreement``: the maps' mean agreement with the baseline's over every
      explained sample, at least the calibrated bar at ``where`` (a change to every map);
    - ``sample_agreement``: the agreement of the sample that moved most but the
      allowed few (``[<suite>.<tier>.sample_drift]``), at least its floor (a change
      confined to some inputs: one class, a few samples, which the mean dilutes).

    Maps that moved beyond either bar are measured against the explainer's own noise
    on the case (``noise()``: how well two of its draws agree, 1 when deterministic): a
    stochastic explainer's maps may move on average
    :data:`~pytest_chaosmining.core.metrics.properties.NOISE_FACTOR` times as far as its
    draws lie apart, plus one sample entirely (one sample's draws of a sampler have a heavy
    tail: a reseed moved single samples' maps to 0.18 where 16 draws agreed to 0.99), and
    each sample down to :data:`UNRELATED`; so a reseeded SmoothGrad passes and a changed
    one, or one whose maps of some inputs are gone, does not."""
    maps = result.get(FINGERPRINT)
    if not isinstance(maps, list):
        return []
    kept = record(FINGERPRINT, len(maps))
    kept.maps = maps
    run.judge.record(node, kept)
    baseline = run.judge.baseline
    moved = baseline.moved(kept) if baseline is not None else None
    if baseline is None or moved is None or run.judge.is_control(explainer):
        return []
    tier = run.plan.tier
    bar = run.judge.thresholds.optional_metric(suite, tier, "map_agreement", where, explainer)
    rule = run.judge.thresholds.sample_drift(suite, tier)
    verdict = rule.verdict(moved) if rule is not None else None
    allowance = ""
    beyond = (bar is not None and moved.mean < bar) or (verdict is not None and verdict[0] < verdict[1])
    if beyond and noise is not None:
        own = noise()
        if own.mean < MOVED:  # a sampler: one sample's draws may lie far apart (a heavy tail)
            n = len(moved.cosines)
            bar = None if bar is None else min(bar, 1.0 - NOISE_FACTOR * (1.0 - own.mean) - 1.0 / n)
            verdict = rule.verdict(moved, [UNRELATED] * n) if rule is not None else None
            allowance = (
                f"; its own draws agree to {own.mean:.4f} (one sample to {own.sample:.4f}), so the mean's bar allows "
                f"{NOISE_FACTOR:g} x that noise and one sample moved entirely, and one sample's floor is {UNRELATED:g}"
            )
    if bar is not None and MOVED > moved.mean >= bar and (verdict is None or verdict[0] >= verdict[1]):
        run.judge.note_change(
            node,
            f"{what}: its maps moved from the baseline's (cosine of the feature masses {moved.mean:.4f}, within the "
            f"bar {bar:g}; explained sample {moved.worst} moved most, {moved.least:.4f}{allowance}): changed; if "
            "the change is intended, make this run the baseline",
        )
    source = f"baseline {baseline.source}{allowance}"
    checks: list[Check] = [
        (
            record("map_agreement", moved.mean),
            bar,
            f"{what}: its maps moved from the baseline's (mean cosine of the feature masses over "
            f"{len(moved.cosines)} explained samples {moved.mean:.4f}; sample {moved.worst} moved most, "
            f"{moved.least:.4f}; {source})",
        )
    ]
    if rule is not None and verdict is not None:
        value, floor, lost = verdict
        checks.append(
            (
                record("sample_agreement", value),
                floor,
                f"{what}: the maps of {len(lost)} of {len(moved.cosines)} explained samples moved from the "
                f"baseline's beyond the per-sample floor {rule.floor:g} (at most {rule.allowed} may: a change confined "
                f"to some inputs; samples {_listed(lost)}; {source})",
            )
        )
    return checks


def _listed(indices: list[int], most: int = 12) -> str:
    """``indices`` as a short list (the first ``most``, then how many more)."""
    shown = ", ".join(str(i) for i in indices[:most])
    return shown + (f" and {len(indices) - most} more" if len(indices) > most else "") if indices else "none"


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
