"""ChaosMining vision suite (shipped with pytest-chaosmining).

Parametrised over condition (RB/SB × FP/RP) × model × explainer × seed; see
``pytest_chaosmining.suites.vision.suite`` and ``thresholds.toml``.
"""

from __future__ import annotations

import functools

import pytest

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL
from pytest_chaosmining.suites.properties import drift_noise, own_merit_checks
from pytest_chaosmining.suites.scoring import case_record, drift_checks, scored
from pytest_chaosmining.suites.vision.suite import SUITE, VisionSuite

VISION = VisionSuite()


def test_accuracy(chaosmining, vision_case, request):
    """The classifier learned the foreground's class: accuracy at least the tier's gate."""
    trained = VISION.model(chaosmining, vision_case)
    chaosmining.judge.record(
        request.node, case_record(SUITE, vision_case, MODEL_LEVEL, "train_seconds", trained.train_seconds)
    )
    params = sum(p.numel() for p in trained.model.parameters()) / 1e6
    chaosmining.judge.record(request.node, case_record(SUITE, vision_case, MODEL_LEVEL, "params_m", params))
    tier = chaosmining.settings.tier
    gate = chaosmining.thresholds.quality_gate(SUITE, tier)
    reason = chaosmining.thresholds.unlearned(SUITE, tier, vision_case.model, vision_case.condition)
    if reason and trained.accuracy < gate:
        chaosmining.judge.record(
            request.node, case_record(SUITE, vision_case, MODEL_LEVEL, "accuracy", trained.accuracy)
        )
        pytest.xfail(f"{reason} (accuracy {trained.accuracy:.3f} < gate {gate:.3f})")
    chaosmining.judge.require(
        request.node,
        case_record(SUITE, vision_case, MODEL_LEVEL, "accuracy", trained.accuracy),
        gate,
        f"model {vision_case.id}",
    )


def test_iou(chaosmining, vision_case, explainer_name, chaosmining_benchmark, request):
    """The explainer's top-k pixels outline the foreground: IoU at least its threshold."""
    node, make = request.node, functools.partial(case_record, SUITE, vision_case, explainer_name)
    result = scored(
        chaosmining,
        VISION,
        vision_case,
        explainer_name,
        chaosmining_benchmark,
        node,
        make,
    )
    chaosmining.judge.record(node, make("box_share", result["box_share"]))
    chaosmining.judge.record(node, make("untrained_iou", result["untrained_iou"]))
    tier_name, what = chaosmining.settings.tier, f"{explainer_name} on {vision_case.id}"
    threshold = chaosmining.thresholds.optional_metric(SUITE, tier_name, "iou", vision_case.condition, explainer_name)
    min_gain = chaosmining.thresholds.optional_metric(
        SUITE, tier_name, "training_gain", vision_case.condition, explainer_name
    )
    chaosmining.judge.require_all(
        node,
        [
            (make("iou", result["iou"]), threshold, what),
            (
                make("training_gain", result["training_gain"]),
                min_gain,
                f"{what} (IoU on the untrained model {result['untrained_iou']:.3f}: "
                "does the explainer depend on the model?)",
            ),
            *own_merit_checks(chaosmining, VISION, vision_case, explainer_name, node, make, what),
            *drift_checks(
                chaosmining,
                node,
                SUITE,
                explainer_name,
                result,
                make,
                vision_case.condition,
                what,
                drift_noise(chaosmining, VISION, vision_case, explainer_name),
            ),
        ],
    )
