"""Training or loading a digit case's classifier, its images, and the patch-grid context
image explainers get (torch at the top: the heavy half of the digits testbed, whose
:mod:`.cases` declare the cases)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.training.classification import to_float
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE, AttributionContext
from pytest_chaosmining.suite_kit.classifier import classifier_model
from pytest_chaosmining.suite_kit.classifier_training import ClassifierRecipe, cached_data
from pytest_chaosmining.testbeds.digits import data
from pytest_chaosmining.testbeds.digits.cases import SUITE, TrainedVisionModel, VisionCase, vision_code
from pytest_chaosmining.testbeds.digits.models import build_model

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.run_view import RunView

#: the modules whose source decides the digit images
DATA_CODE = ("pytest_chaosmining.testbeds.digits.data", "pytest_chaosmining.testbeds.noise_conditions")


def data_split(case: VisionCase, split: str, cache: ModelCache | None = None) -> Any:
    """The ``train`` or ``val`` images of ``case`` (embedded ones through ``cache``'s data, where given)."""
    n = case.n_train if split == "train" else case.n_val
    spec = data.VisionDataSpec(case.condition, case.fg, n, split, case.seed, case.source, case.data_dir)
    return cached_data(case, spec, cache, data.generate, data.VisionData, DATA_CODE)


def _images(split: data.VisionData) -> np.ndarray:
    return split.images


def run_model(run: RunView, case: VisionCase) -> TrainedVisionModel:
    """The classifier of ``case`` (any suite's: vision, IteROAR, saliency), trained at most once
    per run and cached on disk."""
    return classifier_model(run, SUITE, trained_model, case)


def untrained_model(case: Any) -> Any:
    """``case``'s image classifier (its ``model`` by name) as it is before training,
    initialised from ``case.seed``, in eval mode; vision and BAM cases alike."""
    torch.manual_seed(case.seed)
    return build_model(case.model).eval()


def grid_mask(canvas: int, cell: int) -> Any:
    """A grid of ``cell``-px squares over a ``canvas``-px image as a captum feature mask ``(1, 1, S, S)``."""
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
    images = data_split(dataclasses.replace(case, n_train=BACKGROUND_SIZE), "train").images
    return to_float(torch.from_numpy(images[:BACKGROUND_SIZE]))


#: how a digit classifier is built, fed, kept (through the model cache) and explained
DIGIT_TRAINING = ClassifierRecipe[VisionCase](vision_code, untrained_model, data_split, _images, attribution_context)
#: ``case``'s classifier from the cache or trained on its images, scored on the validation images
trained_model = DIGIT_TRAINING.trained_model
#: a zero-argument call attributing validation images (:meth:`ClassifierRecipe.attribution_call`)
attribution_call = DIGIT_TRAINING.attribution_call
