"""The vision suite's cases, shared by the suites that build on them (IteROAR's chains
start from their classifiers, BAM uses the same CNNs and patch grid).

A :class:`VisionCase` is one trained classifier (condition × model × sizes × seed);
:mod:`.training` trains or loads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.classifier import (
    ClassifierCase,
    TrainedClassifier,
    data_source,
    plan_classifier_cases,
)
from pytest_chaosmining.testbeds.digits.tiers import VisionTier

#: the cache namespace of these classifiers: the vision suite's
SUITE = "vision"
#: the source name of digit images read from ``--chaosmining-data``
DISK_SOURCE = "torchvision"


def vision_code() -> Code:
    """The modules whose source enters the cache key of a vision model."""
    return (
        "pytest_chaosmining.testbeds.digits.data",
        "pytest_chaosmining.testbeds.digits.models",
        "pytest_chaosmining.core.training.classification",
        "pytest_chaosmining.core.storage.decoding",
    )


@dataclass(frozen=True, kw_only=True)
class VisionCase(ClassifierCase):
    """One classifier of the vision suite: a classifier case on ``fg``-px foregrounds."""

    cache_suite: ClassVar[str] = SUITE
    from_tier = ("fg",)
    reported = ("condition", "canvas", "fg", "n_train", "source")

    fg: int

    @property
    def canvas(self) -> int:
        return 7 * self.fg

    layout_id = formatted("{canvas}px")


def plan_cases(
    tier: VisionTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[VisionCase]:
    """Every condition × model × seed of the tier."""
    return plan_classifier_cases(VisionCase, tier, seeds, source, data_dir)


#: a trained (or cached) VisionCase
TrainedVisionModel = TrainedClassifier[VisionCase]


def vision_source(data_dir: str | None) -> tuple[str, str | None]:
    """Where the digit images come from: torchvision's MNIST under ``--chaosmining-data``
    (``data_dir``), else the embedded set."""
    return data_source(DISK_SOURCE, data_dir)
