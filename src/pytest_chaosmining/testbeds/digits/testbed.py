"""The digit classifiers as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`),
declared: name, tiers, data source, case planning (light; :mod:`.bound` binds its scoring)."""

from __future__ import annotations

from typing import Any

from pytest_chaosmining.suite_kit.classifier import ClassifierTestbed
from pytest_chaosmining.testbeds.digits.cases import DISK_SOURCE, SUITE, TrainedVisionModel, plan_cases
from pytest_chaosmining.testbeds.digits.tiers import VISION


class DigitTestbed(ClassifierTestbed):
    """CNNs trained per background × position condition, scored by the IoU of each
    explainer's top-k box with the true foreground."""

    name = SUITE
    #: the scores compared between models (the first is judged)
    compared = ("iou", "box_share")
    tiers = VISION
    disk_source = DISK_SOURCE
    plan_cases = staticmethod(plan_cases)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The model, then the condition."""
        return (case.model, case.condition)

    def chance(self, model: TrainedVisionModel) -> float:
        """IoU of a map that knows nothing: the foreground's 1/49 of the canvas."""
        return 1 / 49
