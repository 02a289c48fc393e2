"""The audio suite's spec: its declarations, light (ChaosMining §3.3, A.4); its models and their scoring
are the audio testbed's (declared by :class:`~pytest_chaosmining.testbeds.audio.testbed.AudioTestbed`,
bound by :mod:`pytest_chaosmining.testbeds.audio.bound`).

An :class:`AudioCase` is one trained sequence classifier (condition × model ×
sizes × seed).  Explainers attribute the predicted class of validation clips
against a zero baseline, in eval mode, with cuDNN off for recurrent models
(cuDNN's RNN backward refuses eval mode).  Feature ablation uses a grid of
channel × time segments (5 segments per channel), so that it ablates
pieces of channels rather than single samples.

Two scores per clip, from the per-channel mass ``m_c = Σ_t |a_{c,t}|``:

- ``channel_share``: ``m_true / Σ_c m_c``, the paper's audio "FPrec"
  (chance = 1 / channels; an all-zero map scores 0);
- ``top1_hit``: 1 when the speech channel has strictly the largest mass (ties count as misses).

A model-randomisation check (Adebayo et al., 2018) guards against explainers
that ignore the model: the same clips are attributed on the model as it was
before training (same architecture, same seed, untrained), and
``training_gain`` = top-1 hit rate (trained) − top-1 hit rate (untrained)
must reach the tier's ``training_gain``.  An explainer that reads the
truth off the data or always favours the channel where FP puts the speech
scores the same on both models and fails.
"""

from __future__ import annotations

from pytest_chaosmining.core.metrics.catalog import calibrated, drift_metrics, judged, own_merit, reported
from pytest_chaosmining.explainers.context import AUDIO_CLASSIFICATION
from pytest_chaosmining.suite_kit.classifier import ClassifierSuite
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck, training_gain_check
from pytest_chaosmining.suites.audio import report
from pytest_chaosmining.testbeds.audio.cases import SUITE
from pytest_chaosmining.testbeds.audio.testbed import AudioTestbed
from pytest_chaosmining.verdict.rotation import ROTATION


def _arch_key(fields: CaseFields) -> str:
    return f"{fields['arch']}-{fields['condition']}"


class AudioSpec(AudioTestbed, ClassifierSuite):
    """Audio (ChaosMining §3.3): which of the channels carries the spoken word,
    by each explainer's per-channel share of |attribution| and top-1 hits."""

    report = report
    binding = "pytest_chaosmining.suites.audio.suite:AudioSuite"
    name = SUITE
    shapes = (AUDIO_CLASSIFICATION,)
    case_arg = "audio_case"
    score_metric = "channel_share"
    metrics = (
        *judged("channel_share", "top1_hit", "training_gain", bar_key=_arch_key),
        *judged("accuracy"),
        *drift_metrics(),
        *own_merit("batch_consistency", "target_sensitivity", "truth_sign", "completeness", "equivalence"),
        *reported(ROTATION),
        *reported("untrained_share", "untrained_top1_hit"),
    )
    calibration = Calibration(judged=calibrated(metrics), optional=frozenset({"channel_share"}))
    checks = (
        ScoreCheck("channel_share"),
        ScoreCheck("top1_hit"),
        training_gain_check("top-1 hit rate", "untrained_top1_hit"),
    )
    recorded = ("untrained_share", "untrained_top1_hit")
    example_png = "audio_examples.png"

    #: the architecture and condition (``tcn-SBFP``): a case's bar key, from its record fields
    bar_key = staticmethod(_arch_key)
