"""ChaosMining audio suite (shipped with pytest-chaosmining).

Parametrised over condition (RB/SB × FP/RP) × model × explainer × seed; see
``pytest_chaosmining.suites.audio.spec`` for the cases and checks and ``thresholds.toml``.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer, judge_model
from pytest_chaosmining.suites.audio.suite import AudioSuite

AUDIO = AudioSuite()


def test_accuracy(chaosmining, audio_case, request):
    """The classifier learned the spoken word: accuracy at least the tier's gate."""
    judge_model(chaosmining, AUDIO, audio_case, request.node)


def test_channel_attribution(chaosmining, audio_case, explainer_name, chaosmining_benchmark, request):
    """The explainer finds the speech channel: its top-1 channel hit rate and (where
    calibrated) the speech channel's share of Σ|attribution| at least their
    thresholds, and the hit rate at least ``training_gain`` above the same
    explainer's on the untrained model (it follows what the model learned)."""
    judge_explainer(chaosmining, AUDIO, audio_case, explainer_name, chaosmining_benchmark, request.node)
