"""ChaosMining symbolic-function suite (shipped with pytest-chaosmining).

Parametrised over formula × noise condition × model × explainer × seed; see
``pytest_chaosmining.symbolic_suite`` for the cases and ``thresholds.toml`` for
the bars.
"""

from __future__ import annotations

import pytest

from pytest_chaosmining.context import explainer_failures, parametrize
from pytest_chaosmining.plugin import CONTEXT_KEY
from pytest_chaosmining.report import MODEL_LEVEL
from pytest_chaosmining.results import Record
from pytest_chaosmining.symbolic_suite import SUITE, evaluate


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    context = metafunc.config.stash.get(CONTEXT_KEY, None)
    parametrize(metafunc, context, "symbolic_case", context and context.symbolic_cases)


def _record(case, explainer: str, metric: str, value: float) -> Record:
    return Record(SUITE, case.model_id, explainer, case.seed, metric, float(value), case.condition())


def test_prediction_quality(chaosmining, symbolic_case, request):
    """The model learned its formula: prediction UScore at least the tier's quality gate."""
    trained = chaosmining.symbolic_model(symbolic_case)
    chaosmining.record(request.node, _record(symbolic_case, MODEL_LEVEL, "train_seconds", trained.train_seconds))
    gate = chaosmining.thresholds.quality_gate(SUITE, chaosmining.settings.tier)
    record = _record(symbolic_case, MODEL_LEVEL, "uscore", trained.uscore)
    chaosmining.require(request.node, record, gate, f"model {symbolic_case.id}")


def test_fprec(chaosmining, symbolic_case, explainer_name, request):
    """The explainer ranks the truly predictive features on top: FPrec at least its
    threshold, and at least ``training_gain`` above the same explainer's FPrec on
    the untrained model (a ranking that ignores the model gains nothing)."""
    chaosmining.tag_test(request.node, SUITE, explainer_name)
    trained = chaosmining.symbolic_model(symbolic_case)
    gate = chaosmining.thresholds.quality_gate(SUITE, chaosmining.settings.tier)
    if trained.uscore < gate:
        pytest.skip(
            f"model {symbolic_case.id} is below its quality gate (prediction UScore {trained.uscore:.3f} < "
            f"{gate:.3f}); its explainers are not judged on it"
        )
    with explainer_failures():
        result = evaluate(trained, chaosmining.explainers[explainer_name], chaosmining.device)
    node = request.node
    chaosmining.record(node, _record(symbolic_case, explainer_name, "time_ms", result["cost"].time_ms))
    chaosmining.record(node, _record(symbolic_case, explainer_name, "peak_mem_mb", result["cost"].peak_mem_mb))
    if "attr_uscore" in result:
        chaosmining.record(node, _record(symbolic_case, explainer_name, "attr_uscore", result["attr_uscore"]))
    chaosmining.record(node, _record(symbolic_case, explainer_name, "untrained_fprec", result["untrained_fprec"]))
    tier, key, what = chaosmining.settings.tier, f"f{symbolic_case.formula:02d}", f"{explainer_name} on {symbolic_case.id}"
    bars = chaosmining.thresholds
    chaosmining.require_all(node, [
        (_record(symbolic_case, explainer_name, "fprec", result["fprec"]),
         bars.optional_metric(SUITE, tier, "fprec", key, explainer_name), what),
        (_record(symbolic_case, explainer_name, "training_gain", result["training_gain"]),
         bars.optional_metric(SUITE, tier, "training_gain", key, explainer_name),
         f"{what} (FPrec on the untrained model {result['untrained_fprec']:.3f}: does the explainer depend on the "
         "model?)"),
    ])
