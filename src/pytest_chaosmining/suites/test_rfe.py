"""ChaosMining RFEwNA suite (shipped with pytest-chaosmining).

Every registered explainer drives RFEwNA on each dataset; scikit-learn's RFE
with statistical estimators runs beside it.  See ``pytest_chaosmining.rfe``,
``pytest_chaosmining.rfe_suite`` and ``thresholds.toml``.
"""

from __future__ import annotations

import math

import pytest

from pytest_chaosmining.context import explainer_failures, parametrize
from pytest_chaosmining.plugin import CONTEXT_KEY
from pytest_chaosmining.report import MODEL_LEVEL
from pytest_chaosmining.results import Record
from pytest_chaosmining.rfe_suite import LINEAR, STATISTICAL, SUITE, load, n_select


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    context = metafunc.config.stash.get(CONTEXT_KEY, None)
    if "method" in metafunc.fixturenames:
        cases = context.rfe_cases() if context is not None else []
        metafunc.parametrize(("rfe_case", "method"), [
            pytest.param(case, f"RFE-{m}", id=f"{case.id}-RFE-{m}") for case in cases for m in STATISTICAL[case.task]
        ])
    else:
        parametrize(metafunc, context, "rfe_case", context and context.rfe_cases)


def _records(chaosmining, node, case, method: str, explainer: str, result) -> dict:
    """Record everything a selection measured; returns the condition fields used."""
    data = load(case)
    cond = {**case.condition_fields(), "k": n_select(case, data), "total_features": data.n_features}

    def rec(metric, value, extra=None):
        return Record(SUITE, method, explainer, case.seed, metric, float(value), {**cond, **(extra or {})})

    for metric, value in result.scores.items():
        chaosmining.record(node, rec(metric, value))
    chaosmining.record(node, rec("fit_seconds", result.seconds))
    for n_remaining, score in result.curve:
        chaosmining.record(node, rec("val_score", score, {"n_remaining": n_remaining}))
    return cond


def test_rfewna(chaosmining, rfe_case, explainer_name, request):
    """RFEwNA driven by the explainer keeps the informative features: FPrec of the
    selection at least its threshold and at least linear RFE's on the same data
    (where the truth is unknown: test accuracy at least the quality gate)."""
    node = request.node
    chaosmining.tag_test(node, SUITE, explainer_name)
    with explainer_failures():
        result = chaosmining.rfe_selection(rfe_case, explainer_name)
    cond = _records(chaosmining, node, rfe_case, "RFEwNA", explainer_name, result)
    tier = chaosmining.settings.tier
    what = f"RFEwNA-{explainer_name} on {rfe_case.id}"
    if result.fprec is None:
        gate = chaosmining.thresholds.quality_gate(SUITE, tier)
        chaosmining.require(node, Record(SUITE, "RFEwNA", explainer_name, rfe_case.seed, "accuracy",
                                         result.scores["accuracy"], cond), gate, what)
        return
    threshold = chaosmining.thresholds.optional_metric(SUITE, tier, "fprec", rfe_case.dataset, explainer_name)
    fprec = Record(SUITE, "RFEwNA", explainer_name, rfe_case.seed, "fprec", result.fprec, cond)
    linear = chaosmining.rfe_selection(rfe_case, f"RFE-{LINEAR[rfe_case.task]}")
    margin = Record(SUITE, "RFEwNA", explainer_name, rfe_case.seed, "fprec_over_linear", result.fprec - linear.fprec,
                    cond)
    over_linear = chaosmining.thresholds.optional_metric(SUITE, tier, "fprec_over_linear", rfe_case.dataset,
                                                         explainer_name)
    chaosmining.require_all(node, [(fprec, threshold, what),
                                   (margin, over_linear, f"{what} (linear RFE: FPrec {linear.fprec:.3f})")])


def test_statistical_rfe(chaosmining, rfe_case, method, request):
    """scikit-learn's RFE with a statistical estimator at the same 50% step: the
    reference methods RFEwNA is compared with.  It must select exactly k
    features and give a finite test score."""
    node = request.node
    result = chaosmining.rfe_selection(rfe_case, method)
    cond = _records(chaosmining, node, rfe_case, method, MODEL_LEVEL, result)
    if result.fprec is not None:
        chaosmining.record(node, Record(SUITE, method, MODEL_LEVEL, rfe_case.seed, "fprec", result.fprec, cond))
    assert result.support.sum() == cond["k"], f"{method} kept {result.support.sum()} features, expected {cond['k']}"
    assert all(math.isfinite(v) for v in result.scores.values()), result.scores
