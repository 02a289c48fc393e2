"""Many small regressors of one architecture trained at once, as one batched
ensemble (``torch.func``: stacked parameters, ``vmap`` over the members).

Each member sees exactly what :func:`~pytest_chaosmining.core.training.train_regressor`
would give it alone: its own initial weights, its own full-batch data, the same
optimizer (the optimizers are element-wise, so one over the stacked parameters
is one per member) and a loss whose gradient for a member is that member's MSE
gradient.  Batched matrix products may round differently from single ones, so
the members agree with single training to float tolerance, not bit for bit.
Full batch only, without saliency guided training or dropout (their random
draws would differ).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

import torch
from torch import nn

from pytest_chaosmining.core.training import OPTIMIZERS, ProgressFn, RegressionTraining


def can_train_together(models: Sequence[nn.Module], settings: RegressionTraining) -> bool:
    """Whether :func:`train_regressors_together` reproduces single training for ``models``."""
    if not models or settings.batch_size is not None or settings.optimizer not in OPTIMIZERS:
        return False
    shapes = {tuple((name, tuple(p.shape)) for name, p in m.named_parameters()) for m in models}
    has_dropout = any(isinstance(layer, nn.Dropout) and layer.p > 0 for m in models for layer in m.modules())
    return len(shapes) == 1 and len({type(m) for m in models}) == 1 and not has_dropout


def train_regressors_together(models: Sequence[nn.Module], xs: torch.Tensor, ys: torch.Tensor,
                              settings: RegressionTraining, progress: ProgressFn | None = None) -> list[float]:
    """Train ``models`` (same class and shapes) in place on ``xs[i]`` / ``ys[i]``
    (``(members, rows, features)`` / ``(members, rows)``) with MSE, full batch;
    each member's final training loss."""
    from torch.func import functional_call, stack_module_state, vmap

    if not can_train_together(models, settings):
        raise ValueError("these models cannot be trained as one ensemble (shapes, dropout, batches or optimizer)")
    params, buffers = stack_module_state(list(models))
    params = {name: p.detach().clone().requires_grad_() for name, p in params.items()}
    skeleton = copy.deepcopy(models[0]).to("meta").train()

    def forward(p: dict[str, torch.Tensor], b: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        return functional_call(skeleton, (p, b), (x,))

    batched = vmap(forward)
    optimizer = OPTIMIZERS[settings.optimizer](list(params.values()), lr=settings.lr)
    targets = ys.reshape(ys.shape[0], -1, 1)
    start = time.perf_counter()
    losses = torch.zeros(len(models))
    for epoch in range(1, settings.epochs + 1):
        optimizer.zero_grad(set_to_none=True)
        losses = ((batched(params, buffers, xs) - targets) ** 2).mean(dim=(1, 2))
        losses.sum().backward()
        optimizer.step()
        if progress is not None:
            progress(epoch, settings.epochs, time.perf_counter() - start, losses.detach().mean())
    with torch.no_grad():
        for index, model in enumerate(models):
            for name, value in model.named_parameters():
                value.copy_(params[name][index])
            model.eval()
    return [float(v) for v in losses.detach()]
