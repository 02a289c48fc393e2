"""Many small networks of one architecture trained at once, as one batched
ensemble (``torch.func``: stacked parameters, ``vmap`` over the members).

Each member sees exactly what it would see trained alone: its own initial
weights, its own data, the same optimizer (the optimizers are element-wise, so
one over the stacked parameters is one per member) and a loss whose gradient
for a member is that member's own loss gradient (the members' losses are
summed).  Batched matrix products may round differently from single ones, so
the members agree with single training to float tolerance, not bit for bit.
Saliency guided members agree until a near-tie in the masking order rounds
the other way (masking is discontinuous); from there they are two correct
trainings apart.

Two trainers use it:

- :func:`train_regressors_together`: the symbolic MLPs
  (:func:`~pytest_chaosmining.core.training.regression.train_regressor`), full batch, with or
  without saliency guided training (each member masks with its own generator,
  so its random draws are the ones it would make alone);
- :func:`train_on_shared_batches`: networks fed the same rows in the same order
  (one shared batch generator), with MSE or cross-entropy: RFEwNA's rounds.

Models with dropout or batch statistics are refused: their random draws or
running buffers would differ from single training.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.core.training.regression import OPTIMIZERS, ProgressFn, RegressionTraining
from pytest_chaosmining.core.training.saliency import mask_lowest

#: losses of :func:`train_on_shared_batches`: name → per-member loss of outputs ``(rows, out)`` and targets
LOSSES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mse": nn.functional.mse_loss,
    "cross_entropy": nn.functional.cross_entropy,
}


def stackable(models: Sequence[nn.Module]) -> bool:
    """Whether ``models`` can be one ensemble: one class, the same parameter shapes,
    no active dropout and no batch-statistics buffers."""
    if not models:
        return False
    shapes = {tuple((name, tuple(p.shape)) for name, p in m.named_parameters()) for m in models}
    has_dropout = any(isinstance(layer, nn.Dropout) and layer.p > 0 for m in models for layer in m.modules())
    has_buffers = any(True for m in models for _ in m.buffers())
    return len(shapes) == 1 and len({type(m) for m in models}) == 1 and not has_dropout and not has_buffers


def can_train_together(models: Sequence[nn.Module], settings: RegressionTraining) -> bool:
    """Whether :func:`train_regressors_together` reproduces single training for ``models``."""
    return settings.batch_size is None and settings.optimizer in OPTIMIZERS and stackable(models)


class StackedModels:
    """``models`` as one batched module: stacked trainable parameters, a forward
    over ``(members, rows, …)`` inputs, and :meth:`write_back` into the models."""

    def __init__(self, models: Sequence[nn.Module]):

        if not stackable(models):
            raise ValueError("these models cannot be one ensemble (class, shapes, dropout or buffers differ)")
        self.models = list(models)
        params, _ = stack_module_state(self.models)
        self.params = {name: p.detach().clone().requires_grad_() for name, p in params.items()}
        skeleton = copy.deepcopy(self.models[0]).to("meta").train()

        def forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
            return functional_call(skeleton, p, (x,))

        self._batched = vmap(forward)

    def __call__(self, xs: torch.Tensor) -> torch.Tensor:
        """Each member's outputs on its own rows: ``xs[i]`` → ``out[i]``."""
        return self._batched(self.params, xs)

    def parameters(self) -> list[torch.Tensor]:
        """The stacked parameters (what an optimizer steps)."""
        return list(self.params.values())

    def write_back(self) -> None:
        """Copy each member's trained parameters into its model and leave it in eval mode."""
        with torch.no_grad():
            for index, model in enumerate(self.models):
                for name, value in model.named_parameters():
                    value.copy_(self.params[name][index])
                model.eval()


def _guided_inputs(
    stacked: StackedModels, xs: torch.Tensor, guide: SaliencyGuided, generators: Sequence[torch.Generator]
) -> torch.Tensor:
    """Each member's batch with its ``guide.k`` lowest-gradient inputs masked, as
    :func:`~pytest_chaosmining.core.training.saliency.guided_loss` masks it alone
    (input gradients of the prediction; the member's own generator for the noise)."""
    x = xs.detach().requires_grad_(True)
    with torch.enable_grad():
        (grads,) = torch.autograd.grad(stacked(x).sum(), x)
    return torch.stack(
        [mask_lowest(xs[i], grads[i], guide.k, guide.absolute, generators[i]) for i in range(len(generators))]
    )


def train_regressors_together(
    models: Sequence[nn.Module],
    xs: torch.Tensor,
    ys: torch.Tensor,
    settings: RegressionTraining,
    progress: ProgressFn | None = None,
    guide: SaliencyGuided | None = None,
    seeds: Sequence[int] | None = None,
) -> list[float]:
    """Train ``models`` (same class and shapes) in place on ``xs[i]`` / ``ys[i]``
    (``(members, rows, features)`` / ``(members, rows)``) with MSE, full batch, as
    :func:`~pytest_chaosmining.core.training.regression.train_regressor` trains each alone —
    saliency guided when ``guide`` is given (``seeds``: each member's training seed,
    which seeds its masking noise); each member's final training loss."""
    if not can_train_together(models, settings):
        raise ValueError("these models cannot be trained as one ensemble (shapes, dropout, batches or optimizer)")
    if guide is not None and (seeds is None or len(seeds) != len(models)):
        raise ValueError("saliency guided ensembles need one training seed per member")
    generators = [torch.Generator(device="cpu").manual_seed(s) for s in seeds or ()]
    stacked = StackedModels(models)
    optimizer = OPTIMIZERS[settings.optimizer](stacked.parameters(), lr=settings.lr)
    targets = ys.reshape(ys.shape[0], -1, 1)
    start = time.perf_counter()
    losses = torch.zeros(len(models))
    for epoch in range(1, settings.epochs + 1):
        masked = None if guide is None else _guided_inputs(stacked, xs, guide, generators)
        optimizer.zero_grad(set_to_none=True)
        out = stacked(xs)
        losses = ((out - targets) ** 2).mean(dim=(1, 2))
        if masked is not None and guide is not None:
            losses = losses + guide.lam * ((out - stacked(masked)) ** 2).mean(dim=(1, 2))
        losses.sum().backward()
        optimizer.step()
        if progress is not None:
            progress(epoch, settings.epochs, time.perf_counter() - start, losses.detach().mean())
    stacked.write_back()
    return [float(v) for v in losses.detach()]


def train_on_shared_batches(
    models: Sequence[nn.Module],
    xs: torch.Tensor,
    target: torch.Tensor,
    loss: str,
    epochs: int,
    lr: float,
    batch_size: int | None,
    seed: int,
) -> None:
    """Train ``models`` (same class and shapes) in place with Adam, member ``i`` on
    ``xs[i]`` (``(members, rows, features)``), all on the same ``target`` rows in the
    same batch order (``torch.randperm`` from a generator seeded ``seed``, one draw
    per epoch, as a single network trained with that generator), and leave them in
    eval mode.  ``loss``: a name in :data:`LOSSES`."""
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose from {sorted(LOSSES)}")
    loss_fn = LOSSES[loss]
    stacked = StackedModels(models)
    optimizer = torch.optim.Adam(stacked.parameters(), lr=lr)
    n = xs.shape[1]
    batch = batch_size or n
    generator = torch.Generator().manual_seed(seed)
    per_member = torch.func.vmap(loss_fn, in_dims=(0, None))
    for _ in range(epochs):
        batches = [slice(None)] if batch >= n else torch.randperm(n, generator=generator).split(batch)
        for idx in batches:
            optimizer.zero_grad(set_to_none=True)
            per_member(stacked(xs[:, idx]), target[idx]).sum().backward()
            optimizer.step()
    stacked.write_back()
