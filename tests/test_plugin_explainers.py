"""End-to-end tests of registering explainers: conftest, entry points, library adapters, and
explainers that cheat, misbehave, hang or do not apply, failing alone."""

import json

import pytest
from conftest import load_results
from plugin_runs import CHEATS, CHEATS_CONFTEST, MISBEHAVING, REVERSED_ORDER, judged_values


def test_custom_explainer_from_conftest_is_ranked(pytester, run_suite):
    pytester.makeconftest(
        """
        import torch

        def input_x_gradient(model, inputs, target):
            x = inputs.clone().requires_grad_(True)
            model(x)[:, target].sum().backward()
            return (x.grad * x).detach()

        def pytest_chaosmining_explainers(config):
            from captum.attr import InputXGradient
            return {"IxG": input_x_gradient, "captum_IxG": InputXGradient}
        """
    )
    result = run_suite("--chaosmining-explainers", "SA,IxG,captum_IxG", "--chaosmining-suites", "symbolic")
    result.assert_outcomes(passed=2 + 2 * 3)
    explainers = {r["explainer"] for r in load_results(pytester)["records"] if r["metric"] == "fprec"}
    assert explainers == {"SA", "IxG", "captum_IxG"}


def test_broken_explainers_fail_only_their_own_tests(pytester, run_suite):
    pytester.makeconftest(
        """
        import torch

        def pytest_chaosmining_explainers(config):
            return {
                "raises": lambda m, x, t: 1 / 0,
                "shape": lambda m, x, t: x[:, :3],
                "nan": lambda m, x, t: torch.full_like(x, float("nan")),
                "device": lambda m, x, t: torch.zeros_like(x, device="meta"),
            }
        """
    )
    result = run_suite("--chaosmining-explainers", "SA,raises,shape,nan,device", "--chaosmining-suites", "symbolic")
    result.assert_outcomes(passed=2 + 2, failed=2 * 4)
    result.stdout.fnmatch_lines_random(
        [
            "*explainer 'raises' raised ZeroDivisionError*",
            "*explainer 'shape' returned shape*expected the inputs' shape*",
            "*explainer 'nan' returned * non-finite value(s)*",
            "*explainer 'device' returned a tensor on meta*",
        ]
    )
    assert (pytester.path / "report" / "report.md").is_file()


def test_entry_point_explainer_is_registered(pytester, run_suite, monkeypatch):
    site = pytester.mkdir("site")
    (site / "cm_extra.py").write_text(
        "def grad_abs(model, inputs, target):\n"
        "    x = inputs.clone().requires_grad_(True)\n"
        "    model(x)[:, target].sum().backward()\n"
        "    return x.grad.abs()\n"
    )
    dist = site / "cm_extra-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: cm-extra\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[pytest_chaosmining.explainers]\nGradAbs = cm_extra:grad_abs\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = run_suite(
        "--chaosmining-explainers", "GradAbs", "--chaosmining-suites", "symbolic", k="f01", subprocess=True
    )
    result.assert_outcomes(passed=2)


def test_cheats_fail_the_symbolic_suite(pytester, run_suite):
    """Every shipped cheat fails every formula: constant maps (ties), priors on
    the first or middle columns (the truth sits at seeded random columns) and
    model-free maps (|input|, finite differences, gradients of a fixed function:
    the features are i.i.d.)."""
    pytester.makeconftest(CHEATS_CONFTEST)
    result = run_suite(
        "--chaosmining-explainers", ",".join(CHEATS), "--chaosmining-suites", "symbolic", "-rf", k="f01 or f07 or f15"
    )
    result.assert_outcomes(passed=3, failed=3 * len(CHEATS))


def test_misbehaving_explainers_fail_alone_and_leave_the_others_unchanged(pytester, run_suite):
    """An explainer that zeroes the weights, leaves a hook or switches to train
    mode fails its own tests with a message naming the change; SA, run after
    them and in reversed test order, measures exactly what it measures alone."""
    pytester.makeconftest(CHEATS_CONFTEST)
    alone = run_suite("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", report="alone")
    alone.assert_outcomes(passed=4)
    mixed = run_suite(
        "--chaosmining-explainers",
        ",".join(MISBEHAVING) + ",SA",
        "--chaosmining-suites",
        "symbolic",
        "-rf",
        report="mixed",
    )
    mixed.assert_outcomes(passed=4, failed=2 * len(MISBEHAVING))
    mixed.stdout.fnmatch_lines_random(
        [
            "*explainer 'zero_weights' changed what it was given: modified the values of *weight*",
            "*explainer 'leave_hook' changed what it was given: left hooks registered on *forward hook*",
            "*explainer 'train_mode' changed what it was given: switched <model>, * to train mode*",
        ]
    )
    assert judged_values(pytester, "alone", "SA") == judged_values(pytester, "mixed", "SA") != {}
    pytester.makeconftest(CHEATS_CONFTEST + REVERSED_ORDER)
    run_suite(
        "--chaosmining-explainers", "SA," + ",".join(MISBEHAVING), "--chaosmining-suites", "symbolic", report="reversed"
    ).assert_outcomes(passed=4, failed=2 * len(MISBEHAVING))
    assert judged_values(pytester, "alone", "SA") == judged_values(pytester, "reversed", "SA")


def test_not_applicable_skips_a_constant_map_is_diagnosed_and_a_hang_is_stopped(pytester, run_suite):
    """An explainer raising NotApplicable is skipped with its reason (and, judged nowhere
    else, fails the run by name); a constant map's failure says it is constant; a sleeping
    explainer fails after the call time limit and the run goes on (SA still passes)."""
    pytester.makeconftest("""
import time

from pytest_chaosmining.explainers import NotApplicable
from pytest_chaosmining.explainers.cheats import CHEATS


def cam(model, inputs, target):
    raise NotApplicable("needs a 2-D conv layer")


def sleeper(model, inputs, target):
    time.sleep(60)
    return inputs


def pytest_chaosmining_explainers(config):
    return {"cam": cam, "constant": CHEATS["constant"], "sleeper": sleeper}
""")
    result = run_suite(
        "--chaosmining-explainers",
        "SA,cam,constant,sleeper",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-call-timeout",
        "2",
        "-rsf",
        k="f08",
    )
    result.assert_outcomes(passed=2, skipped=1, failed=2)
    result.stdout.fnmatch_lines(
        ["*not applicable: explainer 'cam' does not apply here (NotApplicable: needs a 2-D conv layer)*"]
    )
    result.stdout.fnmatch_lines(
        ["*constant's maps were constant across features in every sample (every feature tied)*"]
    )
    result.stdout.fnmatch_lines(["*explainer 'sleeper' was stopped after 2.* s: one call may take at most 2 s*"])
    result.stdout.fnmatch_lines(["ERROR: explainer 'cam' was judged nowhere in this run: its 1 tests ended 1 not app*"])
    assert result.duration < 120


#: explainers that never produce a map: a half-finished port (an op torch lacks), and ones that skip
#: or xfail their own tests; each is the failure of every test it runs in
NEVER_A_MAP = """
import json

import pytest


def port(model, inputs, target):
    raise NotImplementedError("aten::_my_op not implemented for 'CPU'")


def skipper(model, inputs, target):
    pytest.skip("not today")


def xfailer(model, inputs, target):
    pytest.xfail("known to be off")


def importer(model, inputs, target):
    pytest.importorskip("a_library_nobody_installed")


def pytest_chaosmining_explainers(config):
    return {"port": port, "skipper": skipper, "xfailer": xfailer, "importer": importer}
"""


@pytest.mark.parametrize(
    ("explainer", "said"),
    [
        ("port", "raised NotImplementedError: aten::_my_op not implemented for 'CPU'*not a declaration*"),
        ("skipper", "called pytest.skip (not today): an explainer may not skip or xfail its own test*"),
        ("xfailer", "called pytest.xfail (known to be off): an explainer may not skip or xfail*"),
        ("importer", "called pytest.skip (could not import 'a_library_nobody_installed'*"),
    ],
)
def test_an_explainer_that_never_produces_a_map_is_red(pytester, run_suite, explainer, said):
    """Raising NotImplementedError (from anywhere in the call: torch's dispatcher raises it
    for a missing op) or calling pytest.skip, pytest.xfail or pytest.importorskip is no
    declaration that the explainer does not apply: each of its tests fails, naming it,
    and the run is red, in the symbolic suite and the vision suite alike."""
    pytester.makeconftest(NEVER_A_MAP)
    result = run_suite(
        "--chaosmining-explainers", explainer, "--chaosmining-suites", "symbolic,vision", "-rf", k="f08 or RBFP"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) >= 2 and not outcomes.get("skipped") and not outcomes.get("xfailed")
    named = [line for line in result.stdout.lines if line.startswith(("FAILED symbolic ", "FAILED vision "))]
    assert len(named) == outcomes["failed"] and all(f" {explainer}: explainer '{explainer}' " in n for n in named)
    result.stdout.fnmatch_lines([f"FAILED * {explainer}: explainer '{explainer}' {said}"])


def test_library_methods_register_in_one_line_and_run_where_they_apply(pytester, run_suite):
    """captum classes (a CAM layer method, GradientShap, Occlusion) registered bare,
    torchcam's GradCAM and a zennit LRP composite through the adapters: CAM methods
    are skipped with the reason on the symbolic MLP and the audio models and
    scored on vision; the others are scored in all three suites."""
    pytester.makeconftest("""
from captum.attr import GradientShap, LayerGradCam, Occlusion
from torchcam.methods import GradCAM
from zennit.composites import EpsilonPlus

from pytest_chaosmining.explainers.adapters import torchcam_method, zennit_method


def pytest_chaosmining_explainers(config):
    return {"cam": LayerGradCam, "gs": GradientShap, "occ": Occlusion, "torchcam": torchcam_method(GradCAM),
            "lrp": zennit_method(EpsilonPlus)}
""")
    result = run_suite(
        "--chaosmining-explainers",
        "cam,gs,occ,torchcam,lrp",
        "--chaosmining-suites",
        "symbolic,vision,audio",
        "-rs",
        k="f08 or vision or audio",
        fresh=False,
    )
    result.stdout.fnmatch_lines(
        [
            "*not applicable: explainer 'cam' does not apply here (MissingInput: LayerGradCam is a "
            "layer method and needs a 2-D convolution layer; the model has none)*"
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*not applicable: explainer 'torchcam' does not apply here (NotApplicable: GradCAM "
            "needs an image model with a 2-D convolution)*"
        ]
    )
    scored = {
        (r["suite"], r["explainer"])
        for r in load_results(pytester)["records"]
        if r["metric"] in ("fprec", "iou", "channel_share")
    }
    assert {s for s, e in scored if e in ("cam", "torchcam")} == {"vision"}
    for name in ("gs", "occ", "lrp"):
        assert {s for s, e in scored if e == name} == {"symbolic", "vision", "audio"}
    assert "error" not in result.stdout.str().lower().split("short test summary")[-1]


def test_the_ecosystems_explainers_register_in_one_line_each_and_keep_the_contract(pytester, run_suite):
    """shap, pytorch-grad-cam, a Quantus explain_func, a captum class with
    constructor arguments and zennit LRP (with the batch-norm canonizer on the
    vision CNN), each registered in one line as the README shows: no contract
    failure anywhere; the CAM method skipped with its reason off images."""
    pytester.makeconftest("""
import functools

import json

import pytest
import quantus
import shap
from captum.attr import IntegratedGradients
from pytorch_grad_cam import GradCAM
from zennit.composites import EpsilonPlus

from pytest_chaosmining.explainers.adapters import grad_cam_method, quantus_method, shap_method, zennit_method


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {"shap": shap_method(shap.GradientExplainer, nsamples=5), "grad-cam": grad_cam_method(GradCAM),
            "quantus": quantus_method(quantus.explain, method="Saliency"),
            "ig-global": functools.partial(IntegratedGradients, multiply_by_inputs=False),
            "lrp": zennit_method(EpsilonPlus)}
""")
    names = "shap,grad-cam,quantus,ig-global,lrp"
    result = run_suite(
        "--chaosmining-explainers",
        names,
        "--chaosmining-suites",
        "symbolic,vision,audio",
        "-rs",
        k="f08 or SBFP",
        fresh=False,
    )
    payload = load_results(pytester)
    contract = [f for f in payload["failures"] if "explainer '" in f["message"]]
    assert not contract, contract
    scored = {
        (r["suite"], r["explainer"]) for r in payload["records"] if r["metric"] in ("fprec", "iou", "channel_share")
    }
    for name in ("shap", "quantus", "ig-global", "lrp"):
        assert {s for s, e in scored if e == name} == {"symbolic", "vision", "audio"}, (name, scored)
    assert {s for s, e in scored if e == "grad-cam"} == {"vision"}
    # Quantus sums a map over axis 1 unless told not to: on audio that tied every channel (share 0.25, no hit)
    assert not [f for f in payload["failures"] if f["explainer"] == "quantus"], payload["failures"]
    result.stdout.fnmatch_lines(
        [
            "*not applicable: explainer 'grad-cam' does not apply here (NotApplicable: GradCAM "
            "needs an image model with a 2-D convolution)*"
        ]
    )


def test_the_quantus_adapter_keeps_every_channel_of_the_map():
    """Quantus reduces a map over axis 1 by default (colour channels of an image); on
    audio that axis is what a suite judges, so the adapter asks for the full map."""

    quantus = pytest.importorskip("quantus")
    import torch

    from pytest_chaosmining.explainers import plain_context
    from pytest_chaosmining.explainers.adapters import quantus_method

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4 * 16, 3))
    inputs = torch.randn(2, 4, 16)
    explain = quantus_method(quantus.explain, method="Saliency")
    out = explain(model, inputs, torch.tensor([0, 1]), plain_context(model, inputs))
    assert out.shape == (2, 4, 16)
    assert not (out == out[:, :1]).all()  # the channels differ: not one sum repeated


#: captum's DeepLift registered as captum's own CI would, declaring what the built-in declares;
#: ``DROP`` leaves one declaration out, ``STALE`` adds one for a check it passes
LIBRARY_DEEPLIFT = """
import dataclasses
import os

from captum.attr import DeepLift

from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.explainers.limitations import KnownLimitation
from pytest_chaosmining.explainers.builtin_limitations import DEEPLIFT

known = [k for k in DEEPLIFT if not (os.environ.get("DROP") and k.suite == os.environ["DROP"] and not k.pattern)]
if os.environ.get("STALE"):
    wrong = KnownLimitation("symbolic", "completeness", ("example/lib#1",), "in error", cases={"formula": (1,)})
    known.append(wrong)


def pytest_chaosmining_explainers(config):
    return {"myDL": Explainer("myDL", DeepLift, completeness=True, known=tuple(known))}
"""


def test_a_library_declares_its_explainers_limitations_and_gets_the_built_ins_verdicts(
    pytester, run_suite, monkeypatch
):
    """captum's DeepLift registered by a library with the limitations the built-in declares
    gets the built-in's verdicts test for test; leave a declaration out and exactly its
    tests fail, naming the check; declare one it no longer needs and that test fails as stale.
    The vision case is RBRP (completeness 0.69 at seed 0, below both bars): on RBFP (0.82) a
    library's DeepLift passes the explainers' default bar (0.8) where the built-in's own bar
    (0.95, its promise) holds it as the known defect, which passes as any check does."""
    pytester.makeconftest(LIBRARY_DEEPLIFT)
    args = ("--chaosmining-explainers", "DL,myDL", "--chaosmining-suites", "symbolic,vision", "-rf")
    args += ("--chaosmining-own-merit", "all")  # the own-merit checks on RBRP too
    k = "f01 or f04 or RBRP"
    declared = run_suite(*args, k=k, fresh=False)
    outcomes = {}
    for r in load_results(pytester)["records"]:
        if r["explainer"] in ("DL", "myDL") and r.get("passed") is not None:
            key = (r["suite"], r["metric"], json.dumps(r["case"], sort_keys=True))
            outcomes.setdefault(key, {})[r["explainer"]] = (r["passed"], bool(r.get("expected")))
    assert declared.ret == 0, declared.stdout.str()
    both = {k: v for k, v in outcomes.items() if len(v) == 2}  # RBRP's IoU: the default bar does not judge it
    differ = {k: v for k, v in both.items() if v["DL"] != v["myDL"]}
    assert len(both) >= 10 and not differ, differ
    assert any(v["DL"] == (False, True) for v in both.values())  # some check held as a known limitation
    monkeypatch.setenv("DROP", "vision")
    dropped = run_suite(*args, k=k, fresh=False, report="dropped")
    failed = [line for line in dropped.stdout.lines if line.startswith("FAILED ") and " myDL: " in line]
    assert len(failed) == 1 and "vision myDL" in failed[0] and "completeness" in failed[0], dropped.stdout.str()
    monkeypatch.delenv("DROP")
    monkeypatch.setenv("STALE", "1")
    stale = run_suite(*args, k=k, fresh=False, report="stale")
    failed = [line for line in stale.stdout.lines if line.startswith("FAILED ") and " myDL: " in line]
    assert len(failed) == 1 and "symbolic myDL: myDL on f01" in failed[0], failed
    stale.stdout.fnmatch_lines(["*the known limitation example/lib#1 no longer shows*the declaration is stale*"])


def test_a_run_that_deselects_the_first_case_says_its_own_merit_checks_were_not_judged(pytester, run_suite):
    """The own-merit checks run on a suite's first planned case: a run that deselects it
    says none was judged (before: silently none), and a run that keeps it says nothing."""
    args = ("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic")
    note = "chaosmining: symbolic's checks of an explainer's own merit * which this run did not run (deselected)*"
    without = run_suite(*args, k="f08", fresh=False, report="without")
    without.stdout.fnmatch_lines([note])
    with_first = run_suite(*args, k="f01", fresh=False, report="with")
    with_first.stdout.no_fnmatch_line(note)
