"""Training or loading a classifier suite's model through the model cache (torch at the top:
the heavy half of :mod:`.classifier`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import torch

from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.training.classification import (
    ClassifierTraining,
    predict_array,
    to_float,
    train_classifier,
)
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.suite_kit.classifier import CaseT, ClassifierCase, TrainedClassifier

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.core.storage.keys import Code
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.explainers.context import AttributionContext
    from pytest_chaosmining.run_view import Remembered


#: a dataset's spec (a dataclass) and the data it makes
SpecT = TypeVar("SpecT")
DataT = TypeVar("DataT")


def cached_data(
    case: ClassifierCase,
    spec: SpecT,
    cache: ModelCache | None,
    generate: Callable[[SpecT], DataT],
    kind: type[DataT],
    code: Code,
) -> DataT:
    """``generate(spec)`` (a ``kind``): for ``case``'s embedded data with a ``cache``, kept in
    its data store under the case's suite (``code``: the modules whose source decides the
    data); data read from disk, or without a cache, made afresh."""
    if cache is None or case.source != "embedded":
        return generate(spec)
    return cache.data.get_or_make(case.cache_suite, spec, lambda: generate(spec), kind, code)


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
    prepare: Callable[[torch.Tensor], torch.Tensor],
    remembered: Remembered[list[int]] | None = None,
) -> tuple[torch.nn.Module, dict[str, Any], np.ndarray]:
    """``case``'s classifier from the cache (keyed by its training config and the
    source of ``code``), else built by ``build`` and trained on ``train_data()``
    (inputs, labels; ``prepare`` turns a batch into floats); checked and scored on
    ``val``.  The model, its cache metadata and its validation predictions (kept by
    ``remembered(key, predict)`` under the model's weights where given)."""
    val_inputs, val_labels = val

    def fit(model: torch.nn.Module) -> float:
        inputs, labels = train_data()
        settings = ClassifierTraining(case.epochs, case.batch_size, case.lr, t0=case.epochs)
        return train_classifier(
            model, torch.from_numpy(inputs), torch.from_numpy(labels), settings, case.seed, progress, prepare,
            case.guide, case.precision,
        )  # fmt: skip

    def check(model: torch.nn.Module) -> float:
        return float((predict_array(model, val_inputs, prepare) == val_labels).mean())

    model, meta = cache.model(suite, case.training_config(device.type), build, fit, device, code, check)
    if remembered is None:
        return model, meta, predict_array(model, val_inputs, prepare)
    key: dict[str, object] = {"predictions": case.id, "weights": weights_digest(model)}
    kept = remembered(key, lambda: predict_array(model, val_inputs, prepare).tolist())
    return model, meta, np.asarray(kept, dtype=np.int64)


@dataclass(frozen=True)
class ClassifierRecipe(Generic[CaseT]):
    """How a testbed's classifiers are built, fed and kept: ``code`` (the source that
    decides the weights, part of the cache key), ``untrained`` (a case's model before
    training), ``split`` (a case's ``train`` or ``val`` data), ``inputs_of`` (a split's
    inputs; its labels are ``.labels``), ``context`` (what an explainer is offered on a case's
    model: :func:`attribute`'s context), ``prepare`` (a batch before the model; default
    :func:`to_float`) and ``guard`` (for a model, the context each attribution call on it runs in, decided once)."""

    code: Callable[[], Code]
    untrained: Callable[[CaseT], torch.nn.Module]
    split: Callable[[CaseT, str, ModelCache | None], Any]
    inputs_of: Callable[[Any], np.ndarray]
    context: Callable[[CaseT, torch.device, int], AttributionContext]
    prepare: Callable[[torch.Tensor], torch.Tensor] = to_float
    guard: Callable[[torch.nn.Module], Callable[[], AbstractContextManager[object]]] | None = None

    def trained_model(
        self,
        case: CaseT,
        cache: ModelCache,
        device: torch.device,
        progress: Callable[..., None] | None = None,
        remembered: Remembered[list[int]] | None = None,
    ) -> TrainedClassifier[CaseT]:
        """Load ``case``'s classifier from the cache or train it (:func:`cached_classifier`);
        scored on the validation split (its predictions kept by ``remembered`` where given)."""
        split, inputs_of = self.split, self.inputs_of

        def train_data() -> tuple[np.ndarray, np.ndarray]:
            train = split(case, "train", None)
            return inputs_of(train), train.labels

        val = split(case, "val", cache)
        model, meta, pred = cached_classifier(
            case.cache_suite, case, cache, device, self.code(), lambda: self.untrained(case), train_data,
            (inputs_of(val), val.labels), progress, self.prepare, remembered,
        )  # fmt: skip
        return TrainedClassifier(
            case, model, val, pred, float((pred == val.labels).mean()), float(meta["train_seconds"])
        )

    def attribution_call(
        self,
        trained: TrainedClassifier[CaseT],
        explainer: Explainer,
        device: torch.device,
        internal_batch_size: int,
        rows: slice,
        model: torch.nn.Module | None = None,
    ) -> Callable[[], Any]:
        """A zero-argument call attributing validation samples ``rows`` (target: the trained
        model's predicted class) on ``model`` (default: the trained model), inputs prepared
        beforehand so that timing covers the call only; each inside ``guard(model)``'s context where given."""
        inputs = self.prepare(torch.from_numpy(self.inputs_of(trained.val)[rows])).to(device)
        target = torch.from_numpy(trained.predictions[rows]).to(device)
        context = self.context(trained.case, device, internal_batch_size)
        explained = trained.model if model is None else model
        inside = contextlib.nullcontext if self.guard is None else self.guard(explained)

        def call() -> Any:
            with inside():
                return attribute(explainer, explained, inputs, target, context)

        return call
