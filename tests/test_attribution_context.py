"""What the suite knows, offered to explainers: the context object, captum
classes bound by parameter name, declared applicability, the user's frames."""

import numpy as np
import pytest
import torch
from captum.attr import GradientShap, KernelShap, LayerGradCam, Occlusion

from pytest_chaosmining.explainers import (
    Explainer,
    ExplainerError,
    ExplainerNotApplicable,
    attribute,
    builtin_explainers,
    select,
)
from pytest_chaosmining.explainers.binding import captum_kwargs
from pytest_chaosmining.explainers.context import Applicability, AttributionContext, last_conv2d, tabular_context
from pytest_chaosmining.suites import shapes_of
from pytest_chaosmining.testbeds.digits.training import grid_mask, image_context

CPU = torch.device("cpu")


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).eval()


def _cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(4, 5, 3, stride=2),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(5, 3),
    ).eval()


def _tabular():
    rows = np.arange(60, dtype=np.float32).reshape(10, 6) / 60
    return tabular_context("symbolic", rows, CPU), torch.randn(5, 6)


def _image():
    background = torch.full((4, 3, 12, 12), 0.5)
    context = image_context("vision", grid_mask(12, 4), 4, CPU, {"perturbations_per_eval": 3}, lambda: background)
    return context, torch.rand(2, 3, 12, 12), torch.tensor([0, 2])


def test_a_callable_naming_context_gets_it_with_the_layer_of_its_own_model_copy():
    context, images, target = _image()
    model, seen = _cnn(), {}

    def spy(model, inputs, target, context):
        seen.update(context=context, model=model)
        return torch.rand_like(inputs)

    attribute(Explainer("spy", spy), model, images, target, context)
    got = seen["context"]
    assert isinstance(got, AttributionContext)
    assert (got.suite, got.domain, got.task, got.model_kind) == ("vision", "image", "classification", "cnn")
    assert torch.equal(got.target, target) and torch.equal(got.baseline, torch.zeros_like(images))
    assert got.window == (3, 4, 4) and got.n_features == 9 and tuple(got.background.shape) == (4, 3, 12, 12)
    assert got.layer_name == "2" and got.layer is seen["model"].get_submodule("2")
    assert got.layer is not model.get_submodule("2")  # the explainer's private copy, never the suite's model
    # the three-argument form keeps working beside it
    assert attribute(Explainer("three", lambda m, x, t: x * 2), model, images, target, context).shape == images.shape


def test_captum_classes_get_what_they_require_by_parameter_name():
    tab, rows = _tabular()
    img, images, _ = _image()
    gs = captum_kwargs(Explainer("gs", GradientShap), tab.for_call(_mlp(), rows, 0))
    assert torch.equal(gs["baselines"], tab.background)  # a distribution: the training background
    occ = captum_kwargs(Explainer("occ", Occlusion), img.for_call(_cnn(), images, 0))
    assert occ["sliding_window_shapes"] == (3, 4, 4) and occ["strides"] == (3, 4, 4)
    assert occ["perturbations_per_eval"] == 3
    ks = captum_kwargs(Explainer("ks", KernelShap), img.for_call(_cnn(), images, 0))
    assert ks["n_samples"] == 25 and torch.equal(ks["feature_mask"], img.feature_mask)
    own = captum_kwargs(
        Explainer("occ", Occlusion, {"sliding_window_shapes": (3, 2, 2)}), img.for_call(_cnn(), images, 0)
    )
    assert own["sliding_window_shapes"] == (3, 2, 2) and "strides" not in own  # the explainer's own settings win


@pytest.mark.parametrize("method", [GradientShap, Occlusion, KernelShap])
def test_bare_captum_classes_run_on_tabular_and_image_models(method):
    tab, rows = _tabular()
    assert attribute(Explainer("m", method), _mlp(), rows, 0, tab).shape == rows.shape
    img, images, target = _image()
    assert attribute(Explainer("m", method), _cnn(), images, target, img).shape == images.shape


def test_a_layer_method_is_upsampled_on_images_and_skipped_without_a_conv_layer():
    img, images, target = _image()
    out = attribute(Explainer("cam", LayerGradCam), _cnn(), images, target, img)
    assert out.shape == images.shape and torch.equal(out[:, 0], out[:, 2])  # one map for every channel
    tab, rows = _tabular()
    with pytest.raises(ExplainerNotApplicable, match="layer method and needs a 2-D convolution layer"):
        attribute(Explainer("cam", LayerGradCam), _mlp(), rows, 0, tab)


def test_declared_applicability_skips_with_the_reason_and_rejects_unknown_values():
    tab, rows = _tabular()
    images_only = Explainer("img", lambda m, x, t: x, applies_to=Applicability(domains=frozenset({"image"})))
    with pytest.raises(ExplainerNotApplicable, match="declared for domains \\['image'\\], this is 'tabular'"):
        attribute(images_only, _mlp(), rows, 0, tab)
    with pytest.raises(ValueError, match="unknown \\['images'\\]"):
        Applicability(domains=frozenset({"images"}))


def test_an_explainer_that_applies_in_none_of_the_suites_is_a_usage_error():
    registry = {
        **builtin_explainers(),
        "cam": Explainer("cam", LayerGradCam, applies_to=Applicability(needs_layer=True)),
    }
    with pytest.raises(ValueError, match="'cam'.* apply in none of the selected suites \\['symbolic', 'audio'\\]"):
        select(registry, ["SA", "cam"], shapes_of(["symbolic", "audio"]))
    assert set(select(registry, ["SA", "cam"], shapes_of(["symbolic", "vision"]))) == {"SA", "cam"}
    assert "KS" not in select(registry, None) and "KS" in select(registry, ["KS"])  # slow: on request only


def test_every_built_in_applies_where_it_declares_and_changes_nothing():
    tab, rows = _tabular()
    img, images, target = _image()
    scored = set()
    for name, explainer in builtin_explainers().items():
        for model, inputs, tgt, context in ((_mlp(), rows, 0, tab), (_cnn(), images, target, img)):
            try:
                out = attribute(explainer, model, inputs, tgt, context)
            except ExplainerNotApplicable:
                continue
            assert out.shape == inputs.shape and torch.isfinite(out).all()
            scored.add((name, context.domain))
    assert ("GradCAM", "image") in scored and ("GradCAM", "tabular") not in scored
    assert ("KS", "tabular") in scored and ("KS", "image") not in scored
    assert len(scored) == 2 * len(builtin_explainers()) - 2


def test_sampling_explainers_draw_the_same_numbers_in_any_order():
    tab, rows = _tabular()
    smoothgrad = builtin_explainers()["SG"]
    torch.manual_seed(1)
    first = attribute(smoothgrad, _mlp(), rows, 0, tab)
    torch.rand(100)  # the global generator moved on
    assert torch.equal(attribute(smoothgrad, _mlp(), rows, 0, tab), first)


def test_an_error_shows_the_explainers_own_frames():
    def helper(inputs):
        return inputs.reshape(-1, 7)

    def mine(model, inputs, target):
        return helper(inputs)

    with pytest.raises(ExplainerError) as info:
        attribute(Explainer("mine", mine), _mlp(), torch.randn(3, 6), 0)
    message = str(info.value)
    assert "raised RuntimeError" in message and "Traceback of the explainer" in message
    assert "in mine" in message and "in helper" in message and "return inputs.reshape(-1, 7)" in message
    assert "pytest_chaosmining" not in message.split("Traceback of the explainer")[1]  # only frames outside the plugin


def test_last_conv2d_is_the_suggested_layer():
    assert last_conv2d(_cnn()) == "2" and last_conv2d(_mlp()) is None


def test_a_built_in_that_applies_in_none_of_the_suites_is_left_out_of_a_default_run():
    assert "GradCAM" not in select(builtin_explainers(), None, shapes_of(["symbolic", "audio"]))
    assert "GradCAM" in select(builtin_explainers(), None, shapes_of(["symbolic", "vision"]))
    with pytest.raises(ValueError, match="GradCAM"):  # named: the user asked for it
        select(builtin_explainers(), ["GradCAM"], shapes_of(["symbolic"]))


def test_what_the_context_offers_cannot_be_altered_for_the_next_call():
    """The background is memoised per case: an explainer writing into it (or into
    the feature mask) must not change what the next explainer is offered."""
    context, images, target = _image()

    def vandal(model, inputs, target, context):
        context.background.fill_(7.0)
        context.feature_mask.fill_(0)
        return torch.rand_like(inputs)

    attribute(Explainer("vandal", vandal), _cnn(), images, target, context)
    seen = {}

    def spy(model, inputs, target, context):
        seen.update(background=context.background.clone(), mask=context.feature_mask.clone())
        return torch.rand_like(inputs)

    attribute(Explainer("spy", spy), _cnn(), images, target, context)
    assert torch.all(seen["background"] == 0.5) and seen["mask"].unique().numel() == 9
