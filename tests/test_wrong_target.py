"""The wrong target for one class, against a baseline: a gradient × input that explains
class c + 1 wherever it is asked for class c fails, for each of the ten classes, in every
vision and audio condition where class c was explained, naming class c and the target."""

from __future__ import annotations

from pytest_chaosmining.core.results_file import read_results

WRONG_TARGET_CONFTEST = """
import os

import torch


def wrong_for(label):
    def gxi(model, inputs, target, context):
        x = inputs.detach().clone().requires_grad_(True)
        out = model(x)
        t = torch.as_tensor(target, device=x.device).reshape(-1).expand(len(x)).clone()
        if os.environ.get("CHAOSMINING_TEST_WRONG_TARGET"):
            t = torch.where(t == label, torch.full_like(t, (label + 1) % out.shape[1]), t)
        (grad,) = torch.autograd.grad(out.gather(1, t[:, None]).sum(), x)
        return (grad * x).detach()

    return gxi


def pytest_chaosmining_explainers(config):
    return {f"gxi{c}": wrong_for(c) for c in range(10)}
"""


def test_the_wrong_target_for_any_one_class_fails_naming_the_class_and_the_target(pytester, run_suite, monkeypatch):
    """Ten gradient × inputs, ``gxi<c>`` explaining class c + 1 where asked for class c:
    against their correct run each fails every vision and audio test whose explained
    samples include class c (the mean and each sample's agreement stayed within their
    bars where the class had few samples), saying "the wrong target for class c"; a
    condition that explained no sample of class c cannot see it (and passes); the
    unchanged run passes every test."""
    pytester.makeconftest(WRONG_TARGET_CONFTEST)
    args = ("--chaosmining-explainers", ",".join(f"gxi{c}" for c in range(10)), "--chaosmining-suites", "vision,audio")
    run_suite(*args, "-rf", report="base", k="", shipped=True).assert_outcomes(passed=88)
    baseline = f"--chaosmining-baseline={pytester.path / 'base' / 'results.json'}"
    run_suite(*args, baseline, report="same", k="", shipped=True).assert_outcomes(passed=88)
    monkeypatch.setenv("CHAOSMINING_TEST_WRONG_TARGET", "1")
    wrong = run_suite(*args, baseline, "-rf", report="wrong", k="", shipped=True)
    text = wrong.stdout.str()
    records = read_results(pytester.path / "wrong" / "results.json", samples=True)["records"]
    explained = {(r["explainer"], r["nodeid"]): set(r["labels"] or []) for r in records if r["metric"] == "fingerprint"}
    verdicts = {(r["explainer"], r["nodeid"]): r["passed"] for r in records if r["metric"] == "classes_kept"}
    seen = 0
    for (name, nodeid), labels in explained.items():
        if name == "random":
            continue
        label = int(name.removeprefix("gxi"))
        if label in labels:
            seen += 1
            assert verdicts[(name, nodeid)] is False, nodeid
            assert f"the wrong target for class {label}, class {(label + 1) % 10}" in text
        else:
            assert verdicts[(name, nodeid)] is True, nodeid  # no sample of the class: nothing moved
    assert seen >= 70  # most conditions explain most classes
    assert wrong.ret != 0
