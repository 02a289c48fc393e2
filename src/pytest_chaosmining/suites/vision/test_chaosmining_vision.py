"""ChaosMining vision suite (shipped with pytest-chaosmining).

Parametrised over condition (RB/SB × FP/RP) × model × explainer × seed; see
``pytest_chaosmining.suites.vision.spec`` for the cases and checks and ``thresholds.toml``.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer, judge_model
from pytest_chaosmining.suites.vision.suite import VisionSuite

VISION = VisionSuite()


def test_accuracy(chaosmining, vision_case, request):
    """The classifier learned the foreground's class: accuracy at least the tier's gate."""
    judge_model(chaosmining, VISION, vision_case, request.node)


def test_iou(chaosmining, vision_case, explainer_name, chaosmining_benchmark, request):
    """The explainer's top-k pixels outline the foreground: IoU at least its threshold,
    and above the same explainer's IoU on the untrained model; its own merit, and
    against a baseline its drift."""
    judge_explainer(chaosmining, VISION, vision_case, explainer_name, chaosmining_benchmark, request.node)
