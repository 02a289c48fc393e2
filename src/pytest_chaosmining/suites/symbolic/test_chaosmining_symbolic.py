"""ChaosMining symbolic-function suite (shipped with pytest-chaosmining).

Parametrised over formula × noise condition × model × explainer × seed; see
``pytest_chaosmining.suites.symbolic.spec`` for the cases and checks and
``thresholds.toml`` for the bars.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer, judge_model
from pytest_chaosmining.suites.symbolic.suite import SymbolicSuite

SYMBOLIC = SymbolicSuite()


def test_prediction_quality(chaosmining, symbolic_case, request):
    """The model learned its formula: prediction UScore at least the tier's quality gate."""
    judge_model(chaosmining, SYMBOLIC, symbolic_case, request.node)


def test_fprec(chaosmining, symbolic_case, explainer_name, chaosmining_benchmark, request):
    """The explainer ranks the truly predictive features on top: FPrec at least its
    threshold, and at least ``training_gain`` above the same explainer's FPrec on
    the untrained model (a ranking that ignores the model gains nothing); the sign
    and completeness checks where the explainer declares them, its own merit, and
    against a baseline its drift."""
    judge_explainer(chaosmining, SYMBOLIC, symbolic_case, explainer_name, chaosmining_benchmark, request.node)
