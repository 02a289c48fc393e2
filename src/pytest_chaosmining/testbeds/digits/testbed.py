"""The digit classifiers as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`):
the vision suite is built on it, and the suites that compose its classifiers (saliency)
reach them through it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.suite_kit.classifier import ClassifierFunctions, ClassifierTestbed
from pytest_chaosmining.testbeds.digits.cases import DISK_SOURCE, SUITE, TrainedVisionModel, plan_cases
from pytest_chaosmining.testbeds.digits.tiers import VISION

if TYPE_CHECKING:
    from pytest_chaosmining.testbeds.digits import scoring
else:  # the heavy half, loaded on first use
    scoring = lazy_module("pytest_chaosmining.testbeds.digits.scoring")


class DigitTestbed(ClassifierTestbed):
    """CNNs trained per background × position condition, scored by the IoU of each
    explainer's top-k box with the true foreground."""

    name = SUITE
    #: the scores compared between models (the first is judged)
    compared = ("iou", "box_share")
    tiers = VISION
    disk_source = DISK_SOURCE
    functions = ClassifierFunctions(plan_cases, scoring)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The model, then the condition."""
        return (case.model, case.condition)

    def chance(self, model: TrainedVisionModel) -> float:
        """IoU of a map that knows nothing: the foreground's 1/49 of the canvas."""
        return 1 / 49


#: the digits testbed
DIGIT_MODELS = DigitTestbed()
