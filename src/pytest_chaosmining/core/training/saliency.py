"""Saliency guided training (Ismail et al., 2021; REFERENCE §6) as a training mode.

Per batch: input gradients of the target in eval mode; the ``k`` fraction of
input elements with the lowest gradient (signed, as the reference, or ``|·|``)
are replaced by uniform random values in that sample's ``[min, max]``; in train
mode the loss is the task loss plus ``λ`` times a consistency term between the
outputs on the original and the masked batch:

- classifiers: ``KL(p(x) ‖ p(x̃))`` over softmax outputs (batch mean), as the paper;
- regressors (the symbolic MLPs, which have no distribution over labels): the
  mean squared difference of the two predictions, ``mean((f(x) − f(x̃))²)`` —
  zero exactly when masking the low-saliency inputs does not change the output,
  which is what the KL term asks of a classifier.

Masking is per input element (pixel channel, waveform sample, feature), as the
paper does for images and multivariate time series.  The targets of the
gradients are the true labels (classifiers) or the prediction itself
(regressors).  Recurrent models run the eval-mode gradient with cuDNN off (its
RNN backward refuses eval mode).
"""

from __future__ import annotations

import torch
from torch import nn

from pytest_chaosmining.core.training.modes import SaliencyGuided


def input_gradients(model: nn.Module, x: torch.Tensor, target: torch.Tensor | None) -> torch.Tensor:
    """Gradients of the ``target`` output (regression: the output) w.r.t. ``x``, in eval mode."""
    was_training = model.training
    model.eval()
    x = x.detach().requires_grad_(True)
    try:
        with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
            out = model(x)
            selected = out.sum() if target is None else out.gather(1, target.view(-1, 1)).sum()
            (grads,) = torch.autograd.grad(selected, x)
    finally:
        model.train(was_training)
    return grads


def mask_lowest(
    x: torch.Tensor, grads: torch.Tensor, k: float, absolute: bool, generator: torch.Generator | None = None
) -> torch.Tensor:
    """``x`` with each sample's ``k`` fraction of lowest-gradient elements replaced by
    uniform random values in that sample's ``[min, max]``."""
    n = x.shape[0]
    flat = x.detach().reshape(n, -1)
    score = grads.reshape(n, -1)
    if absolute:
        score = score.abs()
    count = max(1, int(k * flat.shape[1]))
    lowest = score.topk(count, dim=1, largest=False).indices
    low = flat.min(dim=1, keepdim=True).values
    high = flat.max(dim=1, keepdim=True).values
    noise = torch.rand(n, count, generator=generator, device="cpu").to(x.device, x.dtype)
    masked = flat.clone()
    masked.scatter_(1, lowest, low + noise * (high - low))
    return masked.view_as(x)


def consistency(out: torch.Tensor, out_masked: torch.Tensor, classification: bool) -> torch.Tensor:
    """KL(p(x) ‖ p(x̃)) for classifiers, mean squared difference for regressors."""
    if classification:
        return nn.functional.kl_div(
            out_masked.log_softmax(1), out.log_softmax(1), reduction="batchmean", log_target=True
        )
    return (out - out_masked).pow(2).mean()


def guided_loss(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    guide: SaliencyGuided,
    classification: bool,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """The saliency guided loss of one batch (the model is left in train mode)."""
    grads = input_gradients(model, x, y if classification else None)
    x_masked = mask_lowest(x, grads, guide.k, guide.absolute, generator)
    model.train()
    out = model(x)
    task = nn.functional.cross_entropy(out, y) if classification else nn.functional.mse_loss(out, y)
    return task + guide.lam * consistency(out, model(x_masked), classification)
