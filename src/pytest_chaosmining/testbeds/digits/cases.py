"""The vision suite's cases and their classifiers, shared by the suites that build
on them (IteROAR's chains start from them, BAM uses the same CNNs and patch grid).

A :class:`VisionCase` is one trained classifier (condition × model × sizes × seed)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE, AttributionContext
from pytest_chaosmining.suite_kit.classifier import ClassifierCase, cached_classifier, classifier_model, data_source
from pytest_chaosmining.testbeds.digits import data
from pytest_chaosmining.testbeds.digits.tiers import VisionTier

# torch and the package's modules that load it are imported where used: heavy, they wait for --chaosmining.


if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.run_view import Remembered, RunView

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

    def case_fields(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "canvas": self.canvas,
            "fg": self.fg,
            "n_train": self.n_train,
            "source": self.source,
        }


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


def data_split(case: VisionCase, split: str, cache: ModelCache | None = None) -> Any:
    """The ``train`` or ``val`` images of ``case`` (embedded ones through ``cache``'s data, where given)."""
    n = case.n_train if split == "train" else case.n_val
    spec = data.VisionSpec(case.condition, case.fg, n, split, case.seed, case.source, case.data_dir)
    if cache is None or case.source != "embedded":
        return data.generate(spec)
    return cache.data.get_or_make(
        "vision",
        spec,
        lambda: data.generate(spec),
        data.VisionData,
        ("pytest_chaosmining.testbeds.digits.data", "pytest_chaosmining.testbeds.noise_conditions"),
    )


def trained_model(
    case: VisionCase,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[..., None] | None = None,
    remembered: Remembered[list[int]] | None = None,
) -> TrainedVisionModel:
    """Load ``case``'s classifier from the cache or train it; score it on validation data
    (its predictions kept by ``remembered`` where given)."""

    def train_data() -> tuple[np.ndarray, np.ndarray]:
        data = data_split(case, "train")
        return data.images, data.labels

    val = data_split(case, "val", cache)
    model, meta, pred = cached_classifier(
        SUITE, case, cache, device, vision_code(), lambda: untrained_model(case), train_data,
        (val.images, val.labels), progress, None, remembered,
    )  # fmt: skip
    return TrainedVisionModel(case, model, val, pred, float((pred == val.labels).mean()), float(meta["train_seconds"]))


def run_model(run: RunView, case: VisionCase) -> TrainedVisionModel:
    """The classifier of ``case`` (any suite's: vision, IteROAR, saliency), trained at most once
    per run and cached on disk."""
    return classifier_model(run, SUITE, trained_model, case)


def vision_source(data_dir: str | None) -> tuple[str, str | None]:
    """Where the digit images come from: torchvision's MNIST under ``--chaosmining-data``
    (``data_dir``), else the embedded set."""
    return data_source(DISK_SOURCE, data_dir)


def untrained_model(case: Any) -> Any:
    """``case``'s image classifier (its ``model`` by name) as it is before training,
    initialised from ``case.seed``, in eval mode; vision and BAM cases alike."""
    import torch

    from pytest_chaosmining.testbeds.digits.models import build_model

    torch.manual_seed(case.seed)
    return build_model(case.model).eval()


def grid_mask(canvas: int, cell: int) -> Any:
    """A grid of ``cell``-px squares over a ``canvas``-px image as a captum feature mask ``(1, 1, S, S)``."""
    import torch

    idx = torch.arange(canvas) // cell
    return (idx[:, None] * -(-canvas // cell) + idx[None, :]).view(1, 1, canvas, canvas)


def patch_mask(case: VisionCase) -> Any:
    """The 7×7 grid of foreground-sized patches as a captum feature mask ``(1, 1, S, S)``."""
    return grid_mask(case.canvas, case.fg)


def attribution_context(case: VisionCase, device: torch.device, internal_batch_size: int) -> AttributionContext:
    """What the vision suite offers explainers: the 7×7 patch grid (one patch
    per feature, all channels), one row of it per forward pass, the IG batch
    size, and a background of training images."""
    return image_context(
        "vision",
        patch_mask(case).to(device),
        case.fg,
        device,
        {"internal_batch_size": internal_batch_size, "perturbations_per_eval": 7},
        functools.partial(_background, case),
    )


def image_context(
    suite: str, mask: Any, cell: int, device: torch.device, settings: dict[str, int], background: Callable[[], Any]
) -> AttributionContext:
    """An image suite's context: ``mask`` a grid of ``cell``-px patches over 3-channel images."""
    return AttributionContext(
        suite=suite,
        domain="image",
        task="classification",
        model_kind="cnn",
        device=device,
        feature_mask=mask,
        window=(3, cell, cell),
        settings=settings,
        background_source=background,
    )


@functools.lru_cache(maxsize=4)
def _background(case: VisionCase) -> Any:
    """The first :data:`BACKGROUND_SIZE` training images of ``case`` as floats."""
    import torch

    from pytest_chaosmining.core.training.classification import to_float

    images = data_split(dataclasses.replace(case, n_train=BACKGROUND_SIZE), "train").images
    return to_float(torch.from_numpy(images[:BACKGROUND_SIZE]))
