"""ChaosMining RFEwNA suite (shipped with pytest-chaosmining).

Every registered explainer drives RFEwNA on each dataset; scikit-learn's RFE
with statistical estimators runs beside it.  See ``pytest_chaosmining.suites.rfe.rfewna``,
``pytest_chaosmining.suites.rfe.spec`` (the cases and checks) and ``thresholds.toml``.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer
from pytest_chaosmining.suites.rfe.suite import RfeSuite, judge_statistical

RFE = RfeSuite()


def test_rfewna(chaosmining, rfe_case, explainer_name, chaosmining_benchmark, request):
    """RFEwNA driven by the explainer keeps the informative features: FPrec of the
    selection at least its threshold and at least linear RFE's on the same data
    (where the truth is unknown: test accuracy at least the quality gate)."""
    judge_explainer(chaosmining, RFE, rfe_case, explainer_name, chaosmining_benchmark, request.node)


def test_statistical_rfe(chaosmining, rfe_case, method, request):
    """scikit-learn's RFE with a statistical estimator at the same 50% step: the
    reference methods RFEwNA is compared with.  It must select exactly k
    features and give a finite test score."""
    judge_statistical(chaosmining, RFE, rfe_case, method, request.node)
