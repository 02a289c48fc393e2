"""The saliency guided training suite bound to its heavy halves: the formulas, digits and
audio testbeds' models, paired and scored; the quality test."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

import pytest

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.suite_kit.parametrize import sharded
from pytest_chaosmining.suite_kit.seam import (
    ModelTestbed,
    Recorder,
    Scored,
    TrainedModel,
    number,
)
from pytest_chaosmining.suites.saliency.spec import ALL_SEEDS, SUITE, SaliencyComparison, SaliencySpec
from pytest_chaosmining.testbeds.audio.bound import AUDIO_MODELS
from pytest_chaosmining.testbeds.digits.bound import DIGIT_MODELS
from pytest_chaosmining.testbeds.formulas.bound import FORMULA_MODELS
from pytest_chaosmining.verdict.judge import Check, explainer_failures

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.run_view import RunView

#: the domains compared, each a testbed's models by its model suite's name, in report order
#: (the spec plans from their declarations: its ``DECLARED_TESTBEDS``, the same names in the same order)
TESTBEDS: dict[str, ModelTestbed[Any, Any]] = {t.name: t for t in (FORMULA_MODELS, DIGIT_MODELS, AUDIO_MODELS)}


def guided_bars(run: RunView, domain: str, model: TrainedModel) -> dict[str, float]:
    """The bars every guided model's explanations must clear (metric → threshold):
    the primary score at least ``min_above_chance`` above chance, and the domain
    suite's own model checks (vision, audio: the model-randomisation check) at
    that suite's default bar.  A random or model-ignoring explainer fails them; a
    worse-than-standard one need not (that is the claim, judged separately where it holds)."""
    suite = TESTBEDS[domain]
    section = run.judge.thresholds.section(SUITE, run.plan.tier)
    bars = {suite.compared[0]: suite.chance(model) + float(section["min_above_chance"])}
    for metric in suite.model_checks(run):
        bars[metric] = run.judge.thresholds.default(domain, run.plan.tier, metric)
    return bars


class SaliencySuite(SaliencySpec):
    """The saliency suite as a run uses it: its spec, the three testbeds' models paired and scored."""

    def prepare_models(self, run: RunView, comparison: SaliencyComparison) -> None:
        """Before ``comparison``'s models are first needed: with ensembles on, the
        standard and guided models of the run's comparisons in its domain (every
        seed) train as the domain suite's batched ensembles (once per run)."""
        if not run.runtime.ensemble:
            return
        domain = comparison.domain

        def train() -> bool:
            selected = run.plan.cases(SUITE, sharded(run, SUITE, self.plan(run)))
            cases = [case for c in selected if c.domain == domain for pair in c.pairs() for case in pair]
            TESTBEDS[domain].train_together(run, cases)
            return True

        run.runtime.memo(("saliency-ensembles", domain), train)

    def scored(
        self,
        run: RunView,
        comparison: SaliencyComparison,
        explainer_name: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """The explainer on every pair of ``comparison``: its scores recorded; checks
        that on every seed its score on the guided model clears chance and (vision,
        audio) gains from training and, where ``score_kept`` lists the explainer for
        this comparison, that the mean paired change of the domain's score is at least
        ``−claim_tolerance``."""
        domain = comparison.domain
        explainer = run.explainers[explainer_name]
        gate = run.judge.thresholds.quality_gate(domain, run.plan.tier)
        suite = TESTBEDS[domain]
        checks: list[Check] = []
        changes: dict[str, list[float]] = {m: [] for m in suite.compared}
        self.prepare_models(run, comparison)
        timer = run.runtime.timer(benchmark, SUITE, comparison.id, explainer_name)  # times the first call
        for standard, guided in comparison.pairs():
            models = {standard: suite.model(run, standard), guided: suite.model(run, guided)}
            weak = [f"{c.id} ({suite.quality(m):.3f})" for c, m in models.items() if suite.quality(m) < gate]
            if weak:
                pytest.skip(f"below the {domain} quality gate {gate:.3f}: {', '.join(weak)}; not compared")
            results = {}
            for case, model in models.items():
                with timer, explainer_failures(node.config):
                    results[case] = suite.score(run, model, explainer)
            bars = guided_bars(run, domain, models[guided])
            for metric in suite.compared:
                value: Any = results[standard][metric]
                run.judge.record(node, _record(comparison, standard, explainer_name, metric, value))
                change = results[guided][metric] - value
                changes[metric].append(change)
                run.judge.record(node, _record(comparison, standard, explainer_name, f"{metric}_change", change))
            for metric in dict.fromkeys(suite.compared + tuple(bars)):
                made = _record(comparison, guided, explainer_name, metric, number(results[guided], metric))
                if metric in bars:
                    checks.append((made, bars[metric], f"{explainer_name} on the saliency guided {guided.id}"))
                else:
                    run.judge.record(node, made)
        primary = suite.compared[0]
        section = run.judge.thresholds.section(SUITE, run.plan.tier)
        mean = _record(
            comparison,
            comparison.base,
            explainer_name,
            f"{primary}_change_mean",
            statistics.fmean(changes[primary]),
            ALL_SEEDS,
        )
        if explainer_name in section.get("score_kept", {}).get(comparison.bar_key, []):
            checks.append(
                (
                    mean,
                    -float(section["claim_tolerance"]),
                    f"{explainer_name} on {comparison.id}: {primary} change guided − standard per seed "
                    + ", ".join(f"{c:+.3f}" for c in changes[primary]),
                )
            )
        else:
            run.judge.record(node, mean)  # the claim is not asserted here: our measurements do not support it
        return Scored({}, further=lambda what: checks)


def _record(
    comparison: SaliencyComparison, case: Any, explainer: str, metric: str, value: float, seed: int | None = None
) -> Record:
    fields = {**comparison.case_fields(), "arm": "standard" if case.guide is None else "guided"}
    return Record(SUITE, case.model_id, explainer, case.seed if seed is None else seed, metric, float(value), fields)


def judge_quality(run: RunView, saliency: SaliencySuite, comparison: SaliencyComparison, node: pytest.Item) -> None:
    """Saliency guided training keeps prediction quality: the mean paired change
    (guided − standard) at least ``−quality_margin`` where ``quality_kept`` lists
    the comparison; elsewhere an expected failure with this run's numbers."""
    suite = TESTBEDS[comparison.domain]
    metric = suite.quality_metric
    saliency.prepare_models(run, comparison)
    changes = []
    for standard, guided in comparison.pairs():
        models = {standard: suite.model(run, standard), guided: suite.model(run, guided)}
        for case, model in models.items():
            run.judge.record(node, _record(comparison, case, MODEL_LEVEL, metric, suite.quality(model)))
            seconds = float(getattr(model, "train_seconds"))
            run.judge.record(node, _record(comparison, case, MODEL_LEVEL, "train_seconds", seconds))
        change = suite.quality(models[guided]) - suite.quality(models[standard])
        run.judge.record(node, _record(comparison, standard, MODEL_LEVEL, f"{metric}_change", change))
        changes.append(change)
    section = run.judge.thresholds.section(SUITE, run.plan.tier)
    margin = float(section["quality_margin"])
    mean = _record(
        comparison, comparison.base, MODEL_LEVEL, f"{metric}_change_mean", statistics.fmean(changes), ALL_SEEDS
    )
    per_seed = ", ".join(f"{c:+.3f}" for c in changes)
    if not section.get("quality_kept", {}).get(comparison.bar_key, False):
        run.judge.record(node, mean)
        pytest.xfail(
            f"not asserted: our calibration runs found saliency guided training does not keep {metric} "
            f"within {margin:.3f} on {comparison.bar_key} (this run: mean change {mean.value:+.3f}; per seed "
            f"{per_seed})"
        )
    run.judge.require(
        node, mean, -margin, f"saliency guided training on {comparison.id} ({metric} per seed: {per_seed})"
    )
