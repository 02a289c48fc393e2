"""What the model suites' tests share (symbolic, vision, audio): the model test
(quality against the tier's gate, :func:`judge_model`) and their half of the
explainer test's generic path (:class:`ModelScoring`: the gate, the timed score,
the own-merit and drift checks)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_chaosmining.core.metrics.properties import NOISE_FACTOR
from pytest_chaosmining.core.verdicts.baseline import MOVED
from pytest_chaosmining.core.verdicts.records import FINGERPRINT, MODEL_LEVEL, Record
from pytest_chaosmining.judge import Check, explainer_failures
from pytest_chaosmining.suite_kit.checks import case_record
from pytest_chaosmining.suite_kit.merit import drift_noise, own_merit_checks
from pytest_chaosmining.suite_kit.seam import Scored

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import Case, ModelSuite


def scored(
    chaosmining: RunView,
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
    gate = chaosmining.judge.thresholds.quality_gate(suite.name, chaosmining.plan.settings.tier)
    quality = suite.quality(trained)
    if quality < gate:
        pytest.skip(
            f"model {case.id} is below its quality gate ({suite.quality_metric} {quality:.3f} < {gate:.3f}); "
            "its explainers are not judged on it"
        )
    with (
        chaosmining.runtime.timer(benchmark, suite.name, case.id, explainer, record=record) as timer,
        explainer_failures(node.config),
    ):
        result = suite.score(chaosmining, trained, chaosmining.explainers[explainer])
    chaosmining.judge.record_costs(node, timer.cost_or(result["cost"]), record)  # type: ignore[arg-type]
    return result


def drift_checks(
    chaosmining: RunView,
    node: pytest.Item,
    suite: str,
    explainer: str,
    result: dict[str, object],
    record: Callable[[str, float], Record],
    where: str,
    what: str,
    noise: Callable[[], float] | None = None,
) -> list[Check]:
    """Record the fingerprint of ``explainer``'s maps (results.json keeps it); against
    a baseline that kept one for the same case, the check that the maps did not move
    beyond the calibrated ``map_agreement`` bar at ``where`` (the random control's
    maps are noise: recorded, never compared).  Maps that moved beyond the bar are
    measured against the explainer's own noise on the case (``noise()``: how well two
    of its draws agree, 1 when deterministic): a stochastic explainer's maps may move
    :data:`~pytest_chaosmining.core.metrics.properties.NOISE_FACTOR` times as far as
    its draws lie apart, so a reseeded SmoothGrad passes and a changed one does not."""
    maps = result.get("fingerprint")
    if not isinstance(maps, list):
        return []
    kept = record(FINGERPRINT, len(maps))
    kept.maps = maps
    chaosmining.judge.record(node, kept)
    baseline = chaosmining.judge.baseline
    moved = baseline.moved(kept) if baseline is not None else None
    if moved is None or chaosmining.judge.is_control(explainer):
        return []
    agreement, worst, least = moved
    bar = chaosmining.judge.thresholds.optional_metric(
        suite, chaosmining.plan.settings.tier, "map_agreement", where, explainer
    )
    allowance = ""
    if bar is not None and agreement < bar and noise is not None:
        own = noise()
        if own < 1.0:
            bar = min(bar, 1.0 - NOISE_FACTOR * (1.0 - own))
            allowance = f"; its own draws agree to {own:.4f}, so the bar allows {NOISE_FACTOR:g} x that noise"
    if bar is not None and MOVED > agreement >= bar:
        chaosmining.judge.note_change(
            node,
            f"{what}: its maps moved from the baseline's (cosine of the feature masses {agreement:.4f}, within the "
            f"bar {bar:g}{allowance}): changed; if the change is intended, make this run the baseline",
        )
    return [
        (
            record("map_agreement", agreement),
            bar,
            f"{what}: its maps moved from the baseline's (cosine of the feature masses {agreement:.4f}; "
            f"explained sample {worst} moved most, {least:.4f}; baseline {baseline.source}{allowance})",  # type: ignore[union-attr]
        )
    ]


def judge_model(chaosmining: RunView, suite: ModelSuite, case: Case, node: pytest.Item) -> None:
    """A model suite's model test: the model's quality at least the tier's gate (an
    expected failure where the bars declare the model not expected to learn), with the
    suite's :attr:`~pytest_chaosmining.suite_kit.seam.ModelSuite.model_records`."""
    trained = suite.model(chaosmining, case)
    make = functools.partial(case_record, suite.name, case, MODEL_LEVEL)  # type: ignore[arg-type]
    made = {
        "train_seconds": lambda: float(getattr(trained, "train_seconds")),
        "params_m": lambda: sum(p.numel() for p in getattr(trained.model, "parameters")()) / 1e6,
    }
    for metric in suite.model_records:
        chaosmining.judge.record(node, make(metric, made[metric]()))
    tier = chaosmining.plan.settings.tier
    gate = chaosmining.judge.thresholds.quality_gate(suite.name, tier)
    quality = suite.quality(trained)
    keys = suite.unlearned_keys(case)
    reason = chaosmining.judge.thresholds.unlearned(suite.name, tier, *keys) if keys else None
    if reason and quality < gate:
        chaosmining.judge.record(node, make(suite.quality_metric, quality))
        pytest.xfail(f"{reason} ({suite.quality_metric} {quality:.3f} < gate {gate:.3f})")
    chaosmining.judge.require(node, make(suite.quality_metric, quality), gate, f"model {case.id}")


class ModelScoring:
    """The explainer test of a model suite on the generic path: the model's gate, the
    timed score, then the own-merit checks and, against a baseline, the drift check."""

    name: str

    def scored(
        self,
        session: RunView,
        case: Case,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Callable[[str, float], Record],
    ) -> Scored:
        return Scored(scored(session, self, case, explainer, benchmark, node, record))  # type: ignore[arg-type]

    def more_checks(
        self,
        session: RunView,
        case: Case,
        explainer: str,
        node: pytest.Item,
        record: Callable[[str, float], Record],
        what: str,
        scored: Scored,
    ) -> list[Check]:
        suite: ModelSuite = self  # type: ignore[assignment]
        key = suite.bar_key(getattr(case, "case_fields")())
        checks = own_merit_checks(session, suite, case, explainer, node, record, what)
        noise = drift_noise(session, suite, case, explainer)
        return checks + drift_checks(session, node, self.name, explainer, dict(scored.values), record, key, what, noise)
