"""The audio suite bound to its heavy half: the audio testbed's models and scoring, and
its example figure (:mod:`.evaluation`)."""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import model_scored
from pytest_chaosmining.suites.audio import evaluation
from pytest_chaosmining.suites.audio.spec import AudioSpec
from pytest_chaosmining.testbeds.audio.bound import AudioModels


class AudioSuite(AudioModels, AudioSpec):
    """The audio suite as a run uses it: its spec, its testbed's models and scoring, its example figure."""

    #: its explainer test scores on the model suites' path
    scored = model_scored
    #: its example figure, from the run's trained models
    example_figure = staticmethod(evaluation.example_figure)
