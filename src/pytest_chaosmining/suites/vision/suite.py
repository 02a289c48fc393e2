"""The vision suite: cases, models and measurements (ChaosMining §3.2, A.3).

A :class:`VisionCase` is one trained classifier (condition × model × sizes ×
seed).  Explainers attribute the predicted class of validation images against
a zero baseline; feature ablation uses the 7×7 patch grid.  IoU follows the
paper (Gaussian smoothing, top-k pixels with k = foreground area, their minimal
rectangle) with inclusive extents, so a perfect hit scores exactly 1.0.

A model-randomisation check (Adebayo et al., 2018): the first ``n_check``
images are also attributed on the model as it was before training (same
architecture and seed); the IoU must gain at least the tier's
``training_gain`` from training.  A map that ignores the model (a centre
prior, which would pass FP where the foreground always sits in the centre)
scores the same on both and fails.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chaosmining.attribution_context import BACKGROUND_SIZE, IMAGE_CLASSIFICATION, AttributionContext
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided, guided_model_id, training_key
from pytest_chaosmining.suites import Calibration, Condition
from pytest_chaosmining.suites.classifier import ClassifierSuite
from pytest_chaosmining.suites.vision import report
from pytest_chaosmining.suites.vision.tiers import VISION, VisionTier

if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.session import ChaosminingSession

SUITE = "vision"
PAPER_SIGMA, PAPER_CANVAS = 6.0, 224


def vision_code() -> tuple[ModuleType, ...]:
    """The modules whose source enters the cache key of a vision model."""
    from pytest_chaosmining.core.storage import decoding
    from pytest_chaosmining.core.training import classification
    from pytest_chaosmining.suites.vision import data, models

    return (data, models, classification, decoding)


@dataclass(frozen=True)
class VisionCase:
    """One classifier of the vision suite."""

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
    def model_id(self) -> str:
        return guided_model_id(f"{self.model}-e{self.epochs}", self.guide, self.precision)

    @property
    def id(self) -> str:
        return f"{self.condition}-{self.canvas}px-{self.model_id}-s{self.seed}"

    def explainer_id(self, explainer: str) -> str:
        """Test id of ``explainer`` on this model."""
        return f"{self.condition}-{self.canvas}px-{self.model_id}-{explainer}-s{self.seed}"

    def condition_fields(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "canvas": self.canvas,
            "fg": self.fg,
            "n_train": self.n_train,
            "source": self.source,
        }

    def training_config(self, device_type: str) -> dict[str, Any]:
        return training_key(SUITE, self, device_type)


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
            tier.n_train,
            tier.n_val,
            tier.epochs,
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


def data_split(case: VisionCase, split: str) -> Any:
    """The ``train`` or ``val`` images of ``case``."""
    from pytest_chaosmining.suites.vision.data import VisionSpec, generate

    n = case.n_train if split == "train" else case.n_val
    return generate(VisionSpec(case.condition, case.fg, n, split, case.seed, case.source, case.data_dir))


def trained_model(
    case: VisionCase, cache: ModelCache, device: torch.device, progress: Callable[..., None] | None = None
) -> TrainedVisionModel:
    """Load ``case``'s classifier from the cache or train it; score it on validation data."""
    from pytest_chaosmining.suites.classifier import cached_classifier

    def train_data() -> tuple[np.ndarray, np.ndarray]:
        data = data_split(case, "train")
        return data.images, data.labels

    val = data_split(case, "val")
    model, meta, pred = cached_classifier(
        SUITE, case, cache, device, vision_code(), lambda: untrained_model(case), train_data,
        (val.images, val.labels), progress,
    )  # fmt: skip
    return TrainedVisionModel(case, model, val, pred, float((pred == val.labels).mean()), float(meta["train_seconds"]))


def untrained_model(case: Any) -> Any:
    """``case``'s image classifier (its ``model`` by name) as it is before training,
    initialised from ``case.seed``, in eval mode; vision and BAM cases alike."""
    import torch

    from pytest_chaosmining.suites.vision.models import build_model

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


def _attribution_call(
    trained: TrainedVisionModel,
    explainer: Explainer,
    device: torch.device,
    internal_batch_size: int,
    rows: slice,
    model: Any = None,
) -> Callable[[], Any]:
    """A zero-argument call attributing validation images ``rows`` (target: the
    trained model's predicted class) on ``model`` (default: the trained model),
    inputs prepared beforehand so that timing covers the call only."""
    import torch

    from pytest_chaosmining.core.training.classification import to_float
    from pytest_chaosmining.explainers import attribute

    inputs = to_float(torch.from_numpy(trained.val.images[rows])).to(device)
    target = torch.from_numpy(trained.predictions[rows]).to(device)
    context = attribution_context(trained.case, device, internal_batch_size)
    model = trained.model if model is None else model
    return lambda: attribute(explainer, model, inputs, target, context)


def evaluate(
    trained: TrainedVisionModel,
    explainer: Explainer,
    device: torch.device,
    n_explain: int,
    internal_batch_size: int,
    n_check: int | None = None,
) -> dict[str, Any]:
    """Attribute the first ``n_explain`` validation images (target: the predicted
    class); return mean IoU, mean in-box mass share, cost, and the IoU gained
    from training on the first ``n_check`` images (default: all)."""
    from pytest_chaosmining.core.metrics.attribution import localisation
    from pytest_chaosmining.timing import timed

    case = trained.case
    n = min(n_explain, len(trained.val))
    attr, cost = timed(_attribution_call(trained, explainer, device, internal_batch_size, slice(0, n)), device)
    sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS
    ious, shares = localisation(attr.cpu().numpy(), trained.val.boxes[:n], sigma)
    m = n if n_check is None else min(n, n_check)
    untrained = untrained_model(case).to(device)
    before, _ = timed(
        _attribution_call(trained, explainer, device, internal_batch_size, slice(0, m), untrained), device
    )
    before_ious, _ = localisation(before.cpu().numpy(), trained.val.boxes[:m], sigma)
    return {
        "iou": float(ious.mean()),
        "box_share": float(shares.mean()),
        "cost": cost,
        "n": n,
        "untrained_iou": float(before_ious.mean()),
        "training_gain": float(ious[:m].mean() - before_ious.mean()),
    }


def example_figure(session: ChaosminingSession, path: Path, per_condition: int = 2) -> bool:
    """For the first cached model of each condition: a few validation images, each
    explainer's smoothed map with its top-k box (red) and the true box (green).
    Uses cached models only; returns False when there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from pytest_chaosmining.core.metrics.attribution import saliency_maps, top_k_box
    from pytest_chaosmining.explainers import ExplainerError

    cases, seen = [], set()
    for case in VisionSuite().plan(session):
        if case.condition not in seen and session.cache.has(
            SUITE, case.training_config(session.device.type), vision_code()
        ):
            cases.append(case)
            seen.add(case.condition)
    if not cases:
        return False
    names = session.roster.explainers_in(SUITE)
    rows = len(cases) * per_condition
    fig, axes = plt.subplots(rows, 1 + len(names), figsize=(1.8 * (1 + len(names)), 1.8 * rows), squeeze=False)
    tier = VISION[session.tier]
    for ci, case in enumerate(cases):
        trained = VisionSuite().model(session, case)
        sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS
        for j in range(per_condition):
            ax_row = axes[ci * per_condition + j]
            x, y, w, h = (int(v) for v in trained.val.boxes[j])
            ax_row[0].imshow(trained.val.images[j].transpose(1, 2, 0))
            ax_row[0].add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
            ax_row[0].set_title(f"{case.condition} y={trained.val.labels[j]} ŷ={trained.predictions[j]}", fontsize=7)
            for k, name in enumerate(names, start=1):
                ax = ax_row[k]
                try:
                    call = _attribution_call(
                        trained, session.explainers[name], session.device, tier.internal_batch_size, slice(j, j + 1)
                    )
                    attr = call().cpu().numpy()
                except ExplainerError:
                    ax.set_title(f"{name}: error", fontsize=7)
                    continue
                smap = saliency_maps(attr, sigma)[0]
                bx, by, bw, bh = top_k_box(smap, w * h, (x, y, w, h))
                ax.imshow(smap, cmap="magma")
                ax.add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
                ax.add_patch(Rectangle((bx - 0.5, by - 0.5), bw, bh, fill=False, ec="red", lw=1.2))
                ax.set_title(name, fontsize=7)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    from matplotlib.lines import Line2D

    key = [
        Line2D([], [], color="lime", lw=2, label="true foreground box"),
        Line2D([], [], color="red", lw=2, label="the explainer's top-k box (k = box area)"),
    ]
    fig.legend(handles=key, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


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


def _condition_key(condition: Condition) -> str:
    return str(condition["condition"])


class VisionSuite(ClassifierSuite):
    """Vision (ChaosMining §3.2): IoU of each explainer's top-k box with the true
    foreground, on classifiers trained per background × position condition."""

    report = report
    name = SUITE
    shapes = (IMAGE_CLASSIFICATION,)
    case_arg = "vision_case"
    score_metric = "iou"
    metrics = (
        *judged("iou", "training_gain", key=_condition_key),
        *judged("accuracy"),
        *reported("box_share", "untrained_iou"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    #: for the saliency suite: the scores compared (the first is judged)
    compared = ("iou", "box_share")
    tiers = VISION
    disk_source = "torchvision"
    example_png = "vision_examples.png"
    plan_cases = staticmethod(plan_cases)
    trained_model = staticmethod(trained_model)
    evaluate = staticmethod(evaluate)
    example_figure = staticmethod(example_figure)

    def chance(self, model: TrainedVisionModel) -> float:
        """IoU of a map that knows nothing: the foreground's 1/49 of the canvas."""
        return 1 / 49
