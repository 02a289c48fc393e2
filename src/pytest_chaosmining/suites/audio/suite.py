"""The audio suite's declarations and cases (ChaosMining §3.3, A.4); its models and
measurements are in :mod:`.evaluation`.

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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, measured_against_baseline, own_merit, reported
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.explainers.context import AUDIO_CLASSIFICATION
from pytest_chaosmining.suite_kit.classifier import (
    ClassifierCase,
    ClassifierFunctions,
    ClassifierSuite,
)
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suites.audio import report
from pytest_chaosmining.suites.audio.tiers import AUDIO, AudioTier

if TYPE_CHECKING:
    from pytest_chaosmining.suites.audio import evaluation
else:  # the heavy half (torch, matplotlib), loaded on first use
    evaluation = lazy_module("pytest_chaosmining.suites.audio.evaluation")

SUITE = "audio"
TIME_SEGMENTS = 5


def audio_code() -> Code:
    """The modules whose source enters the cache key of an audio model."""
    return (
        "pytest_chaosmining.suites.audio.data",
        "pytest_chaosmining.suites.audio.models",
        "pytest_chaosmining.core.training.classification",
        "pytest_chaosmining.core.storage.decoding",
    )


@dataclass(frozen=True)
class AudioCase(ClassifierCase):
    """One classifier of the audio suite."""

    cache_suite: ClassVar[str] = SUITE

    condition: str
    model: str
    channels: int
    rate: int
    duration: float
    n_train: int
    n_val: int
    epochs: int
    batch_size: int
    lr: float
    stride: int
    seed: int
    source: str = "embedded"
    data_dir: str | None = None
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard
    precision: str = "fp32"  # training arithmetic (core.training.modes.PRECISIONS)

    @property
    def layout_id(self) -> str:
        return f"{self.channels}ch-{self.rate / 1000:g}kHz"

    @property
    def threshold_key(self) -> str:
        return f"{self.model}-{self.condition}"

    def case_fields(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "arch": self.model,
            "channels": self.channels,
            "rate": self.rate,
            "duration": self.duration,
            "n_train": self.n_train,
            "source": self.source,
        }


def plan_cases(
    tier: AudioTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[AudioCase]:
    """Every condition × model × seed of the tier."""
    n_seeds = seed_range(tier.seeds, seeds)
    return [
        AudioCase(
            condition,
            model,
            tier.channels,
            tier.rate,
            tier.duration,
            tier.training_size(condition)[0],
            tier.n_val,
            tier.training_size(condition)[1],
            tier.batch_size,
            tier.lr_for(model),
            tier.stride,
            seed,
            source,
            data_dir,
        )
        for condition in tier.conditions
        for model in tier.models
        for seed in n_seeds
    ]


@dataclass
class TrainedAudioModel:
    """A trained (or cached) classifier with its validation data and accuracy."""

    case: AudioCase
    model: Any
    val: Any
    predictions: np.ndarray
    accuracy: float
    train_seconds: float


def _arch_key(fields: CaseFields) -> str:
    return f"{fields['arch']}-{fields['condition']}"


class AudioSuite(ClassifierSuite):
    """Audio (ChaosMining §3.3): which of the channels carries the spoken word,
    by each explainer's per-channel share of |attribution| and top-1 hits."""

    report = report
    name = SUITE
    shapes = (AUDIO_CLASSIFICATION,)
    case_arg = "audio_case"
    score_metric = "channel_share"
    metrics = (
        *judged("channel_share", "top1_hit", "training_gain", key=_arch_key),
        *judged("accuracy"),
        *measured_against_baseline("map_agreement", "sample_agreement"),
        *own_merit("batch_consistency", "target_sensitivity", "truth_sign", "completeness", "equivalence"),
        *reported("untrained_share", "untrained_top1_hit", "fingerprint", "self_agreement"),
    )
    calibration = Calibration(judged=calibrated(metrics), optional=frozenset({"channel_share"}))
    checks = (
        ScoreCheck("channel_share"),
        ScoreCheck("top1_hit"),
        ScoreCheck(
            "training_gain",
            "{what} (top-1 hit rate on the untrained model {untrained_top1_hit:.3f}: "
            "does the explainer depend on the model?)",
        ),
    )
    recorded = ("untrained_share", "untrained_top1_hit")
    #: for the saliency suite: the scores compared (the first is judged)
    compared = ("channel_share", "top1_hit")
    tiers = AUDIO
    disk_source = "files"
    example_png = "audio_examples.png"
    functions = ClassifierFunctions(plan_cases, evaluation)

    def bar_key(self, fields: CaseFields) -> str:
        """The architecture and condition (``tcn-SBFP``)."""
        return _arch_key(fields)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The architecture and condition, the model, the condition."""
        return (case.threshold_key, case.model, case.condition)

    def chance(self, model: TrainedAudioModel) -> float:
        """Channel share of a map that knows nothing: 1 / channels."""
        return 1 / model.case.channels
