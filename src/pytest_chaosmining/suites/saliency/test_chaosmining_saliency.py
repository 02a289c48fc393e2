"""Saliency guided training suite (shipped with pytest-chaosmining).

Parametrised over comparison (symbolic formula / vision or audio condition) ×
explainer; each test trains (or loads) the standard and the saliency guided
model of every seed.  See ``pytest_chaosmining.suites.saliency.suite`` and the
``[saliency.<tier>]`` sections of ``thresholds.toml``.
"""

from __future__ import annotations

import statistics

import pytest

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suites import get_model_suite
from pytest_chaosmining.suites.saliency.suite import SUITE, SaliencySuite, guided_bars

SALIENCY = SaliencySuite()

#: seed of records that summarise all seeds (mean of the paired differences)
ALL_SEEDS = -1


def _record(comparison, case, explainer: str, metric: str, value: float, seed: int | None = None) -> Record:
    fields = {**comparison.case_fields(), "arm": "standard" if case.guide is None else "guided"}
    return Record(SUITE, case.model_id, explainer, case.seed if seed is None else seed, metric, float(value), fields)


def _section(chaosmining) -> dict:
    return chaosmining.thresholds.section(SUITE, chaosmining.settings.tier)


def test_prediction_quality(chaosmining, comparison, request):
    """Saliency guided training keeps prediction quality: the mean paired change
    (guided − standard) is at least ``−quality_margin`` where ``quality_kept``
    lists the comparison (our measurements found the claim holds); elsewhere the
    test xfails with this run's numbers (an XPASS means it held after all)."""
    node, domain = request.node, comparison.domain
    suite = get_model_suite(domain)
    metric = suite.quality_metric
    SALIENCY.prepare_models(chaosmining, comparison)
    changes = []
    for standard, guided in comparison.pairs():
        models = {standard: suite.model(chaosmining, standard), guided: suite.model(chaosmining, guided)}
        for case, model in models.items():
            chaosmining.judge.record(node, _record(comparison, case, MODEL_LEVEL, metric, suite.quality(model)))
            chaosmining.judge.record(node, _record(comparison, case, MODEL_LEVEL, "train_seconds", model.train_seconds))
        change = suite.quality(models[guided]) - suite.quality(models[standard])
        chaosmining.judge.record(node, _record(comparison, standard, MODEL_LEVEL, f"{metric}_change", change))
        changes.append(change)
    section = _section(chaosmining)
    margin = float(section["quality_margin"])
    mean = _record(
        comparison, comparison.base, MODEL_LEVEL, f"{metric}_change_mean", statistics.fmean(changes), ALL_SEEDS
    )
    per_seed = ", ".join(f"{c:+.3f}" for c in changes)
    if not section.get("quality_kept", {}).get(comparison.key, False):
        chaosmining.judge.record(node, mean)
        pytest.xfail(
            f"not asserted: our calibration runs found saliency guided training does not keep {metric} "
            f"within {margin:.3f} on {comparison.key} (this run: mean change {mean.value:+.3f}; per seed "
            f"{per_seed})"
        )
    chaosmining.judge.require(
        node, mean, -margin, f"saliency guided training on {comparison.id} ({metric} per seed: {per_seed})"
    )


def test_attribution(chaosmining, comparison, explainer_name, chaosmining_benchmark, request):
    """On every seed the explainer's score on the guided model clears chance by
    ``min_above_chance`` and (vision, audio) gains from training; where
    ``score_kept`` lists the explainer for this comparison (our
    measurements found the claim holds), the mean paired change of the domain's
    score is at least ``−claim_tolerance``."""
    chaosmining.judge.tag_test(request.node, SUITE, explainer_name)
    node, domain = request.node, comparison.domain
    explainer = chaosmining.explainers[explainer_name]
    gate = chaosmining.thresholds.quality_gate(domain, chaosmining.settings.tier)
    suite = get_model_suite(domain)
    checks, changes = [], {m: [] for m in suite.compared}
    SALIENCY.prepare_models(chaosmining, comparison)
    timer = chaosmining.timer(chaosmining_benchmark, SUITE, comparison.id, explainer_name)  # times the first call
    for standard, guided in comparison.pairs():
        models = {standard: suite.model(chaosmining, standard), guided: suite.model(chaosmining, guided)}
        weak = [f"{c.id} ({suite.quality(m):.3f})" for c, m in models.items() if suite.quality(m) < gate]
        if weak:
            pytest.skip(f"below the {domain} quality gate {gate:.3f}: {', '.join(weak)}; not compared")
        results = {}
        for case, model in models.items():
            with timer, explainer_failures(request.config):
                results[case] = suite.score(chaosmining, model, explainer)
        bars = guided_bars(chaosmining, domain, models[guided])
        for metric in suite.compared:
            chaosmining.judge.record(
                node, _record(comparison, standard, explainer_name, metric, results[standard][metric])
            )
            change = results[guided][metric] - results[standard][metric]
            changes[metric].append(change)
            chaosmining.judge.record(node, _record(comparison, standard, explainer_name, f"{metric}_change", change))
        for metric in dict.fromkeys(suite.compared + tuple(bars)):
            record = _record(comparison, guided, explainer_name, metric, results[guided][metric])
            if metric in bars:
                checks.append((record, bars[metric], f"{explainer_name} on the saliency guided {guided.id}"))
            else:
                chaosmining.judge.record(node, record)
    primary = suite.compared[0]
    section = _section(chaosmining)
    mean = _record(
        comparison,
        comparison.base,
        explainer_name,
        f"{primary}_change_mean",
        statistics.fmean(changes[primary]),
        ALL_SEEDS,
    )
    if explainer_name in section.get("score_kept", {}).get(comparison.key, []):
        checks.append(
            (
                mean,
                -float(section["claim_tolerance"]),
                f"{explainer_name} on {comparison.id}: {primary} change guided − standard per seed "
                + ", ".join(f"{c:+.3f}" for c in changes[primary]),
            )
        )
    else:
        chaosmining.judge.record(node, mean)  # the claim is not asserted here: our measurements do not support it
    chaosmining.judge.require_all(node, checks)
