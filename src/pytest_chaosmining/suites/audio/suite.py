"""The audio suite: cases, models and measurements (ChaosMining §3.3, A.4).

An :class:`AudioCase` is one trained sequence classifier (condition × model ×
sizes × seed).  Explainers attribute the predicted class of validation clips
against a zero baseline, in eval mode, with cuDNN off for recurrent models
(cuDNN's RNN backward refuses eval mode).  Feature ablation uses a grid of
channel × time segments (5 segments per channel), so that it ablates
pieces of channels rather than single samples.

Two scores per clip, from the per-channel mass ``m_c = Σ_t |a_{c,t}|``:

- ``channel_share``: ``m_true / Σ_c m_c``, the paper's audio "FPrec"
  (chance = 1 / channels; an all-zero map scores 0);
- ``top1_hit``: 1 when the speech channel has strictly the largest mass (ties count as misses).

A model-randomisation check (Adebayo et al., 2018) guards against explainers
that ignore the model: the same clips are attributed on the model as it was
before training (same architecture, same seed, untrained), and
``training_gain`` = top-1 hit rate (trained) − top-1 hit rate (untrained)
must reach the tier's ``training_gain``.  An explainer that reads the
truth off the data or always favours the channel where FP puts the speech
scores the same on both models and fails.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pytest_chaosmining.core.metrics.attribution import channel_mass, channel_scores
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, measured_against_baseline, own_merit, reported
from pytest_chaosmining.core.metrics.drift import fingerprint
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.explainers import ExplainerError, attribute
from pytest_chaosmining.explainers.context import AUDIO_CLASSIFICATION, BACKGROUND_SIZE, AttributionContext
from pytest_chaosmining.suite_kit.classifier import (
    ClassifierCase,
    ClassifierFunctions,
    ClassifierSuite,
    cached_classifier,
)
from pytest_chaosmining.suite_kit.probe import classifier_probe
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suites.audio import data, report
from pytest_chaosmining.suites.audio.data import CLASSES, find_speech_commands, speech_commands_files
from pytest_chaosmining.suites.audio.tiers import AUDIO, AudioTier
from pytest_chaosmining.timing import timed

# matplotlib, torch and the package's modules that load them are imported where used: heavy, they wait for
# --chaosmining.


if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Remembered, RunView
    from pytest_chaosmining.suite_kit.probe import Probe

SUITE = "audio"
TIME_SEGMENTS = 5
#: IG's internal batch on the own-merit checks' few clips
PROBE_BATCH = 320


def audio_code() -> Code:
    """The modules whose source enters the cache key of an audio model."""
    return (
        "pytest_chaosmining.suites.audio.data",
        "pytest_chaosmining.suites.audio.models",
        "pytest_chaosmining.core.training.classification",
        "pytest_chaosmining.core.storage.decoding",
    )


@dataclass(frozen=True)
class AudioCase(ClassifierCase):
    """One classifier of the audio suite."""

    cache_suite: ClassVar[str] = SUITE

    condition: str
    model: str
    channels: int
    rate: int
    duration: float
    n_train: int
    n_val: int
    epochs: int
    batch_size: int
    lr: float
    stride: int
    seed: int
    source: str = "embedded"
    data_dir: str | None = None
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard
    precision: str = "fp32"  # training arithmetic (core.training.modes.PRECISIONS)

    @property
    def layout_id(self) -> str:
        return f"{self.channels}ch-{self.rate / 1000:g}kHz"

    @property
    def threshold_key(self) -> str:
        return f"{self.model}-{self.condition}"

    def case_fields(self) -> dict[str, Any]:
        return {
            "condition": self.condition,
            "arch": self.model,
            "channels": self.channels,
            "rate": self.rate,
            "duration": self.duration,
            "n_train": self.n_train,
            "source": self.source,
        }


def plan_cases(
    tier: AudioTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[AudioCase]:
    """Every condition × model × seed of the tier."""
    n_seeds = seed_range(tier.seeds, seeds)
    return [
        AudioCase(
            condition,
            model,
            tier.channels,
            tier.rate,
            tier.duration,
            tier.training_size(condition)[0],
            tier.n_val,
            tier.training_size(condition)[1],
            tier.batch_size,
            tier.lr_for(model),
            tier.stride,
            seed,
            source,
            data_dir,
        )
        for condition in tier.conditions
        for model in tier.models
        for seed in n_seeds
    ]


@dataclass
class TrainedAudioModel:
    """A trained (or cached) classifier with its validation data and accuracy."""

    case: AudioCase
    model: Any
    val: Any
    predictions: np.ndarray
    accuracy: float
    train_seconds: float


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
    from pytest_chaosmining.core.training.classification import pcm_to_float

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
    import torch

    from pytest_chaosmining.suites.audio.models import build_audio_model

    torch.manual_seed(case.seed)
    return build_audio_model(case.model, case.channels, n_classes(case), case.stride).eval()


def segment_mask(case: AudioCase) -> Any:
    """Channel × time-segment groups as a captum feature mask ``(1, C, T)``."""
    import torch

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
    import torch

    from pytest_chaosmining.core.training.classification import pcm_to_float

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
    import torch

    from pytest_chaosmining.core.training.classification import pcm_to_float
    from pytest_chaosmining.suites.audio.models import is_recurrent

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
    import torch

    from pytest_chaosmining.core.training.classification import pcm_to_float
    from pytest_chaosmining.suites.audio.models import is_recurrent

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


def example_figure(run: RunView, path: Path) -> bool:
    """One validation clip of the first cached model (SB before RB, FP before RP):
    each channel's waveform (speech channel in colour) beside each explainer's
    per-channel share of |attribution|.  Uses cached models only; returns False
    when there is nothing to draw."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = {"SBFP": 0, "RBFP": 1, "SBRP": 2, "RBRP": 3}
    cached = [
        c
        for c in AudioSuite().plan(run)
        if run.runtime.cache.has(SUITE, c.training_config(run.runtime.device.type), audio_code())
    ]
    if not cached:
        return False
    case = min(cached, key=lambda c: order.get(c.condition, 9))
    trained = AudioSuite().model(run, case)
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


def _arch_key(fields: CaseFields) -> str:
    return f"{fields['arch']}-{fields['condition']}"


class AudioSuite(ClassifierSuite):
    """Audio (ChaosMining §3.3): which of the channels carries the spoken word,
    by each explainer's per-channel share of |attribution| and top-1 hits."""

    report = report
    name = SUITE
    shapes = (AUDIO_CLASSIFICATION,)
    case_arg = "audio_case"
    score_metric = "channel_share"
    metrics = (
        *judged("channel_share", "top1_hit", "training_gain", key=_arch_key),
        *judged("accuracy"),
        *measured_against_baseline("map_agreement", "sample_agreement"),
        *own_merit("batch_consistency", "target_sensitivity", "truth_sign", "completeness", "equivalence"),
        *reported("untrained_share", "untrained_top1_hit", "fingerprint", "self_agreement"),
    )
    calibration = Calibration(judged=calibrated(metrics), optional=frozenset({"channel_share"}))
    checks = (
        ScoreCheck("channel_share"),
        ScoreCheck("top1_hit"),
        ScoreCheck(
            "training_gain",
            "{what} (top-1 hit rate on the untrained model {untrained_top1_hit:.3f}: "
            "does the explainer depend on the model?)",
        ),
    )
    recorded = ("untrained_share", "untrained_top1_hit")
    #: for the saliency suite: the scores compared (the first is judged)
    compared = ("channel_share", "top1_hit")
    tiers = AUDIO
    disk_source = "files"
    example_png = "audio_examples.png"
    functions = ClassifierFunctions(plan_cases, trained_model, evaluate, example_figure, probe)

    def bar_key(self, fields: CaseFields) -> str:
        """The architecture and condition (``tcn-SBFP``)."""
        return _arch_key(fields)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The architecture and condition, the model, the condition."""
        return (case.threshold_key, case.model, case.condition)

    def chance(self, model: TrainedAudioModel) -> float:
        """Channel share of a map that knows nothing: 1 / channels."""
        return 1 / model.case.channels
