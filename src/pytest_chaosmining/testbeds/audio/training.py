"""Training or loading an audio case's classifier, its clips, and the channel × segment
context audio explainers get (torch at the top: the heavy half of the audio testbed,
whose :mod:`.cases` declare the cases)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.training.classification import pcm_to_float
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE, AttributionContext
from pytest_chaosmining.suite_kit.classifier import classifier_model
from pytest_chaosmining.suite_kit.classifier_training import ClassifierRecipe, cached_data
from pytest_chaosmining.testbeds.audio import data
from pytest_chaosmining.testbeds.audio.cases import SUITE, TIME_SEGMENTS, AudioCase, TrainedAudioModel, audio_code
from pytest_chaosmining.testbeds.audio.data import CLASSES, find_speech_commands, speech_commands_files
from pytest_chaosmining.testbeds.audio.models import build_audio_model, is_recurrent

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.run_view import RunView

#: the modules whose source decides the clips
DATA_CODE = ("pytest_chaosmining.testbeds.audio.data", "pytest_chaosmining.testbeds.noise_conditions")


def data_split(case: AudioCase, split: str, cache: ModelCache | None = None) -> Any:
    """The ``train`` or ``val`` clips of ``case`` (embedded ones through ``cache``'s data, where given)."""
    n = case.n_train if split == "train" else case.n_val
    spec = data.AudioSpec(
        case.condition, case.channels, case.rate, case.duration, n, split, case.seed, case.source, case.data_dir
    )
    return cached_data(case, spec, cache, data.generate, data.AudioData, DATA_CODE)


def n_classes(case: AudioCase) -> int:
    """Number of classes of the case's source (10 embedded words; the Speech Commands folders)."""
    if case.source == "embedded":
        return len(CLASSES)
    return len(speech_commands_files(find_speech_commands(case.data_dir or "."), "val")[1])


def _waves(split: data.AudioData) -> np.ndarray:
    return split.waves


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


def cudnn_guard(model: torch.nn.Module) -> Callable[[], AbstractContextManager[object]]:
    """The context each attribution call on ``model`` runs in: a recurrent model's with
    cuDNN disabled (eval-mode attribution on CUDA)."""
    recurrent = is_recurrent(model)
    return lambda: torch.backends.cudnn.flags(enabled=not recurrent)


def run_model(run: RunView, case: AudioCase) -> TrainedAudioModel:
    """The classifier of ``case`` (any suite's: audio, saliency), trained at most once per run
    and cached on disk."""
    return classifier_model(run, SUITE, trained_model, case)


#: how an audio classifier is built, fed, kept (through the model cache) and explained
AUDIO_TRAINING = ClassifierRecipe[AudioCase](
    audio_code, untrained_model, data_split, _waves, attribution_context, pcm_to_float, cudnn_guard
)
#: ``case``'s classifier from the cache or trained on its clips, scored on the validation clips
trained_model = AUDIO_TRAINING.trained_model
#: a zero-argument call attributing validation clips (:meth:`ClassifierRecipe.attribution_call`)
attribution_call = AUDIO_TRAINING.attribution_call
