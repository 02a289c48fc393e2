"""One verdict on the same two files: a run against a baseline, ``chaosmining-compare`` on
the baseline's and the run's results.json, and the pull request's summary of them agree,
test by test, on benign changes, harmful mutants and the cases of issue 79 (an explainer
that never produces a map, one that skips its own test, a renamed and a retired one)."""

import pytest
from conftest import load_results

from pytest_chaosmining.tools import compare
from pytest_chaosmining.tools.pr_summary import pr_summary
from pytest_chaosmining.verdict.baseline_check import COST_PREFIX, MISSING_PREFIX

#: one explainer whose behaviour each scenario picks (read at call time: the runs share this process)
CHANGING_CONFTEST = """
import os

import pytest
import torch


def gxi(model, inputs, target, dtype=None):
    inputs = inputs.clone().to(dtype or inputs.dtype).requires_grad_(True)
    model.to(inputs.dtype)
    try:
        out = model(inputs)
        if target is not None and out.dim() == 2:
            out = out[:, target] if isinstance(target, int) else out.gather(1, target.view(-1, 1))
        picked = out
        picked.sum().backward()
    finally:
        model.float()
    return inputs.grad * inputs


def mine(model, inputs, target):
    change = os.environ["CHAOS_CHANGE"]
    if change == "missing-op":
        raise NotImplementedError("aten::_my_op not implemented for 'CPU'")
    if change == "skips":
        pytest.skip("not on this backend")
    if change == "float64":
        return gxi(model, inputs, target, torch.float64).float()
    found = gxi(model, inputs, target)
    if change == "sign":
        return -found
    if change == "unsigned":
        return found.abs()
    if change == "noise":
        noise = torch.randn(found.shape, generator=torch.Generator().manual_seed(0))
        return found + 3 * found.abs().mean() * noise
    if change == "half":  # a bug on some inputs only: the second half of every batch gets no map
        found[len(found) // 2 :] = 0
    return found


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {"mine": mine, "mine2": mine}
"""

#: scenario → (the behaviour, the run's explainers and extra options, whether the run must be red,
#: what the run's failures must say)
SCENARIOS = {
    "unchanged": ("none", ("mine",), False, ""),
    "float64 (benign)": ("float64", ("mine",), False, ""),
    "sign flipped": ("sign", ("mine",), True, ""),
    "unsigned": ("unsigned", ("mine",), True, ""),
    "noise": ("noise", ("mine",), True, ""),
    "half the batch": ("half", ("mine",), True, ""),
    "never a map": ("missing-op", ("mine",), True, "NotImplementedError"),
    "skips its test": ("skips", ("mine",), True, "skip"),
    "renamed": ("none", ("mine2",), True, ""),
    "retired": ("none", ("mine2", "--chaosmining-retired", "mine"), False, ""),
}
K = "f01 or f08"


def _run_failures(payload: dict) -> set[str]:
    """The run's failed tests, a baseline's missing result by the baseline's node id."""
    out = set()
    for failure in payload["failures"]:
        nodeid = failure["nodeid"]
        missing = nodeid.startswith(MISSING_PREFIX) and not nodeid.startswith(COST_PREFIX)
        out.add(nodeid[len(MISSING_PREFIX) :] if missing else nodeid)
    return out


def test_compare_and_the_pr_summary_agree_with_the_run_test_by_test(pytester, run_suite, monkeypatch, capsys):
    pytester.makeconftest(CHANGING_CONFTEST)
    args = ("--chaosmining-suites", "symbolic")
    monkeypatch.setenv("CHAOS_CHANGE", "none")
    base = run_suite(*args, "--chaosmining-explainers", "mine", k=K, fresh=False, report="base")
    assert base.ret == pytest.ExitCode.OK, base.stdout.str()
    baseline = pytester.path / "base" / "results.json"
    disagreements = []
    for scenario, (change, explainers, red, said) in SCENARIOS.items():
        monkeypatch.setenv("CHAOS_CHANGE", change)
        report = "run-" + scenario.replace(" ", "-").replace("(", "").replace(")", "")
        run = run_suite(
            *args, "--chaosmining-explainers", *explainers, "--chaosmining-baseline", str(baseline),
            k=K, fresh=False, report=report,
        )  # fmt: skip
        out = run.stdout.str()
        assert (run.ret == pytest.ExitCode.TESTS_FAILED) is red and run.ret in (0, 1), f"{scenario}: {out}"
        payload = load_results(pytester, report)
        failed = _run_failures(payload)
        assert bool(failed) is red, f"{scenario}: {sorted(failed)}"
        said_by_run = "\n".join(f["message"] for f in payload["failures"])
        assert said in said_by_run, (scenario, said_by_run)
        new = pytester.path / report / "results.json"
        findings = compare.compare_runs(baseline, new)
        failing = {f.nodeid for f in findings if f.kind in compare.FAILING}
        changed = {f.nodeid for f in findings if f.kind == "changed"}
        if failing != failed:
            disagreements.append(
                f"{scenario}: the run failed {sorted(failed - failing)} that compare passes; compare fails "
                f"{sorted(failing - failed)} that the run passed"
            )
        if changed & failed:
            disagreements.append(f"{scenario}: failed tests reported as changed: {sorted(changed & failed)}")
        capsys.readouterr()
        code = compare.main([str(baseline), str(new)])
        head = capsys.readouterr().out.splitlines()[0]
        if code != int(red) or ("FAILED" in head) is not red:
            disagreements.append(
                f"{scenario}: compare exits {code} ({head}) on a run that {'failed' if red else 'passed'}"
            )
        summary = pr_summary(baseline, new)
        if not summary.startswith(f"## chaosmining: {'regressed' if red else 'no regression'} against main"):
            disagreements.append(f"{scenario}: the PR summary's headline {summary.splitlines()[0]!r}")
        if "the run's verdict stands" in summary:
            disagreements.append(f"{scenario}: the PR summary says it disagrees with the run")
        for row in (line for line in summary.splitlines() if line.startswith("| mine")):
            cells = [c.strip() for c in row.strip("|").split("|")]
            explainer, regressed, missing = cells[0], int(cells[2]), int(cells[6])
            mine = {n for n in failed if f"-{explainer}-" in n}
            if regressed + missing != len(mine):
                disagreements.append(
                    f"{scenario}: the PR summary counts {regressed} regressed + {missing} missing for {explainer}, "
                    f"the run failed {len(mine)} of its tests"
                )
    assert not disagreements, "\n".join(disagreements)
