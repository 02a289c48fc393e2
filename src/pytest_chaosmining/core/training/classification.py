"""Classifier training for the vision and audio suites: AdamW with cosine warm
restarts, as the paper, over compact in-memory tensors (uint8 images, int16
waveforms) turned into floats batch by batch by a ``prepare`` function, in fp32
or with bf16 autocast (``--chaosmining-precision``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn

from pytest_chaosmining.core.training.modes import PRECISIONS, STANDARD_PRECISION
from pytest_chaosmining.core.training.saliency import SaliencyGuided, guided_loss

if TYPE_CHECKING:
    import numpy as np

ProgressFn = Callable[[int, int, float, "torch.Tensor"], None]
PrepareFn = Callable[["torch.Tensor"], "torch.Tensor"]


@dataclass(frozen=True)
class ClassifierTraining:
    """Hyper-parameters of a classification run (paper: 30 epochs, batch 128, lr 1e-3, T_0=30)."""

    epochs: int = 30
    batch_size: int = 128
    lr: float = 1e-3
    t0: int = 30
    weight_decay: float = 1e-2


def to_float(images: torch.Tensor) -> torch.Tensor:
    """uint8 images in 0..255 -> float in [0, 1]."""
    return images.float().div_(255.0)


def pcm_to_float(waves: torch.Tensor) -> torch.Tensor:
    """int16 waveforms -> float in [-1, 1]."""
    return waves.float().div_(32767.0)


#: the share of a GPU's free memory the compact training inputs may take to be kept on it
RESIDENT_SHARE = 0.25


def resident(tensor: torch.Tensor, device: torch.device) -> torch.Tensor:
    """``tensor`` on a CUDA ``device`` when it takes at most :data:`RESIDENT_SHARE` of
    the free memory there (batches are then indexed on the GPU, with no copy
    from the host per batch); otherwise, and on CPU, unchanged."""
    if device.type != "cuda" or tensor.device == device:
        return tensor
    free, _ = torch.cuda.mem_get_info(device)
    if tensor.numel() * tensor.element_size() > RESIDENT_SHARE * free:
        return tensor
    return tensor.to(device)


def _precision_context(precision: str, device: torch.device) -> contextlib.AbstractContextManager[None]:
    """The arithmetic of one forward and loss: fp32 as written, or bf16 autocast (the
    weights and the optimiser stay fp32)."""
    if precision == STANDARD_PRECISION:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def train_classifier(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    settings: ClassifierTraining,
    seed: int,
    progress: ProgressFn | None = None,
    prepare: PrepareFn = to_float,
    guide: SaliencyGuided | None = None,
    precision: str = STANDARD_PRECISION,
) -> float:
    """Train ``model`` in place with cross-entropy on ``prepare(inputs[batch])``
    (plus the saliency guided term when ``guide`` is given); returns the last
    epoch's mean loss.  ``precision`` "bf16" runs forward and loss under bf16
    autocast with image batches (4-D) in channels_last; the model comes back in
    fp32 and the standard memory format either way."""
    if precision not in PRECISIONS:  # before the model is touched
        raise ValueError(f"unknown training precision {precision!r}: {' or '.join(PRECISIONS)}")
    images = inputs.dim() == 4 and precision != STANDARD_PRECISION
    if images:
        model.to(memory_format=torch.channels_last)
    try:
        return _train(model, inputs, labels, settings, seed, progress, prepare, guide, precision, images)
    finally:
        if images:
            model.to(memory_format=torch.contiguous_format)
        model.eval()


def _train(
    model: nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    settings: ClassifierTraining,
    seed: int,
    progress: ProgressFn | None,
    prepare: PrepareFn,
    guide: SaliencyGuided | None,
    precision: str,
    images: bool,
) -> float:
    """The epochs of :func:`train_classifier`; returns the last epoch's mean loss."""
    device = next(model.parameters()).device
    inputs, labels = resident(inputs, device), resident(labels, device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=settings.t0)
    generator = torch.Generator().manual_seed(seed)
    n = len(labels)
    steps = max(1, -(-n // settings.batch_size))
    start = time.perf_counter()
    epoch_loss = torch.zeros(())
    for epoch in range(1, settings.epochs + 1):
        model.train()
        order = torch.randperm(n, generator=generator).to(inputs.device)  # one copy per epoch, not per batch
        epoch_loss = torch.zeros((), device=device)
        for step in range(steps):
            idx = order[step * settings.batch_size : (step + 1) * settings.batch_size]
            x = prepare(inputs[idx].to(device))
            if images:
                x = x.contiguous(memory_format=torch.channels_last)
            y = labels[idx].to(device)
            optimizer.zero_grad(set_to_none=True)
            with _precision_context(precision, device):
                if guide is None:
                    loss = nn.functional.cross_entropy(model(x), y)
                else:
                    loss = guided_loss(model, x, y, guide, classification=True, generator=generator)
            loss.backward()
            optimizer.step()
            scheduler.step(epoch - 1 + (step + 1) / steps)
            epoch_loss += loss.detach() * len(idx)
        if progress is not None:
            progress(epoch, settings.epochs, time.perf_counter() - start, epoch_loss / n)
    return float(epoch_loss / n)


@torch.no_grad()
def predict(
    model: nn.Module, images: torch.Tensor, batch_size: int = 256, prepare: PrepareFn = to_float
) -> torch.Tensor:
    """Predicted classes of ``prepare(images)``."""
    device = next(model.parameters()).device
    model.eval()
    out = [
        model(prepare(images[i : i + batch_size].to(device))).argmax(1).cpu() for i in range(0, len(images), batch_size)
    ]
    return torch.cat(out)


def predict_array(model: nn.Module, inputs: np.ndarray, prepare: PrepareFn = to_float) -> np.ndarray:
    """:func:`predict` on a NumPy array of compact inputs; returns the classes as a NumPy array."""
    return predict(model, torch.from_numpy(inputs), prepare=prepare).numpy()
