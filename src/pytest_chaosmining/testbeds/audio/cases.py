"""The audio suite's cases, shared by the suites that build on them (saliency).

An :class:`AudioCase` is one trained sequence classifier (condition × model × sizes ×
seed); :mod:`.training` trains or loads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.classifier import ClassifierCase, TrainedClassifier, plan_classifier_cases
from pytest_chaosmining.testbeds.audio.tiers import AudioTier

#: the cache namespace of these classifiers: the audio suite's
SUITE = "audio"
#: time segments per channel of the feature grid
TIME_SEGMENTS = 5
#: the source name of audio read from ``--chaosmining-data``
DISK_SOURCE = "files"


def audio_code() -> Code:
    """The modules whose source enters the cache key of an audio model."""
    return (
        "pytest_chaosmining.testbeds.audio.data",
        "pytest_chaosmining.testbeds.audio.models",
        "pytest_chaosmining.core.training.classification",
        "pytest_chaosmining.core.storage.decoding",
    )


@dataclass(frozen=True, kw_only=True)
class AudioCase(ClassifierCase):
    """One classifier of the audio suite: a classifier case on ``channels``-channel clips of
    ``duration`` s at ``rate`` Hz, its front end's ``stride``."""

    cache_suite: ClassVar[str] = SUITE
    from_tier = ("channels", "rate", "duration", "stride")
    reported = ("condition", "arch", "channels", "rate", "duration", "n_train", "source")

    channels: int
    rate: int
    duration: float
    stride: int

    @property
    def layout_id(self) -> str:
        return f"{self.channels}ch-{self.rate / 1000:g}kHz"

    bar_key = formatted("{model}-{condition}")

    @property
    def arch(self) -> str:
        """The model's architecture (its records' name for :attr:`model`)."""
        return self.model


def plan_cases(
    tier: AudioTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[AudioCase]:
    """Every condition × model × seed of the tier."""
    return plan_classifier_cases(AudioCase, tier, seeds, source, data_dir)


#: a trained (or cached) AudioCase
TrainedAudioModel = TrainedClassifier[AudioCase]
