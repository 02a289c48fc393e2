"""Training or loading a classifier suite's model through the model cache (torch at the top:
the heavy half of :mod:`.classifier`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.training.classification import (
    ClassifierTraining,
    predict_array,
    to_float,
    train_classifier,
)
from pytest_chaosmining.suite_kit.classifier import CaseT, ClassifierCase, TrainedClassifier

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.storage.keys import Code
    from pytest_chaosmining.run_view import Remembered


def cached_classifier(
    suite: str,
    case: ClassifierCase,
    cache: ModelCache,
    device: torch.device,
    code: Code,
    build: Callable[[], torch.nn.Module],
    train_data: Callable[[], tuple[np.ndarray, np.ndarray]],
    val: tuple[np.ndarray, np.ndarray],
    progress: Callable[..., None] | None,
    prepare: Callable[[torch.Tensor], torch.Tensor] | None = None,
    remembered: Remembered[list[int]] | None = None,
) -> tuple[torch.nn.Module, dict[str, Any], np.ndarray]:
    """``case``'s classifier from the cache (keyed by its training config and the
    source of ``code``), else built by ``build`` and trained on ``train_data()``
    (inputs, labels; ``prepare`` turns a batch into floats); checked and scored on
    ``val``.  The model, its cache metadata and its validation predictions (kept by
    ``remembered(key, predict)`` under the model's weights where given)."""
    prep = prepare or to_float
    val_inputs, val_labels = val

    def fit(model: torch.nn.Module) -> float:
        inputs, labels = train_data()
        settings = ClassifierTraining(case.epochs, case.batch_size, case.lr, t0=case.epochs)
        return train_classifier(
            model, torch.from_numpy(inputs), torch.from_numpy(labels), settings, case.seed, progress, prep,
            case.guide, case.precision,
        )  # fmt: skip

    def check(model: torch.nn.Module) -> float:
        return float((predict_array(model, val_inputs, prep) == val_labels).mean())

    model, meta = cache.model(suite, case.training_config(device.type), build, fit, device, code, check)
    if remembered is None:
        return model, meta, predict_array(model, val_inputs, prep)
    key: dict[str, object] = {"predictions": case.id, "weights": weights_digest(model)}
    kept = remembered(key, lambda: predict_array(model, val_inputs, prep).tolist())
    return model, meta, np.asarray(kept, dtype=np.int64)


def trained_classifier(
    case: CaseT,
    cache: ModelCache,
    device: torch.device,
    code: Code,
    untrained: Callable[[CaseT], torch.nn.Module],
    split: Callable[[CaseT, str, ModelCache | None], Any],
    inputs_of: Callable[[Any], np.ndarray],
    progress: Callable[..., None] | None = None,
    remembered: Remembered[list[int]] | None = None,
    prepare: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> TrainedClassifier[CaseT]:
    """Load ``case``'s classifier from the cache or train it (:func:`cached_classifier`: built by
    ``untrained``, its data the ``train`` and ``val`` ``split``s, their ``inputs_of`` and labels);
    scored on the validation split (its predictions kept by ``remembered`` where given)."""

    def train_data() -> tuple[np.ndarray, np.ndarray]:
        train = split(case, "train", None)
        return inputs_of(train), train.labels

    val = split(case, "val", cache)
    model, meta, pred = cached_classifier(
        case.cache_suite, case, cache, device, code, lambda: untrained(case), train_data, (inputs_of(val), val.labels),
        progress, prepare, remembered,
    )  # fmt: skip
    return TrainedClassifier(case, model, val, pred, float((pred == val.labels).mean()), float(meta["train_seconds"]))
