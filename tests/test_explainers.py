import pytest
import torch

from pytest_chaosmining.explainers import (
    Explainer,
    ExplainerError,
    attribute,
    builtin_explainers,
    collect_explainers,
    select,
)
from pytest_chaosmining.testbeds.formulas.models import MLPRegressor


@pytest.fixture(scope="module")
def model_inputs():
    torch.manual_seed(0)
    return MLPRegressor(6, width=8, depth=2).eval(), torch.randn(5, 6)


@pytest.mark.parametrize("name", ["SA", "DL", "IG", "FA", "random"])
def test_builtins_return_the_inputs_shape(model_inputs, name):
    model, x = model_inputs
    out = attribute(builtin_explainers()[name], model, x, target=0)
    assert out.shape == x.shape and torch.isfinite(out).all()


def test_saliency_is_the_gradient(model_inputs):
    model, x = model_inputs
    x = x.clone().requires_grad_(True)
    model(x)[:, 0].sum().backward()
    out = attribute(builtin_explainers()["SA"], model, x.detach(), target=0)
    torch.testing.assert_close(out, x.grad)


def _bad(name, fn):
    return Explainer(name, fn)


@pytest.mark.parametrize(
    "fn, message",
    [
        (lambda m, x, t: 1 / 0, "'broken' raised ZeroDivisionError"),
        (lambda m, x, t: torch.zeros(3), r"'broken' returned shape \(3,\)"),
        (lambda m, x, t: torch.full_like(x, float("nan")), "'broken' returned 30 non-finite"),
        (lambda m, x, t: torch.zeros_like(x, device="meta"), "'broken' returned a tensor on meta"),
        (lambda m, x, t: x.tolist(), "'broken' returned list"),
    ],
)
def test_bad_outputs_raise_a_named_error(model_inputs, fn, message):
    model, x = model_inputs
    with pytest.raises(ExplainerError, match=message):
        attribute(_bad("broken", fn), model, x, target=0)


def test_registry_merges_hook_results_and_selects():
    reg = collect_explainers([{"mine": lambda m, x, t: x}])
    assert {"SA", "DL", "IG", "FA", "random", "mine"} <= set(reg)
    assert reg["mine"].source == "pytest_chaosmining_explainers hook"
    assert list(select(reg, ["mine", "SA"])) == ["mine", "SA"]
    with pytest.raises(ValueError, match="unknown explainer"):
        select(reg, ["nope"])


def test_own_selects_what_the_user_registered_and_the_control():
    """``--chaosmining-explainers own``: a library's CI judges its explainers, not the built-ins."""
    reg = collect_explainers([{"mine": lambda m, x, t: x, "theirs": lambda m, x, t: -x}])
    assert list(select(reg, ["own"])) == ["mine", "theirs", "random"]
    assert list(select(reg, ["own", "IG"])) == ["mine", "theirs", "random", "IG"]
    with pytest.raises(ValueError, match="no explainer of yours is registered"):
        select(collect_explainers([]), ["own"])


def test_a_baseline_scope_covers_the_selected_suites_seeds_every_explainer_not_retired_and_this_shard():
    """A baseline result is judged again where its suite was selected and its seed is among the
    run's, whatever explainers the run names, unless the run retires its explainer; a user's
    own suite always; in a shard run only this shard's tests (asked once)."""
    from pytest_chaosmining.core.records import MODEL_LEVEL, Record
    from pytest_chaosmining.verdict.baseline_scope import BaselineScope

    def record(suite: str, explainer: str, seed: int, param: str) -> Record:
        return Record(suite, "cnn", explainer, seed, "iou", 0.5, nodeid=f"t.py::test_iou[{param}]")

    asked: list[int] = []

    def shard() -> frozenset[tuple[str, str]]:
        asked.append(1)
        return frozenset({("vision", "SBFP-IG-s0")})

    seeds = {"vision": range(0, 2), "cost": None}
    whole = BaselineScope(retired=("gone",), registered=frozenset({"vision", "cost", "bam"}), seeds=seeds)
    assert whole.covers(record("vision", "IG", 1, "SBFP-IG-s1"))
    assert not whole.covers(record("vision", "IG", 2, "SBFP-IG-s2"))  # a seed this run does not judge
    assert whole.covers(record("vision", "SA", 0, "SBFP-SA-s0"))  # not named by the run: missing if absent
    assert not whole.covers(record("vision", "gone", 0, "SBFP-gone-s0"))  # retired
    assert whole.covers(record("vision", MODEL_LEVEL, 0, "SBFP-s0"))
    assert whole.covers(record("cost", "IG", 7, "IG"))  # every seed of a suite without seeds of its own
    assert not whole.covers(record("bam", "IG", 0, "32px-IG-s0"))  # a suite not selected
    assert whole.covers(record("mine", "IG", 0, "x"))  # a user's own test suite
    sharded = BaselineScope(retired=(), registered=whole.registered, seeds=seeds, shard_tests=shard)
    assert sharded.covers(record("vision", "IG", 0, "SBFP-IG-s0"))
    assert not sharded.covers(record("vision", "IG", 1, "SBFP-IG-s1"))  # another shard's
    assert sharded.covers(record("mine", "SA", 0, "x")) and asked == [1]


def test_captum_class_is_recognised():
    from captum.attr import InputXGradient

    reg = collect_explainers([{"captum-IxG": InputXGradient}])
    assert reg["captum-IxG"].is_captum


def test_hook_must_return_a_dict():
    with pytest.raises(TypeError, match="must return a dict"):
        collect_explainers([["SA"]])


def test_not_applicable_is_a_skip_and_not_implemented_or_a_skip_call_a_failure():
    """Only a declaration (the plugin's NotApplicable) says an explainer does not apply; a
    NotImplementedError from inside the call and pytest.skip or pytest.xfail called inside
    it are the explainer's failures, naming what it raised."""
    import torch

    from pytest_chaosmining.explainers import ExplainerError, ExplainerNotApplicable, NotApplicable

    def declared(model, inputs, target):
        raise NotApplicable("tabular inputs only")

    def port(model, inputs, target):
        raise NotImplementedError("aten::_my_op not implemented for 'CPU'")

    def skipper(model, inputs, target):
        pytest.skip("not today")

    def xfailer(model, inputs, target):
        pytest.xfail("known to be off")

    model, x = torch.nn.Linear(3, 1), torch.ones(2, 3)
    with pytest.raises(ExplainerNotApplicable, match="explainer 'mine' does not apply here .*tabular inputs only"):
        attribute(Explainer("mine", declared), model, x, target=0)
    for name, fn, said in (
        ("port", port, "raised NotImplementedError: aten::_my_op not implemented for 'CPU' .not a declaration"),
        ("skipper", skipper, r"called pytest.skip \(not today\): an explainer may not skip or xfail"),
        ("xfailer", xfailer, r"called pytest.xfail \(known to be off\)"),
    ):
        with pytest.raises(ExplainerError, match=f"explainer '{name}' {said}") as raised:
            attribute(Explainer(name, fn), model, x, target=0)
        assert not isinstance(raised.value, ExplainerNotApplicable)


def test_a_call_past_the_time_limit_is_stopped_and_named(monkeypatch):
    import time

    import torch

    def sleeper(model, inputs, target):
        time.sleep(30)
        return inputs

    start = time.perf_counter()
    with pytest.raises(
        ExplainerError, match=r"explainer 'sleeper' was stopped after 0\.\d s: one call may take at most 0\.3 s"
    ):
        attribute(Explainer("sleeper", sleeper, call_timeout_s=0.3), torch.nn.Linear(3, 1), torch.ones(2, 3), target=0)
    assert time.perf_counter() - start < 5
    # the limit is lifted afterwards: a later call is not interrupted
    assert (
        attribute(Explainer("ok", lambda m, x, t: x * 2), torch.nn.Linear(3, 1), torch.ones(2, 3), target=0).sum() == 12
    )


@pytest.mark.parametrize(
    "maps, expected",
    [
        ([[0.0, 0.0], [0.0, 0.0]], "all zeros"),
        ([[1.0, 1.0], [2.0, 2.0]], "constant across features"),
        ([[1.0, 2.0], [1.0, 2.0]], "identical for every sample"),
        ([[1.0, 2.0], [2.0, 1.0]], None),
    ],
)
def test_degenerate_maps_are_described(maps, expected):
    import torch

    from pytest_chaosmining.explainers.diagnosis import describe

    text = describe(torch.tensor(maps))
    assert (text is None) if expected is None else (expected in text)


def test_completeness_is_declared_by_ig_and_deeplift_as_they_are_bound():
    """IG and DeepLift promise that their attributions sum to f(x) - f(baseline),
    registered as built-ins or as captum classes; IG without multiplying by the
    inputs, saliency and a plain callable promise nothing."""
    import functools

    from captum.attr import DeepLift, IntegratedGradients, Saliency

    from pytest_chaosmining.explainers.registry import as_explainer

    builtins = builtin_explainers()
    assert {name for name, e in builtins.items() if e.completeness} == {"IG", "DL"}
    assert as_explainer("ig", IntegratedGradients, "user").completeness
    assert as_explainer("dl", functools.partial(DeepLift, eps=1e-6), "user").completeness
    assert not as_explainer("local", functools.partial(IntegratedGradients, multiply_by_inputs=False), "u").completeness
    assert not as_explainer("sa", Saliency, "user").completeness
    assert not as_explainer("fn", lambda model, inputs, target: inputs, "user").completeness


def test_smoothgrad_draws_its_noise_on_the_cpu_whatever_the_device():
    """SmoothGrad's noise comes from the seeded CPU generator and is then moved, so a CUDA
    run draws what a CPU run draws (captum draws on the inputs' device: other noise, and
    drift against a CPU baseline); on the CPU its maps are captum's own, number for number."""
    from captum.attr import NoiseTunnel, Saliency

    from pytest_chaosmining.explainers.cpu_noise import CpuNoiseTunnel

    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    inputs = torch.rand(3, 5)
    maps, drawn = [], []
    draw = CpuNoiseTunnel._add_noise_to_input

    def counted(*args):
        drawn.append(args[0].shape)
        return draw(*args)

    for tunnel in (NoiseTunnel, CpuNoiseTunnel):
        torch.manual_seed(0)
        maps.append(tunnel(Saliency(model)).attribute(inputs, nt_samples=6, stdevs=0.3, target=1, abs=False))
        if tunnel is CpuNoiseTunnel:
            continue
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(CpuNoiseTunnel, "_add_noise_to_input", staticmethod(counted))
            CpuNoiseTunnel(Saliency(model)).attribute(inputs, nt_samples=6, stdevs=0.3, target=1, abs=False)
    assert torch.equal(maps[0], maps[1]) and drawn == [inputs.shape]  # captum draws through the override
    torch.manual_seed(0)
    before = torch.get_rng_state()
    noisy = CpuNoiseTunnel._add_noise_to_input(torch.zeros(2, 5, device="meta"), 0.3, 4)
    assert noisy.device.type == "meta" and noisy.shape == (8, 5)  # moved to the inputs' device
    assert not torch.equal(torch.get_rng_state(), before)  # drawn from the CPU generator
