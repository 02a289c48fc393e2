"""The IteROAR suite's heavy half: a chain's masks, retraining and scores (torch)."""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.training.classification import (
    ClassifierTraining,
    predict_array,
    to_float,
    train_classifier,
)
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.suites.iteroar.masks import (
    apply_masks,
    box_shares,
    cumulative_area,
    leakage_accuracy,
    maps,
    mask_metrics,
    top_fraction_masks,
)
from pytest_chaosmining.suites.iteroar.spec import REFERENCE, SUITE, ChainResult, IteroarCase, iteroar_code
from pytest_chaosmining.testbeds.digits.training import attribution_context, untrained_model
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Remembered


def _rng(case: IteroarCase, stream: str, iteration: int) -> np.random.Generator:
    h = int(hashlib.sha256(stream.encode()).hexdigest()[:8], 16)
    return np.random.default_rng(np.random.SeedSequence([case.base.seed, iteration, h]))


def _explainer_masks(
    case: IteroarCase,
    model: Any,
    images: np.ndarray,
    explainer: Explainer | None,
    device: torch.device,
    internal_batch_size: int,
    rng: np.random.Generator,
    preds: np.ndarray | None = None,
) -> np.ndarray:
    """Masks of ``images`` from ``explainer``'s maps of ``model`` (target: the
    predicted class, ``preds`` where the caller knows it); ``explainer`` None
    draws uniformly random maps."""
    if explainer is None:
        return top_fraction_masks(rng.random((len(images),) + images.shape[2:]), case.fraction, rng)
    preds = predict_array(model, images) if preds is None else preds
    context = attribution_context(case.base, device, internal_batch_size)
    out = []
    for start in range(0, len(images), case.batch):
        x = to_float(torch.from_numpy(images[start : start + case.batch])).to(device)
        target = torch.from_numpy(preds[start : start + case.batch]).to(device)
        attr, _ = timed(functools.partial(attribute, explainer, model, x, target, context), device)
        out.append(maps(attr.cpu().numpy()))
    return top_fraction_masks(np.concatenate(out), case.fraction, rng)


def _retrain(
    case: IteroarCase,
    previous: Any,
    images: np.ndarray,
    labels: np.ndarray,
    iteration: int,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[..., None] | None,
) -> tuple[Any, float]:
    """f_{i+1}: ``previous`` retrained on the masked ``images`` (cached by their digest)."""
    base = case.base
    scratch = case.retrain_epochs is None
    epochs = base.epochs if case.retrain_epochs is None else case.retrain_epochs
    config = {
        **base.training_config(device.type),
        "iteroar_iteration": iteration,
        "retrain_epochs": epochs,
        "from_scratch": scratch,
        "data_sha256": hashlib.sha256(images.tobytes()).hexdigest(),
        "n_retrain": len(images),
    }
    if not scratch:
        config["previous"] = hashlib.sha256(
            b"".join(v.cpu().numpy().tobytes() for v in previous.state_dict().values())
        ).hexdigest()

    def build() -> torch.nn.Module:
        return untrained_model(base) if scratch else copy.deepcopy(previous).cpu()

    def fit(model: torch.nn.Module) -> float:
        settings = ClassifierTraining(epochs, base.batch_size, base.lr, t0=epochs)
        return train_classifier(
            model, torch.from_numpy(images), torch.from_numpy(labels), settings, base.seed + iteration, progress
        )

    def check(model: torch.nn.Module) -> float:
        """Accuracy on the masked training images (the pack's reproduction check)."""

        return float((predict_array(model, images) == labels).mean())

    model, meta = cache.model(SUITE, config, build, fit, device, iteroar_code(), check)
    return model, float(meta["train_seconds"])


def run_chain(
    case: IteroarCase,
    f0: Any,
    train: Any,
    explainer: Explainer | None,
    cache: ModelCache,
    device: torch.device,
    internal_batch_size: int,
    progress: Callable[..., None] | None = None,
    stream: str = REFERENCE,
    remembered: Remembered[float] | None = None,
) -> ChainResult:
    """Run one chain from the trained vision model ``f0`` (with its validation
    data) and its training data ``train``; ``explainer`` None is the reference
    chain.  ``stream`` names the chain in the tie-breaking random draws;
    ``remembered(key, compute)`` keeps the mask-leakage classifiers' accuracies
    between runs, keyed by a digest of the masks and labels they learn from."""
    n = min(case.n_explain, len(f0.val))
    test_x, test_y, boxes = f0.val.images[:n], f0.val.labels[:n], f0.val.boxes[:n]
    train_x, train_y = train.images[: case.n_retrain], train.labels[: case.n_retrain]
    model, test_preds = f0.model, f0.predictions[:n]
    accuracy, seconds = [float((test_preds == test_y).mean())], []
    masks, box_share, box_covered, leak = [], [], [], (float("nan"), float("nan"))
    untrained_share = float("nan")
    for i in range(case.iterations + 1):
        m_test = _explainer_masks(
            case, model, test_x, explainer, device, internal_batch_size, _rng(case, f"{stream}-test", i), test_preds
        )
        masks.append(m_test)
        if i == case.iterations:
            break
        m_train = _explainer_masks(
            case, model, train_x, explainer, device, internal_batch_size, _rng(case, f"{stream}-train", i)
        )
        on_box, covered = box_shares(m_test, boxes)
        box_share.append(float(on_box.mean()))
        box_covered.append(float(covered.mean()))
        if i == 0:
            leak = _leakage(case, m_train, train_y, m_test, test_y, remembered)
            untrained_share = _untrained_box_share(case, test_x, boxes, explainer, device, internal_batch_size, stream)
        train_x = apply_masks(train_x, m_train, case.fill)
        test_x = apply_masks(test_x, m_test, case.fill)
        model, secs = _retrain(case, model, train_x, train_y, i + 1, cache, device, progress)
        seconds.append(secs)
        test_preds = predict_array(model, test_x)
        accuracy.append(float((test_preds == test_y).mean()))
    metrics = mask_metrics(masks)  # the probe m_I included
    return ChainResult(
        accuracy,
        metrics["mmo"],
        metrics["mamo"],
        cumulative_area(masks[:-1]),
        box_share,
        box_covered,
        leak[0],
        leak[1],
        seconds,
        untrained_share,
    )


def _leakage(
    case: IteroarCase,
    m_train: np.ndarray,
    train_y: np.ndarray,
    m_test: np.ndarray,
    test_y: np.ndarray,
    remembered: Remembered[float] | None,
) -> tuple[float, float]:
    """The mask-leakage accuracies with the true labels and with shuffled ones."""
    digest = hashlib.sha256(b"".join(a.tobytes() for a in (m_train, train_y, m_test, test_y))).hexdigest()

    def leaked(shuffle: bool) -> float:
        def compute() -> float:
            return leakage_accuracy(m_train, train_y, m_test, test_y, case.base.seed, shuffle_labels=shuffle)

        key = {"leakage": digest, "seed": case.base.seed, "shuffle_labels": shuffle}
        return remembered(key, compute) if remembered is not None else compute()

    return leaked(False), leaked(True)


def _untrained_box_share(
    case: IteroarCase,
    images: np.ndarray,
    boxes: np.ndarray,
    explainer: Explainer | None,
    device: torch.device,
    internal_batch_size: int,
    stream: str,
) -> float:
    """The first test mask's share on the true box when the maps come from the
    untrained f_0 (same architecture and seed): the model-randomisation check."""
    untrained = untrained_model(case.base).to(device)
    masks = _explainer_masks(
        case, untrained, images, explainer, device, internal_batch_size, _rng(case, f"{stream}-untrained", 0)
    )
    return float(box_shares(masks, boxes)[0].mean())
