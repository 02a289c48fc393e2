"""Scoring an explainer on a digit classifier (torch at the top: the digits testbed's heavy
half): attributing validation images, IoU of the top-k box with the true foreground, and
the own-merit checks' probe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from pytest_chaosmining.core.metrics.drift import outline
from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of
from pytest_chaosmining.core.metrics.localisation import localisation
from pytest_chaosmining.core.records import FINGERPRINT, OUTLINE, TARGETS
from pytest_chaosmining.core.training.classification import to_float
from pytest_chaosmining.suite_kit.classifier import ExplainedSizes
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.suite_kit.seam import COST, samples_of
from pytest_chaosmining.testbeds.digits.cases import TrainedVisionModel
from pytest_chaosmining.testbeds.digits.training import (
    attribution_call,
    attribution_context,
    patch_mask,
    trained_model,
    untrained_model,
)
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.suite_kit.probe import Probe

__all__ = ["attribution_call", "evaluate", "probe", "trained_model"]

PAPER_SIGMA, PAPER_CANVAS = 6.0, 224
#: IG's internal batch on the own-merit checks' few images
PROBE_BATCH = 320


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
    trained: TrainedVisionModel, explainer: Explainer, device: torch.device, sizes: ExplainedSizes
) -> dict[str, Any]:
    """Attribute the first ``n_explain`` validation images (target: the predicted
    class); return mean IoU, mean in-box mass share, cost, the IoU gained
    from training on the first ``n_check`` images (default: all), and a
    fingerprint of the maps (7×7 patch masses)."""
    case, n_check, internal_batch_size = trained.case, sizes.n_check, sizes.internal_batch_size
    n = min(sizes.n_explain, len(trained.val))
    attr, cost = timed(attribution_call(trained, explainer, device, internal_batch_size, slice(0, n)), device)
    sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS
    attr_np = attr.cpu().numpy()
    ious, shares = localisation(attr_np, trained.val.boxes[:n], sigma)
    m = n if n_check is None else min(n, n_check)
    untrained = untrained_model(case).to(device)
    before, _ = timed(attribution_call(trained, explainer, device, internal_batch_size, slice(0, m), untrained), device)
    before_ious, _ = localisation(before.cpu().numpy(), trained.val.boxes[:m], sigma)
    return {
        "iou": float(ious.mean()),
        "box_share": float(shares.mean()),
        COST: cost,
        "n": n,
        "untrained_iou": float(before_ious.mean()),
        "training_gain": float(ious[:m].mean() - before_ious.mean()),
        samples_of("iou"): [float(v) for v in ious],
        samples_of("box_share"): [float(v) for v in shares],
        samples_of("training_gain"): [float(v) for v in ious[:m] - before_ious],
        FINGERPRINT: fingerprint_of(attr_np, patch_mask(case)[0].numpy()).stored(),
        OUTLINE: outline(attr_np),
        TARGETS: [int(c) for c in trained.predictions[:n]],
    }
