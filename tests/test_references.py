"""The papers' formulas (pytest_chaosmining.references), each against a case computed by
hand on a tiny network, and as what an explainer declares it implements (``same_as``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.references import cam, gradients, perturbation
from pytest_chaosmining.references.formulas import FORMULAS, named, paper

W = torch.tensor([[1.0, -2.0, 3.0]], dtype=torch.float64)
X = torch.tensor([[1.0, 1.0, 2.0]], dtype=torch.float64)


def _close(found: torch.Tensor, expected: object, rtol: float = 1e-9) -> bool:
    """Whether ``found`` equals the hand-computed ``expected`` (nested lists) to ``rtol``."""
    return torch.allclose(found.double(), torch.tensor(expected, dtype=torch.float64), rtol=rtol, atol=1e-12)


def _linear() -> nn.Module:
    """f(x) = x1 - 2 x2 + 3 x3 + 0.5."""
    layer = nn.Linear(3, 1).double()
    with torch.no_grad():
        layer.weight.copy_(W)
        layer.bias.fill_(0.5)
    return layer


class _Square(nn.Module):
    """f(x) = x1²: its integrated gradients from 0 is x1² exactly; each rule's error is known."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :1] ** 2


def test_saliency_and_input_x_gradient_of_a_linear_model():
    assert gradients.saliency(_linear(), X, 0).tolist() == [[1.0, 2.0, 3.0]]  # |w|
    assert gradients.saliency(_linear(), X, 0, absolute=False).tolist() == [[1.0, -2.0, 3.0]]
    assert gradients.input_x_gradient(_linear(), X, 0).tolist() == [[1.0, -2.0, 6.0]]


@pytest.mark.parametrize(
    ("rule", "steps", "expected"),
    [
        ("riemann_right", 2, 6.0),  # x (grad at x/2 + grad at x) / 2 = 2 (2 + 4) / 2
        ("riemann_left", 2, 2.0),  # 2 (0 + 2) / 2
        ("riemann_middle", 2, 4.0),  # 2 (1 + 3) / 2: exact for a linear gradient
        ("riemann_trapezoid", 3, 4.0),  # 2 (0 / 4 + 2 / 2 + 4 / 4)
        ("gausslegendre", 2, 4.0),  # exact for polynomials of degree 3
    ],
)
def test_integrated_gradients_by_each_rule(rule, steps, expected):
    x = torch.tensor([[2.0, 5.0]], dtype=torch.float64)
    found = gradients.integrated_gradients(_Square(), x, 0, None, steps, rule)
    assert _close(found, [[expected, 0.0]])


def test_integrated_gradients_of_a_linear_model_from_a_baseline_sum_to_the_difference():
    baseline = torch.tensor([[0.0, 2.0, -1.0]], dtype=torch.float64)
    found = gradients.integrated_gradients(_linear(), X, 0, baseline, 7, "riemann_right")
    assert _close(found, [[1.0, 2.0, 9.0]])  # (x - x') w
    assert float(found.sum()) == pytest.approx(float((_linear()(X) - _linear()(baseline)).detach()))


def test_smoothgrad_noise_is_the_stated_share_of_each_sample_s_range():
    """f(x) = x1²: SmoothGrad's mean gradient is 2 (x1 + σ mean(ε)); on [0, 4] a noise level
    of 1/4 is σ = 1, the same draws read back from the seeded generator."""
    x = torch.tensor([[0.0, 4.0]], dtype=torch.float64)
    found = gradients.smoothgrad(_Square(), x, 0, samples=5, noise_level=0.25, seed=3)
    generator = torch.Generator().manual_seed(3)
    draws = [torch.randn((1, 2), generator=generator, dtype=torch.float64)[0, 0] for _ in range(5)]
    assert float(found[0, 0]) == pytest.approx(2 * float(sum(draws)) / 5)
    assert float(found[0, 1]) == 0.0
    assert _close(gradients.smoothgrad(_linear(), X, 0, samples=3, stdev=2.0), [[1.0, -2.0, 3.0]])


class _TwoChannels(nn.Module):
    """A 1 × 1 convolution making A_0 = x and A_1 = 2 x of a 2 × 2 image, the score
    y = A_0[0, 0] + A_1[1, 1]: its gradients g_0, g_1 are one-hot at those positions."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 1, bias=False).double()
        with torch.no_grad():
            self.conv.weight.copy_(torch.tensor([1.0, 2.0], dtype=torch.float64).view(2, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.conv(x)
        return (a[:, 0, 0, 0] + a[:, 1, 1, 1])[:, None]


IMAGE = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=torch.float64)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("GradCAM", [[0.75, 1.5], [2.25, 3.0]]),  # α = 1/4, 1/4: (x + 2 x) / 4
        ("GradCAM++", [[23 / 132 * v for v in row] for row in ([1.0, 2.0], [3.0, 4.0])]),  # 1/(2+10) x + 1/(2+20) 2x
        ("XGradCAM", [[0.9, 1.8], [2.7, 3.6]]),  # α = 1/10, 8/20: 0.1 x + 0.4 · 2x
        ("LayerCAM", [[1.0, 0.0], [0.0, 8.0]]),  # ReLU(g) A: A_0[0,0] = 1, A_1[1,1] = 8
    ],
)
def test_class_activation_maps_by_hand(name, expected):
    model = _TwoChannels()
    a, g = cam.activations_and_gradients(model, IMAGE, 0, "conv")
    assert _close(cam.CAMS[name](a, g)[0], expected)
    context = AttributionContext("vision", "image", "classification", "cnn", torch.device("cpu"), layer_name="conv")
    mapped = paper(name).method(model, IMAGE.float(), 0, context)
    assert mapped.dtype == torch.float32 and _close(mapped[0, 0], expected, rtol=1e-6)


def test_grad_cam_pp_is_told_from_a_port_that_sums_the_cubes_over_the_map():
    """Eq. 19's denominator holds Σ_ab A_ab times g³ at the position; summing g³ A over the map
    (torchcam 0.5.0) gives other weights: 1/3 and 1/10 here, not 1/12 and 1/22."""
    a, g = cam.activations_and_gradients(_TwoChannels(), IMAGE, 0, "conv")
    weights = (g**2 / (2 * g**2 + (g**3 * a).sum(dim=(2, 3), keepdim=True))).nan_to_num() * torch.relu(g)
    assert weights.sum(dim=(2, 3)).flatten().tolist() == pytest.approx([1 / 3, 1 / 10])
    ported = torch.relu((weights.sum(dim=(2, 3), keepdim=True) * a).sum(1))
    assert not torch.allclose(ported, cam.grad_cam_pp(a, g))


def test_occlusion_averages_the_drops_of_the_windows_over_each_element():
    layer = nn.Linear(4, 1, bias=False).double()
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([[1.0, 2.0, 3.0, 4.0]]))
    x = torch.ones((1, 4), dtype=torch.float64)
    # windows of 2 at 0, 1, 2 drop 3, 5, 7; element 1 lies in the first two
    assert perturbation.occlusion(layer, x, 0, (2,), (1,)).tolist() == [[3.0, 4.0, 6.0, 7.0]]


class _Product(nn.Module):
    """f(x) = x1 x2 + x3."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x[:, 0] * x[:, 1] + x[:, 2])[:, None]


def test_feature_ablation_gives_each_group_its_drop():
    x = torch.tensor([[2.0, 3.0, 5.0]], dtype=torch.float64)
    groups = torch.tensor([[0, 0, 1]])
    assert perturbation.feature_ablation(_Product(), x, 0, groups).tolist() == [[6.0, 6.0, 5.0]]
    assert perturbation.feature_ablation(_Product(), x, 0, None).tolist() == [[6.0, 6.0, 5.0]]


def test_a_reference_is_named_by_its_formula_and_settings_and_bad_settings_stop_where_made():
    assert paper("IG", steps=32, rule="gausslegendre").name == "paper:IG(rule=gausslegendre, steps=32)"
    assert named("paper:GradCAM++") is not None and named("SA") is None
    assert not paper("IxG").in_default_run
    with pytest.raises(ValueError, match="unknown rule"):
        paper("IG", rule="simpson")
    with pytest.raises(ValueError, match="no reference formula"):
        paper("GradCAM+++")
    assert {"saliency", "IxG", "IG", "SmoothGrad", "occlusion", "ablation", "GradCAM++", "LayerCAM"} <= set(FORMULAS)
    assert paper("GradCAM++", eps=1e-6).name == "paper:GradCAM++(eps=1e-06)"
    with pytest.raises(TypeError):
        paper("GradCAM", eps=1e-6)  # Grad-CAM has no denominator


def test_a_library_s_regulariser_and_display_normalisation_are_settings():
    """Grad-CAM++ with ``eps`` in the denominator (pytorch-grad-cam's 1e-6): channel 0's
    weight 1 / (2 + 10 + eps); ``normalised``: each map shifted to 0 and scaled to 1."""
    a, g = cam.activations_and_gradients(_TwoChannels(), IMAGE, 0, "conv")
    assert _close(cam.grad_cam_pp(a, g, eps=4.0)[0], [[(1 / 16 + 2 / 26) * v for v in r] for r in ([1, 2], [3, 4])])
    assert _close(cam.min_max(cam.grad_cam(a, g))[0], [[0.0, 1 / 3], [2 / 3, 1.0]])
    assert _close(cam.min_max(torch.ones(1, 2, 2, dtype=torch.float64)), [[[0.0, 0.0], [0.0, 0.0]]])
