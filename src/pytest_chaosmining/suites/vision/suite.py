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

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.metrics.attribution import localisation, saliency_maps, top_k_box
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, measured_against_baseline, own_merit, reported
from pytest_chaosmining.core.metrics.drift import fingerprint
from pytest_chaosmining.explainers import ExplainerError, attribute
from pytest_chaosmining.explainers.context import IMAGE_CLASSIFICATION
from pytest_chaosmining.suite_kit.classifier import ClassifierFunctions, ClassifierSuite
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suites.vision import report
from pytest_chaosmining.testbeds.digits.cases import (
    SUITE,
    TrainedVisionModel,
    attribution_context,
    patch_mask,
    plan_cases,
    trained_model,
    untrained_model,
    vision_code,
)
from pytest_chaosmining.testbeds.digits.tiers import VISION
from pytest_chaosmining.timing import timed

# matplotlib, torch and the package's modules that load them are imported where used: heavy, they wait for
# --chaosmining.


if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe

PAPER_SIGMA, PAPER_CANVAS = 6.0, 224
#: IG's internal batch on the own-merit checks' few images
PROBE_BATCH = 320


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

    inputs = to_float(torch.from_numpy(trained.val.images[rows])).to(device)
    target = torch.from_numpy(trained.predictions[rows]).to(device)
    context = attribution_context(trained.case, device, internal_batch_size)
    model = trained.model if model is None else model
    return lambda: attribute(explainer, model, inputs, target, context)


def probe(trained: TrainedVisionModel, samples: int) -> Probe:
    """The first ``samples`` validation images of ``trained`` for the own-merit checks:
    their predicted classes, the runner-up classes and the suite's context."""
    import torch

    from pytest_chaosmining.core.training.classification import to_float

    device = next(trained.model.parameters()).device
    inputs = to_float(torch.from_numpy(trained.val.images[:samples])).to(device)
    context = attribution_context(trained.case, device, PROBE_BATCH)
    return classifier_probe(
        trained.model, inputs, trained.predictions[:samples], context, patch_mask(trained.case)[0].numpy()
    )


def evaluate(
    trained: TrainedVisionModel,
    explainer: Explainer,
    device: torch.device,
    n_explain: int,
    internal_batch_size: int,
    n_check: int | None = None,
) -> dict[str, Any]:
    """Attribute the first ``n_explain`` validation images (target: the predicted
    class); return mean IoU, mean in-box mass share, cost, the IoU gained
    from training on the first ``n_check`` images (default: all), and a
    fingerprint of the maps (7×7 patch masses)."""
    case = trained.case
    n = min(n_explain, len(trained.val))
    attr, cost = timed(_attribution_call(trained, explainer, device, internal_batch_size, slice(0, n)), device)
    sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS
    attr_np = attr.cpu().numpy()
    ious, shares = localisation(attr_np, trained.val.boxes[:n], sigma)
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
        "iou_samples": [float(v) for v in ious],
        "box_share_samples": [float(v) for v in shares],
        "training_gain_samples": [float(v) for v in ious[:m] - before_ious],
        "fingerprint": fingerprint(attr_np, patch_mask(case)[0].numpy()),
    }


def example_figure(run: RunView, path: Path, per_condition: int = 1) -> bool:
    """For the first cached model of each condition: a few validation images, each
    explainer's smoothed map with its top-k box (red) and the true box (green).
    Uses cached models only; returns False when there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    cases, seen = [], set()
    for case in VisionSuite().plan(run):
        if case.condition not in seen and run.runtime.cache.has(
            SUITE, case.training_config(run.runtime.device.type), vision_code()
        ):
            cases.append(case)
            seen.add(case.condition)
    if not cases:
        return False
    names = run.explainers.in_suite(SUITE)
    rows = len(cases) * per_condition
    fig, axes = plt.subplots(rows, 1 + len(names), figsize=(1.8 * (1 + len(names)), 1.8 * rows), squeeze=False)
    tier = VISION[run.plan.tier]
    for ci, case in enumerate(cases):
        trained = VisionSuite().model(run, case)
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
                        trained,
                        run.explainers[name],
                        run.runtime.device,
                        tier.internal_batch_size,
                        slice(j, j + 1),
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


def _condition_key(fields: CaseFields) -> str:
    return str(fields["condition"])


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
        # no bar of its own: a continuous localisation score compared against a baseline (paired per image)
        *judged("box_share"),
        *measured_against_baseline("map_agreement", "sample_agreement"),
        *own_merit("batch_consistency", "target_sensitivity", "truth_sign", "completeness", "equivalence"),
        *reported("untrained_iou", "fingerprint", "self_agreement"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("iou"),
        ScoreCheck(
            "training_gain",
            "{what} (IoU on the untrained model {untrained_iou:.3f}: does the explainer depend on the model?)",
        ),
        ScoreCheck("box_share", "{what}: the share of |attribution| mass in the true box"),
    )
    recorded = ("untrained_iou",)
    #: for the saliency suite: the scores compared (the first is judged)
    compared = ("iou", "box_share")
    tiers = VISION
    disk_source = "torchvision"
    example_png = "vision_examples.png"
    functions = ClassifierFunctions(plan_cases, trained_model, evaluate, example_figure, probe)

    def bar_key(self, fields: CaseFields) -> str:
        """The condition (``SBRP``)."""
        return _condition_key(fields)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The model, then the condition."""
        return (case.model, case.condition)

    def chance(self, model: TrainedVisionModel) -> float:
        """IoU of a map that knows nothing: the foreground's 1/49 of the canvas."""
        return 1 / 49
