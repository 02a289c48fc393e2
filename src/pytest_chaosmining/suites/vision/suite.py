"""The vision suite bound to its heavy half: the digits testbed's models and scoring, and
its example figure (:mod:`.evaluation`)."""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import model_scored
from pytest_chaosmining.suites.vision import evaluation
from pytest_chaosmining.suites.vision.spec import VisionSpec
from pytest_chaosmining.testbeds.digits.bound import DigitModels


class VisionSuite(DigitModels, VisionSpec):
    """The vision suite as a run uses it: its spec, its testbed's models and scoring, its example figure."""

    #: its explainer test scores on the model suites' path
    scored = model_scored
    #: its example figure, from the run's trained models
    example_figure = staticmethod(evaluation.example_figure)
