"""The module-pattern networks and their checks (pytest_chaosmining.suite_kit.module_rules):
what they catch without a baseline, what they name, and what they leave alone."""

from __future__ import annotations

import pytest
import torch

from pytest_chaosmining.explainers import Explainer, builtin_explainers
from pytest_chaosmining.explainers.builtin_limitations import builtin_limitation
from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.provenance import library_of
from pytest_chaosmining.suite_kit.module_patterns import CLASSES, MEMBERS, PATTERNS, pattern_network
from pytest_chaosmining.suite_kit.module_rules import measured_patterns
from pytest_chaosmining.suite_kit.probe import Probe
from pytest_chaosmining.verdict.thresholds import Thresholds

BAR = 0.95  # the calibrated pattern_completeness bar of IG, DL and a registered explainer (vision smoke)


@pytest.fixture(scope="module")
def probe() -> Probe:
    torch.manual_seed(0)
    inputs = torch.rand(6, 3, 14, 14)
    context = AttributionContext("vision", "image", "classification", "cnn", torch.device("cpu"))
    return Probe(torch.nn.Identity(), inputs, None, context)


def test_every_pattern_network_is_seeded_and_gives_one_logit_per_class():
    x = torch.rand(2, 3, 14, 14)
    for pattern in PATTERNS:
        a = pattern_network(pattern, 0, 0, torch.device("cpu"))
        b = pattern_network(pattern, 0, 0, torch.device("cpu"))
        other = pattern_network(pattern, 0, 1, torch.device("cpu"))
        assert a(x).shape == (2, CLASSES), pattern.name
        assert torch.equal(a(x), b(x)), pattern.name
        assert not torch.equal(a(x), other(x)), f"{pattern.name}: members are initialised apart"
        assert not a.training


def test_the_bars_are_the_calibrated_ones():
    from pathlib import Path

    import pytest_chaosmining.suites.vision as vision

    bars = Thresholds.load([Path(vision.__file__).parent / "thresholds.toml"])
    for name in ("IG", "DL", "yours"):
        assert bars.optional_metric("vision", "smoke", "pattern_completeness", "default", name) == BAR


def test_integrated_gradients_meets_the_bar_on_every_pattern(probe):
    found = measured_patterns(builtin_explainers()["IG"], probe)
    assert set(found) == {p.name for p in PATTERNS}
    for name, values in found.items():
        assert values["completeness"] >= BAR, name


@pytest.mark.parametrize(
    "broken",
    [
        lambda model, inputs, target: -_ig(model, inputs, target),  # sign flipped
        lambda model, inputs, target: _ig(model, inputs, (target + 1) % CLASSES),  # wrong target
        lambda model, inputs, target: torch.rand_like(inputs),  # the random control, declared complete
        lambda model, inputs, target: torch.ones_like(inputs),  # a constant map
    ],
    ids=["sign-flipped", "next-class", "random", "constant"],
)
def test_a_broken_map_declared_complete_fails_on_every_pattern(probe, broken):
    found = measured_patterns(Explainer("broken", broken, completeness=True), probe)
    assert all(values["completeness"] < BAR for values in found.values()), found


def _ig(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    from captum.attr import IntegratedGradients

    return IntegratedGradients(model).attribute(inputs, target=target, n_steps=16)


def test_captums_deeplift_shows_its_known_defects_and_nothing_else(probe):
    """Where DeepLift's library has a reported defect it scores below the bar (or raises);
    on the other patterns its sums are exact."""
    found = measured_patterns(builtin_explainers()["DL"], probe)
    for name, values in found.items():
        defect = builtin_limitation("DL", "vision", "pattern_completeness", name)
        if defect is None:
            assert values["completeness"] >= 0.999, name
        elif defect.floor == -1.0:
            assert "module is being used more than once" in str(values["raised"]), name
        else:
            assert values["completeness"] < BAR, name


def test_a_call_that_raises_or_returns_nan_on_one_pattern_is_named(probe):
    def inplace_hater(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
        if any(getattr(m, "inplace", False) for m in model.modules()):
            raise RuntimeError("a view is being modified in place")
        return torch.zeros_like(inputs)

    def nan_on_constant_channel(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
        convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
        dead = bool(convs) and bool((convs[-1].weight.flatten(1).abs().sum(1) == 0).any())
        return torch.full_like(inputs, float("nan")) if dead else torch.zeros_like(inputs)

    found = measured_patterns(Explainer("x", inplace_hater), probe)
    assert "modified in place" in str(found["in-place ReLU after the last convolution"]["raised"])
    assert sum("raised" in v for v in found.values()) == 1
    found = measured_patterns(Explainer("y", nan_on_constant_channel), probe)
    assert "non-finite" in str(found["a constant channel at the CAM layer"]["raised"])
    assert sum("raised" in v for v in found.values()) == 1


def test_an_explainer_without_completeness_is_only_run(probe):
    found = measured_patterns(builtin_explainers()["SA"], probe)
    assert all(values == {} for values in found.values())
    assert MEMBERS >= 2


def test_the_library_an_explainer_comes_from_is_named():
    import captum

    builtins = builtin_explainers()
    assert library_of(builtins["DL"]) == f"captum {captum.__version__}"
    assert library_of(builtins["SG"]).startswith("captum ")  # a built-in wrapper of captum
    assert library_of(Explainer("mine", lambda m, x, t: x)) == __name__
