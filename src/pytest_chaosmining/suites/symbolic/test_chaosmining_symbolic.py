"""ChaosMining symbolic-function suite (shipped with pytest-chaosmining).

Parametrised over formula × noise condition × model × explainer × seed; see
``pytest_chaosmining.suites.symbolic.suite`` for the cases and ``thresholds.toml`` for
the bars.
"""

from __future__ import annotations

import functools

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL
from pytest_chaosmining.suites.properties import drift_noise, own_merit_checks
from pytest_chaosmining.suites.scoring import case_record, drift_checks, scored
from pytest_chaosmining.suites.symbolic.suite import SUITE, SymbolicSuite

SYMBOLIC = SymbolicSuite()


def test_prediction_quality(chaosmining, symbolic_case, request):
    """The model learned its formula: prediction UScore at least the tier's quality gate."""
    trained = SYMBOLIC.model(chaosmining, symbolic_case)
    chaosmining.judge.record(
        request.node, case_record(SUITE, symbolic_case, MODEL_LEVEL, "train_seconds", trained.train_seconds)
    )
    gate = chaosmining.thresholds.quality_gate(SUITE, chaosmining.settings.tier)
    record = case_record(SUITE, symbolic_case, MODEL_LEVEL, "uscore", trained.uscore)
    chaosmining.judge.require(request.node, record, gate, f"model {symbolic_case.id}")


def test_fprec(chaosmining, symbolic_case, explainer_name, chaosmining_benchmark, request):
    """The explainer ranks the truly predictive features on top: FPrec at least its
    threshold, and at least ``training_gain`` above the same explainer's FPrec on
    the untrained model (a ranking that ignores the model gains nothing)."""
    node, make = request.node, functools.partial(case_record, SUITE, symbolic_case, explainer_name)
    result = scored(
        chaosmining,
        SYMBOLIC,
        symbolic_case,
        explainer_name,
        chaosmining_benchmark,
        node,
        make,
    )
    if "attr_uscore" in result:
        chaosmining.judge.record(node, make("attr_uscore", result["attr_uscore"]))
    chaosmining.judge.record(node, make("untrained_fprec", result["untrained_fprec"]))
    tier, key, what = (
        chaosmining.settings.tier,
        f"f{symbolic_case.formula:02d}",
        f"{explainer_name} on {symbolic_case.id}",
    )
    bars = chaosmining.thresholds
    checks = [
        (
            make("fprec", result["fprec"]),
            bars.optional_metric(SUITE, tier, "fprec", key, explainer_name),
            what,
        ),
        (
            make("training_gain", result["training_gain"]),
            bars.optional_metric(SUITE, tier, "training_gain", key, explainer_name),
            f"{what} (FPrec on the untrained model {result['untrained_fprec']:.3f}: "
            "does the explainer depend on the "
            "model?)",
        ),
    ]
    if "sign_agreement" in result:  # it declares completeness: its sums carry the sign of f(x) - f(0)
        checks.append(
            (
                make("sign_agreement", result["sign_agreement"]),
                bars.optional_metric(SUITE, tier, "sign_agreement", key, explainer_name),
                f"{what} (it declares completeness: do its attributions sum with the sign of f(x) - f(0)? "
                "0.5 is a map that ignores the sample, 0 a flipped sign)",
            )
        )
    if "truth_sign" in result:  # a signed map: its signs follow the formula's where every exact attribution agrees
        checks.append(
            (
                make("truth_sign", result["truth_sign"]),
                bars.optional_metric(SUITE, tier, "truth_sign", key, explainer_name),
                f"{what} (its map is signed: does a feature that raises the output get a positive attribution, "
                "one that lowers it a negative one? 0.5 is a map of one sign, 0 a flipped sign)",
            )
        )
    if "completeness" in result:  # it declares completeness: its sums are f(x) - f(0) in size too
        checks.append(
            (
                make("completeness", result["completeness"]),
                bars.optional_metric(SUITE, tier, "completeness", key, explainer_name),
                f"{what} (it declares completeness: 1 - mean |sum of attributions - (f(x) - f(0))| / mean "
                "|f(x) - f(0)|; a rescaled or flipped map scores 0 or below)",
            )
        )
    checks += own_merit_checks(chaosmining, SYMBOLIC, symbolic_case, explainer_name, node, make, what)
    noise = drift_noise(chaosmining, SYMBOLIC, symbolic_case, explainer_name)
    checks += drift_checks(chaosmining, node, SUITE, explainer_name, result, make, key, what, noise)
    chaosmining.judge.require_all(node, checks)
