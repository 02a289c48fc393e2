"""Training loops.  Full-batch tensors on the device, no DataLoader: the
reference's shuffling DataLoader cost ~75% of its training time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from pytest_chaosmining.core.training.saliency import SaliencyGuided, guided_loss

ProgressFn = Callable[[int, int, float, "torch.Tensor"], None]  # epoch, epochs, elapsed s, loss

OPTIMIZERS = {
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad,
    "asgd": torch.optim.ASGD,
}


@dataclass(frozen=True)
class RegressionTraining:
    """Hyper-parameters of a regression training run."""

    epochs: int = 1000
    lr: float = 1e-3
    optimizer: str = "adam"
    batch_size: int | None = None  # None: full batch, as the reference


def train_regressor(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    settings: RegressionTraining,
    seed: int,
    progress: ProgressFn | None = None,
    guide: SaliencyGuided | None = None,
    on_epoch: Callable[[int, nn.Module], None] | None = None,
) -> float:
    """Train ``model`` in place with MSE (plus the saliency guided term when
    ``guide`` is given); returns the final training loss.  ``on_epoch(epoch,
    model)`` is called after every epoch (and with epoch 0 before the first)."""
    if settings.optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {settings.optimizer!r}; choose from {sorted(OPTIMIZERS)}")
    optimizer = OPTIMIZERS[settings.optimizer](model.parameters(), lr=settings.lr)
    y = y.reshape(-1, 1)
    n = len(x)
    batch = settings.batch_size or n
    generator = torch.Generator(device="cpu").manual_seed(seed)
    start = time.perf_counter()
    model.train()
    if on_epoch is not None:
        on_epoch(0, model)
    for epoch in range(1, settings.epochs + 1):
        if batch >= n:
            batches: list[slice | torch.Tensor] = [slice(None)]
        else:
            order = torch.randperm(n, generator=generator).to(x.device)
            batches = [order[i : i + batch] for i in range(0, n, batch)]
        for idx in batches:
            optimizer.zero_grad(set_to_none=True)
            if guide is None:
                loss = nn.functional.mse_loss(model(x[idx]), y[idx])
            else:
                loss = guided_loss(model, x[idx], y[idx], guide, classification=False, generator=generator)
            loss.backward()
            optimizer.step()
        if progress is not None:
            progress(epoch, settings.epochs, time.perf_counter() - start, loss.detach())
        if on_epoch is not None:
            on_epoch(epoch, model)
    model.eval()
    return float(loss.detach())
