"""The vision suite's cases, shared by the suites that build on them (IteROAR's chains
start from their classifiers, BAM uses the same CNNs and patch grid).

A :class:`VisionCase` is one trained classifier (condition × model × sizes × seed);
:mod:`.training` trains or loads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.suite_kit.classifier import ClassifierCase, data_source
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


@dataclass(frozen=True)
class VisionCase(ClassifierCase):
    """One classifier of the vision suite."""

    cache_suite: ClassVar[str] = SUITE
    reported = ("condition", "canvas", "fg", "n_train", "source")

    condition: str
    model: str
    fg: int
    n_train: int
    n_val: int
    epochs: int
    batch_size: int
    lr: float
    seed: int
    source: str = "embedded"
    data_dir: str | None = None
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard
    precision: str = "fp32"  # training arithmetic (core.training.modes.PRECISIONS)

    @property
    def canvas(self) -> int:
        return 7 * self.fg

    @property
    def layout_id(self) -> str:
        return f"{self.canvas}px"


def plan_cases(
    tier: VisionTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[VisionCase]:
    """Every condition × model × seed of the tier."""
    n_seeds = seed_range(tier.seeds, seeds)
    return [
        VisionCase(
            condition,
            model,
            tier.fg,
            tier.training_size(condition)[0],
            tier.n_val,
            tier.training_size(condition)[1],
            tier.batch_size,
            tier.lr,
            seed,
            source,
            data_dir,
        )
        for condition in tier.conditions
        for model in tier.models
        for seed in n_seeds
    ]


@dataclass
class TrainedVisionModel:
    """A trained (or cached) classifier with its validation data and accuracy."""

    case: VisionCase
    model: Any
    val: Any
    predictions: np.ndarray
    accuracy: float
    train_seconds: float


def vision_source(data_dir: str | None) -> tuple[str, str | None]:
    """Where the digit images come from: torchvision's MNIST under ``--chaosmining-data``
    (``data_dir``), else the embedded set."""
    return data_source(DISK_SOURCE, data_dir)
