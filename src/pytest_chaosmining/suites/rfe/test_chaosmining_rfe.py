"""ChaosMining RFEwNA suite (shipped with pytest-chaosmining).

Every registered explainer drives RFEwNA on each dataset; scikit-learn's RFE
with statistical estimators runs beside it.  See ``pytest_chaosmining.suites.rfe.rfewna``,
``pytest_chaosmining.suites.rfe.suite`` and ``thresholds.toml``.
"""

from __future__ import annotations

import math

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suites.rfe.suite import LINEAR, SUITE, RfeSuite, load, n_select

RFE = RfeSuite()


def _records(chaosmining, node, case, method: str, explainer: str, result) -> dict:
    """Record everything a selection measured; returns the case fields used."""
    data = load(case)
    cond = {**case.case_fields(), "k": n_select(case, data), "total_features": data.n_features}

    def rec(metric, value, extra=None):
        return Record(SUITE, method, explainer, case.seed, metric, float(value), {**cond, **(extra or {})})

    for metric, value in result.scores.items():
        chaosmining.judge.record(node, rec(metric, value))
    chaosmining.judge.record(node, rec("fit_seconds", result.seconds))
    for n_remaining, score in result.curve:
        chaosmining.judge.record(node, rec("val_score", score, {"n_remaining": n_remaining}))
    return cond


def test_rfewna(chaosmining, rfe_case, explainer_name, chaosmining_benchmark, request):
    """RFEwNA driven by the explainer keeps the informative features: FPrec of the
    selection at least its threshold and at least linear RFE's on the same data
    (where the truth is unknown: test accuracy at least the quality gate)."""
    node = request.node
    chaosmining.judge.tag_test(node, SUITE, explainer_name)
    RFE.run_side_by_side(chaosmining, rfe_case)  # the case's built-ins, once: shared round networks
    with (
        chaosmining.timer(chaosmining_benchmark, SUITE, rfe_case.id, explainer_name),
        explainer_failures(request.config),
    ):
        result = RFE.selection(chaosmining, rfe_case, explainer_name)
    cond = _records(chaosmining, node, rfe_case, "RFEwNA", explainer_name, result)
    tier = chaosmining.settings.tier
    what = f"RFEwNA-{explainer_name} on {rfe_case.id}"
    if result.fprec is None:
        gate = chaosmining.thresholds.quality_gate(SUITE, tier)
        chaosmining.judge.require(
            node,
            Record(SUITE, "RFEwNA", explainer_name, rfe_case.seed, "accuracy", result.scores["accuracy"], cond),
            gate,
            what,
        )
        return
    threshold = chaosmining.thresholds.optional_metric(SUITE, tier, "fprec", rfe_case.dataset, explainer_name)
    fprec = Record(SUITE, "RFEwNA", explainer_name, rfe_case.seed, "fprec", result.fprec, cond)
    linear = RFE.selection(chaosmining, rfe_case, f"RFE-{LINEAR[rfe_case.task]}")
    margin = Record(
        SUITE, "RFEwNA", explainer_name, rfe_case.seed, "fprec_over_linear", result.fprec - linear.fprec, cond
    )
    over_linear = chaosmining.thresholds.optional_metric(
        SUITE, tier, "fprec_over_linear", rfe_case.dataset, explainer_name
    )
    chaosmining.judge.require_all(
        node, [(fprec, threshold, what), (margin, over_linear, f"{what} (linear RFE: FPrec {linear.fprec:.3f})")]
    )


def test_statistical_rfe(chaosmining, rfe_case, method, request):
    """scikit-learn's RFE with a statistical estimator at the same 50% step: the
    reference methods RFEwNA is compared with.  It must select exactly k
    features and give a finite test score."""
    node = request.node
    result = RFE.selection(chaosmining, rfe_case, method)
    cond = _records(chaosmining, node, rfe_case, method, MODEL_LEVEL, result)
    if result.fprec is not None:
        chaosmining.judge.record(node, Record(SUITE, method, MODEL_LEVEL, rfe_case.seed, "fprec", result.fprec, cond))
    assert result.support.sum() == cond["k"], f"{method} kept {result.support.sum()} features, expected {cond['k']}"
    assert all(math.isfinite(v) for v in result.scores.values()), result.scores
