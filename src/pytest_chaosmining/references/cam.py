"""The class activation maps as their papers define them, on a layer's activations
``A`` (``(N, K, h, w)``) and the explained output's gradients ``g = ∂y/∂A``:

- Grad-CAM (Selvaraju et al. 2017, arXiv:1610.02391, Eqs. 1–2): ``α_k = mean_ij g_kij``,
  ``L = ReLU(Σ_k α_k A_k)``;
- Grad-CAM++ (Chattopadhay et al. 2018, arXiv:1710.11063, Eq. 19, the exponential of the
  score making the higher derivatives powers of ``g``): ``a_kij = g² / (2 g² + Σ_ab A_kab · g³)``
  at each position ``ij`` (0 where ``g`` is 0), ``w_k = Σ_ij a_kij ReLU(g_kij)``,
  ``L = ReLU(Σ_k w_k A_k)``;
- XGrad-CAM (Fu et al. 2020, arXiv:2008.02312, Eq. 14): ``α_k = Σ_ij (A_kij / Σ_ab A_kab) g_kij``,
  ``L = ReLU(Σ_k α_k A_k)`` (the ReLU as Grad-CAM's, for a picture);
- LayerCAM (Jiang et al. 2021, IEEE TIP 30, Eqs. 4–5): ``L = ReLU(Σ_k ReLU(g_kij) A_kij)``.

Each gives the layer map ``(N, h, w)``; :mod:`.formulas` brings it to the input's size."""

from __future__ import annotations

from collections.abc import Callable

import torch

from pytest_chaosmining.explainers import NotApplicable
from pytest_chaosmining.references.exact import Target, explained_output

#: a layer map from a layer's activations and gradients, ``(N, K, h, w)`` each (its settings as keywords)
LayerRule = Callable[..., torch.Tensor]


def activations_and_gradients(
    model: torch.nn.Module, inputs: torch.Tensor, target: Target, layer_name: str | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The activations of ``model``'s layer ``layer_name`` on ``inputs`` and the explained
    output's gradients with respect to them."""
    if layer_name is None:
        raise NotApplicable("a class activation map needs a layer (the suite's last 2-D convolution)")
    kept: list[torch.Tensor] = []
    handle = model.get_submodule(layer_name).register_forward_hook(lambda _m, _i, out: kept.append(out))
    try:
        with torch.enable_grad():
            output = model(inputs.detach().requires_grad_(True))
            (activation,) = kept
            (grad,) = torch.autograd.grad(explained_output(output, target).sum(), activation)
    finally:
        handle.remove()
    if activation.dim() != 4:
        raise NotApplicable(f"layer {layer_name!r} gives {activation.dim()}-D activations, not (N, K, h, w)")
    return activation.detach(), grad.detach()


def grad_cam(a: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Grad-CAM's layer map."""
    alpha = g.mean(dim=(2, 3), keepdim=True)
    return torch.relu((alpha * a).sum(1))


def grad_cam_pp(a: torch.Tensor, g: torch.Tensor, eps: float = 0.0) -> torch.Tensor:
    """Grad-CAM++'s layer map (Eq. 19: the activations' sum over the map times ``g³`` at each
    position); ``eps`` added to the denominator (0 in the paper; a library's regulariser,
    which outweighs ``2 g²`` where the gradients are small)."""
    summed = a.sum(dim=(2, 3), keepdim=True)
    denominator = 2 * g**2 + summed * g**3 + eps
    safe = torch.where(denominator != 0, denominator, torch.ones_like(denominator))
    coefficient = torch.where((g != 0) & (denominator != 0), g**2 / safe, torch.zeros_like(g))
    weights = (coefficient * torch.relu(g)).sum(dim=(2, 3), keepdim=True)
    return torch.relu((weights * a).sum(1))


def xgrad_cam(a: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """XGrad-CAM's layer map (a channel whose activations sum to 0 weighs 0)."""
    summed = a.sum(dim=(2, 3), keepdim=True)
    safe = torch.where(summed != 0, summed, torch.ones_like(summed))
    alpha = torch.where(summed != 0, (a / safe * g).sum(dim=(2, 3), keepdim=True), torch.zeros_like(summed))
    return torch.relu((alpha * a).sum(1))


def layer_cam(a: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """LayerCAM's layer map."""
    return torch.relu((torch.relu(g) * a).sum(1))


def min_max(layer_map: torch.Tensor) -> torch.Tensor:
    """Each sample's layer map shifted to 0 and scaled to 1 at its maximum (a display
    convention some libraries apply before resizing: ``normalised=True``; a constant map 0)."""
    flat = layer_map.reshape(layer_map.shape[0], -1)
    low = flat.min(1).values.view(-1, 1, 1)
    span = (flat.max(1).values.view(-1, 1, 1) - low).clamp(min=torch.finfo(layer_map.dtype).tiny)
    return (layer_map - low) / span


#: where each class activation map is defined
CITATIONS = {
    "GradCAM": "Selvaraju et al. 2017, arXiv:1610.02391, Eqs. 1-2",
    "GradCAM++": "Chattopadhay et al. 2018, arXiv:1710.11063, Eq. 19",
    "XGradCAM": "Fu et al. 2020, arXiv:2008.02312, Eq. 14",
    "LayerCAM": "Jiang et al. 2021, IEEE TIP 30:5875, Eqs. 4-5",
}

#: the class activation maps by the name :func:`~pytest_chaosmining.references.formulas.paper` knows them by
CAMS: dict[str, LayerRule] = {
    "GradCAM": grad_cam,
    "GradCAM++": grad_cam_pp,
    "XGradCAM": xgrad_cam,
    "LayerCAM": layer_cam,
}
