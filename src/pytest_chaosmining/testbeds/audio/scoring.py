"""Scoring an explainer on an audio classifier (torch at the top: the audio testbed's heavy
half): attributing validation clips, the channel scores, and the own-merit checks' probe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from pytest_chaosmining.core.metrics.attribution import channel_scores
from pytest_chaosmining.core.metrics.drift import outline
from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of
from pytest_chaosmining.core.records import FINGERPRINT, OUTLINE, TARGETS
from pytest_chaosmining.core.training.classification import pcm_to_float
from pytest_chaosmining.suite_kit.classifier import ExplainedSizes
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.suite_kit.seam import COST, samples_of
from pytest_chaosmining.testbeds.audio.cases import TrainedAudioModel
from pytest_chaosmining.testbeds.audio.training import (
    attribution_call,
    attribution_context,
    cudnn_guard,
    segment_mask,
    trained_model,
    untrained_model,
)
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.suite_kit.probe import Probe

__all__ = ["evaluate", "probe", "trained_model"]

#: IG's internal batch on the own-merit checks' few clips
PROBE_BATCH = 320


def probe(trained: TrainedAudioModel, samples: int) -> Probe:
    """The first ``samples`` validation clips of ``trained`` for the own-merit checks:
    their predicted classes, the runner-up classes and the suite's context (recurrent
    models run with cuDNN disabled: :func:`~.training.cudnn_guard`)."""
    device = next(trained.model.parameters()).device
    inputs = pcm_to_float(torch.from_numpy(trained.val.waves[:samples])).to(device)
    return classifier_probe(
        trained.model,
        inputs,
        trained.predictions[:samples],
        attribution_context(trained.case, device, PROBE_BATCH),
        segment_mask(trained.case)[0].numpy(),
        guard=cudnn_guard(trained.model),
    )


def evaluate(
    trained: TrainedAudioModel, explainer: Explainer, device: torch.device, sizes: ExplainedSizes
) -> dict[str, Any]:
    """Attribute the first ``n_explain`` validation clips; return the mean true-channel
    share, the top-1 channel hit rate, the cost, both scores on the untrained model
    and the gain in top-1 hit rate from training, both measured on the first
    ``n_check`` clips (default: all), and a fingerprint of the maps (channel ×
    segment masses)."""
    n_check, internal_batch_size = sizes.n_check, sizes.internal_batch_size
    n = min(sizes.n_explain, len(trained.val))
    rows, truth = slice(0, n), trained.val.channels[:n]
    attr, cost = timed(attribution_call(trained, explainer, device, internal_batch_size, rows), device)
    attr_np = attr.detach().cpu().numpy()
    shares, hits = channel_scores(attr_np, truth)
    m = n if n_check is None else min(n, n_check)
    untrained = untrained_model(trained.case).to(device)
    before, _ = timed(attribution_call(trained, explainer, device, internal_batch_size, slice(0, m), untrained), device)
    before_shares, before_hits = channel_scores(before.detach().cpu().numpy(), truth[:m])
    return {
        "channel_share": float(shares.mean()),
        "top1_hit": float(hits.mean()),
        "untrained_share": float(before_shares.mean()),
        "untrained_top1_hit": float(before_hits.mean()),
        "training_gain": float(hits[:m].mean() - before_hits.mean()),
        samples_of("channel_share"): [float(v) for v in shares],
        samples_of("top1_hit"): [float(v) for v in hits],
        samples_of("training_gain"): [float(v) for v in hits[:m] - before_hits],
        COST: cost,
        "n": n,
        FINGERPRINT: fingerprint_of(attr_np, segment_mask(trained.case)[0].numpy()).stored(),
        OUTLINE: outline(attr_np),
        TARGETS: [int(c) for c in trained.predictions[:n]],
    }
