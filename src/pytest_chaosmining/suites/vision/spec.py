"""The vision suite's spec: its declarations, light (ChaosMining §3.2, A.3); its models and their scoring
are the digits testbed's (declared by :class:`~pytest_chaosmining.testbeds.digits.testbed.DigitTestbed`,
bound by :mod:`pytest_chaosmining.testbeds.digits.bound`).

A :class:`VisionCase` is one trained classifier (condition × model × sizes ×
seed).  Explainers attribute the predicted class of validation images against
a zero baseline; feature ablation uses the 7×7 patch grid.  IoU follows the
paper (Gaussian smoothing, top-k pixels with k = foreground area, their minimal
rectangle) with inclusive extents, so a perfect hit scores exactly 1.0.

A model-randomisation check (Adebayo et al., 2018): the first ``n_check``
images are also attributed on the model as it was before training (same
architecture and seed); the IoU must gain at least the tier's
``training_gain`` from training.  A map that ignores the model (a centre
prior, which would pass FP where the foreground always sits in the centre)
scores the same on both and fails.
"""

from __future__ import annotations

from pytest_chaosmining.core.metrics.catalog import calibrated, drift_metrics, judged, own_merit, reported
from pytest_chaosmining.explainers.context import IMAGE_CLASSIFICATION
from pytest_chaosmining.suite_kit.classifier import ClassifierSuite
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck, training_gain_check
from pytest_chaosmining.suites.vision import report
from pytest_chaosmining.testbeds.digits.cases import SUITE
from pytest_chaosmining.testbeds.digits.testbed import DigitTestbed
from pytest_chaosmining.verdict.rotation import ROTATION


def _condition_key(fields: CaseFields) -> str:
    return str(fields["condition"])


class VisionSpec(DigitTestbed, ClassifierSuite):
    """Vision (ChaosMining §3.2): IoU of each explainer's top-k box with the true
    foreground, on classifiers trained per background × position condition."""

    report = report
    binding = "pytest_chaosmining.suites.vision.suite:VisionSuite"
    name = SUITE
    shapes = (IMAGE_CLASSIFICATION,)
    case_arg = "vision_case"
    score_metric = "iou"
    metrics = (
        *judged("iou", "training_gain", bar_key=_condition_key),
        *judged("accuracy"),
        # no bar of its own: a continuous localisation score compared against a baseline (paired per image)
        *judged("box_share"),
        *drift_metrics(),
        *own_merit("batch_consistency", "target_sensitivity", "truth_sign", "completeness", "equivalence"),
        *reported(ROTATION),
        *own_merit("pattern_completeness"),
        *reported("untrained_iou"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("iou"),
        training_gain_check("IoU", "untrained_iou"),
        ScoreCheck("box_share", "{what}: the share of |attribution| mass in the true box"),
    )
    recorded = ("untrained_iou",)
    module_patterns = True
    example_png = "vision_examples.png"

    #: the condition (``SBRP``): a case's bar key, from its record fields
    bar_key = staticmethod(_condition_key)
