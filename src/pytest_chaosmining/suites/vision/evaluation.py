"""The vision suite's heavy half: attributing validation images, IoU of the top-k box
with the true foreground, the own-merit checks' probe and the example figure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from pytest_chaosmining.core.metrics.attribution import localisation, saliency_maps, top_k_box
from pytest_chaosmining.core.metrics.drift import fingerprint
from pytest_chaosmining.core.training.classification import to_float
from pytest_chaosmining.explainers import ExplainerError, attribute
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.testbeds.digits.cases import SUITE, TrainedVisionModel, vision_code
from pytest_chaosmining.testbeds.digits.tiers import VISION
from pytest_chaosmining.testbeds.digits.training import (
    attribution_context,
    patch_mask,
    run_model,
    trained_model,
    untrained_model,
)
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe

__all__ = ["evaluate", "example_figure", "probe", "trained_model"]

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
    inputs = to_float(torch.from_numpy(trained.val.images[rows])).to(device)
    target = torch.from_numpy(trained.predictions[rows]).to(device)
    context = attribution_context(trained.case, device, internal_batch_size)
    model = trained.model if model is None else model
    return lambda: attribute(explainer, model, inputs, target, context)


def probe(trained: TrainedVisionModel, samples: int) -> Probe:
    """The first ``samples`` validation images of ``trained`` for the own-merit checks:
    their predicted classes, the runner-up classes and the suite's context."""
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


def example_figure(run: RunView, path: Path, planned: Sequence[Any], per_condition: int = 1) -> bool:
    """For the first cached model of each condition: a few validation images, each
    explainer's smoothed map with its top-k box (red) and the true box (green).
    Uses cached models only; returns False when there is nothing to draw."""
    plt = pyplot()
    cases, seen = [], set()
    for case in planned:
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
        trained = run_model(run, case)
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
    key = [
        Line2D([], [], color="lime", lw=2, label="true foreground box"),
        Line2D([], [], color="red", lw=2, label="the explainer's top-k box (k = box area)"),
    ]
    fig.legend(handles=key, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
