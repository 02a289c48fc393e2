"""The audio suite's heavy half: training or loading a case's classifier, attributing
validation clips, the channel scores, the own-merit checks' probe and the example figure."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.metrics.attribution import channel_mass, channel_scores
from pytest_chaosmining.core.metrics.drift import fingerprint
from pytest_chaosmining.core.training.classification import pcm_to_float
from pytest_chaosmining.explainers import ExplainerError, attribute
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE, AttributionContext
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.suite_kit.classifier import classifier_model
from pytest_chaosmining.suite_kit.classifier_training import cached_classifier
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.suites.audio import data
from pytest_chaosmining.suites.audio.data import CLASSES, find_speech_commands, speech_commands_files
from pytest_chaosmining.suites.audio.models import build_audio_model, is_recurrent
from pytest_chaosmining.suites.audio.suite import (
    SUITE,
    TIME_SEGMENTS,
    AudioCase,
    TrainedAudioModel,
    audio_code,
)
from pytest_chaosmining.suites.audio.tiers import AUDIO
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Remembered, RunView
    from pytest_chaosmining.suite_kit.probe import Probe

#: IG's internal batch on the own-merit checks' few clips
PROBE_BATCH = 320


def data_split(case: AudioCase, split: str, cache: ModelCache | None = None) -> Any:
    """The ``train`` or ``val`` clips of ``case`` (embedded ones through ``cache``'s data, where given)."""
    n = case.n_train if split == "train" else case.n_val
    spec = data.AudioSpec(
        case.condition, case.channels, case.rate, case.duration, n, split, case.seed, case.source, case.data_dir
    )
    if cache is None or case.source != "embedded":
        return data.generate(spec)
    return cache.data.get_or_make(
        "audio",
        spec,
        lambda: data.generate(spec),
        data.AudioData,
        ("pytest_chaosmining.suites.audio.data", "pytest_chaosmining.testbeds.noise_conditions"),
    )


def n_classes(case: AudioCase) -> int:
    """Number of classes of the case's source (10 embedded words; the Speech Commands folders)."""
    if case.source == "embedded":
        return len(CLASSES)
    return len(speech_commands_files(find_speech_commands(case.data_dir or "."), "val")[1])


def trained_model(
    case: AudioCase,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[..., None] | None = None,
    remembered: Remembered[list[int]] | None = None,
) -> TrainedAudioModel:
    """Load ``case``'s classifier from the cache or train it; score it on validation data
    (its predictions kept by ``remembered`` where given)."""

    def train_data() -> tuple[np.ndarray, np.ndarray]:
        data = data_split(case, "train")
        return data.waves, data.labels

    val = data_split(case, "val", cache)
    model, meta, pred = cached_classifier(
        SUITE, case, cache, device, audio_code(), lambda: untrained_model(case), train_data,
        (val.waves, val.labels), progress, pcm_to_float, remembered,
    )  # fmt: skip
    return TrainedAudioModel(case, model, val, pred, float((pred == val.labels).mean()), float(meta["train_seconds"]))


def untrained_model(case: AudioCase) -> Any:
    """``case``'s model as it is before training (seeded initialisation), in eval mode."""
    torch.manual_seed(case.seed)
    return build_audio_model(case.model, case.channels, n_classes(case), case.stride).eval()


def segment_mask(case: AudioCase) -> Any:
    """Channel × time-segment groups as a captum feature mask ``(1, C, T)``."""
    length = int(round(case.rate * case.duration))
    segment = torch.arange(length) * TIME_SEGMENTS // length
    return (torch.arange(case.channels)[:, None] * TIME_SEGMENTS + segment[None, :]).unsqueeze(0)


def attribution_context(case: AudioCase, device: torch.device, internal_batch_size: int) -> AttributionContext:
    """What the audio suite offers explainers: the channel × segment grid (window:
    one channel, one segment), one channel's segments per forward pass, the IG
    batch size, and a background of training clips."""
    length = int(round(case.rate * case.duration))
    return AttributionContext(
        suite=SUITE,
        domain="audio",
        task="classification",
        model_kind="sequence",
        device=device,
        feature_mask=segment_mask(case).to(device),
        window=(1, -(-length // TIME_SEGMENTS)),
        settings={"internal_batch_size": internal_batch_size, "perturbations_per_eval": TIME_SEGMENTS},
        background_source=functools.partial(_background, case),
    )


@functools.lru_cache(maxsize=4)
def _background(case: AudioCase) -> Any:
    """The first :data:`BACKGROUND_SIZE` training clips of ``case`` as floats."""
    waves = data_split(dataclasses.replace(case, n_train=BACKGROUND_SIZE), "train").waves
    return pcm_to_float(torch.from_numpy(waves[:BACKGROUND_SIZE]))


def attribution_call(
    trained: TrainedAudioModel,
    explainer: Explainer,
    device: torch.device,
    internal_batch_size: int,
    rows: slice,
    model: Any = None,
) -> Callable[[], Any]:
    """A zero-argument call attributing validation clips ``rows`` (target: the
    trained model's predicted class) on ``model`` (default: the trained model),
    inputs prepared beforehand so that timing covers the call only.  Recurrent
    models run with cuDNN disabled: eval-mode attribution on CUDA."""
    inputs = pcm_to_float(torch.from_numpy(trained.val.waves[rows])).to(device)
    target = torch.from_numpy(trained.predictions[rows]).to(device)
    context = attribution_context(trained.case, device, internal_batch_size)
    model = trained.model if model is None else model
    recurrent = is_recurrent(model)

    def call() -> Any:
        with torch.backends.cudnn.flags(enabled=not recurrent):
            return attribute(explainer, model, inputs, target, context)

    return call


def probe(trained: TrainedAudioModel, samples: int) -> Probe:
    """The first ``samples`` validation clips of ``trained`` for the own-merit checks:
    their predicted classes, the runner-up classes and the suite's context (recurrent
    models run with cuDNN disabled, as in :func:`attribution_call`)."""
    device = next(trained.model.parameters()).device
    inputs = pcm_to_float(torch.from_numpy(trained.val.waves[:samples])).to(device)
    recurrent = is_recurrent(trained.model)
    return classifier_probe(
        trained.model,
        inputs,
        trained.predictions[:samples],
        attribution_context(trained.case, device, PROBE_BATCH),
        segment_mask(trained.case)[0].numpy(),
        guard=lambda: torch.backends.cudnn.flags(enabled=not recurrent),
    )


def evaluate(
    trained: TrainedAudioModel,
    explainer: Explainer,
    device: torch.device,
    n_explain: int,
    internal_batch_size: int,
    n_check: int | None = None,
) -> dict[str, Any]:
    """Attribute the first ``n_explain`` validation clips; return the mean true-channel
    share, the top-1 channel hit rate, the cost, both scores on the untrained model
    and the gain in top-1 hit rate from training, both measured on the first
    ``n_check`` clips (default: all), and a fingerprint of the maps (channel ×
    segment masses)."""
    n = min(n_explain, len(trained.val))
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
        "channel_share_samples": [float(v) for v in shares],
        "top1_hit_samples": [float(v) for v in hits],
        "training_gain_samples": [float(v) for v in hits[:m] - before_hits],
        "cost": cost,
        "n": n,
        "fingerprint": fingerprint(attr_np, segment_mask(trained.case)[0].numpy()),
    }


def example_figure(run: RunView, path: Path, planned: Sequence[AudioCase]) -> bool:
    """One validation clip of the first cached model (SB before RB, FP before RP):
    each channel's waveform (speech channel in colour) beside each explainer's
    per-channel share of |attribution|.  Uses cached models only; returns False
    when there is nothing to draw."""
    plt = pyplot()
    order = {"SBFP": 0, "RBFP": 1, "SBRP": 2, "RBRP": 3}
    cached = [
        c for c in planned if run.runtime.cache.has(SUITE, c.training_config(run.runtime.device.type), audio_code())
    ]
    if not cached:
        return False
    case = min(cached, key=lambda c: order.get(c.condition, 9))
    trained = classifier_model(run, SUITE, trained_model, case)
    names = run.explainers.in_suite(SUITE)
    correct = np.flatnonzero(trained.predictions == trained.val.labels)
    i = int(correct[0]) if len(correct) else 0  # a clip the model classifies correctly, where there is one
    wave = trained.val.waves[i].astype(np.float32) / 32767.0
    true = int(trained.val.channels[i])
    shares = {}
    for name in names:
        try:
            call = attribution_call(
                trained,
                run.explainers[name],
                run.runtime.device,
                AUDIO[run.plan.tier].internal_batch_size,
                slice(i, i + 1),
            )
            mass = channel_mass(call().detach().cpu().numpy())[0]
        except ExplainerError:
            continue
        shares[name] = mass / mass.sum() if mass.sum() > 0 else mass
    channels = wave.shape[0]
    fig, (ax_w, ax_s) = plt.subplots(1, 2, figsize=(11, 0.45 * channels + 1.5), gridspec_kw={"width_ratios": [3, 2]})
    t = np.arange(wave.shape[1]) / case.rate
    for c in range(channels):
        ax_w.plot(t, wave[c] * 0.45 + (channels - 1 - c), lw=0.4, color="tab:red" if c == true else "0.4")
    ax_w.set_yticks(range(channels), [f"ch {c}{' (speech)' if c == true else ''}" for c in range(channels)][::-1])
    ax_w.set_xlabel("s")
    label = trained.val.classes[trained.val.labels[i]]
    predicted = trained.val.classes[trained.predictions[i]]
    ax_w.set_title(f"{case.id}: word {label!r}, predicted {predicted!r}", fontsize=9)
    width = 0.8 / max(1, len(shares))
    for k, (name, share) in enumerate(shares.items()):
        ax_s.barh(np.arange(channels)[::-1] + (k - (len(shares) - 1) / 2) * width, share, height=width, label=name)
    ax_s.axvline(1 / channels, color="0.5", ls=":", lw=1)
    ax_s.set_yticks(range(channels), [f"ch {c}" for c in range(channels)][::-1])
    ax_s.set_xlabel("share of Σ|attribution| (dotted: chance)")
    ax_s.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
