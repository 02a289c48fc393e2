"""A red run a maintainer reads in a minute: one count everywhere, each failure once,
no earlier run's findings.

- the terminal, report.md, report.html, the step summary and results.json state one
  headline (:class:`~pytest_chaosmining.reports.run_counts.RunCounts`); a crash is one
  failure, what it did not produce of the baseline's results part of its reason;
- *changed* lists tests that passed only;
- the step summary's failure table is Markdown-safe and capped; the annotate step adds
  no second table where the run wrote the summary;
- a run that stops with a usage error leaves no earlier findings and says why.
"""

from __future__ import annotations

import json

from conftest import load_results
from plugin_runs import breaking_conftest

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.reports.failure_table import cell, failure_table
from pytest_chaosmining.reports.report_folder import MANIFEST, STOPPED
from pytest_chaosmining.reports.run_counts import RunCounts
from pytest_chaosmining.suites import metric_catalog
from pytest_chaosmining.tools.annotate import error_lines, main, summary
from pytest_chaosmining.verdict.baseline import Baseline
from pytest_chaosmining.verdict.baseline_check import BaselineCheck
from pytest_chaosmining.verdict.baseline_scope import BaselineScope

#: an explainer that starts raising (BROKEN set): a crash
RAISING = breaking_conftest('RuntimeError("index out of range in the new release")')


def test_a_crash_is_one_failure_and_every_output_states_one_count(pytester, run_suite, monkeypatch):
    """An explainer that starts raising, against its baseline: one failed test (pytest
    counts one, results.json lists one), its reason saying what it left unproduced, and
    the same headline in the terminal, results.json, report.md, report.html and the step
    summary (before: the crash and its missing results, two failures of one test)."""
    pytester.makeconftest(RAISING)
    args = ("--chaosmining-explainers", "mine", "--chaosmining-suites", "symbolic")
    run_suite(*args, k="f08", fresh=False, report="base").assert_outcomes(passed=2)
    monkeypatch.setenv("BROKEN", "1")
    summary_file = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary_file))
    broken = run_suite(*args, "--chaosmining-baseline", "base/results.json", k="f08", fresh=False)
    broken.assert_outcomes(passed=1, failed=1)
    payload = load_results(pytester)
    (failure,) = payload["failures"]
    assert "RuntimeError" in failure["message"] and "unproduced (fprec" in failure["message"]
    assert failure["explainer"] == "mine" and "chaosmining-baseline::" not in failure["nodeid"]
    counts = payload["counts"]
    assert (counts["judged"], counts["failed"], counts["missing"]) == (2, 1, 0)
    headline = counts["headline"]
    assert headline == "1 failed of 2 judged tests"
    broken.stdout.fnmatch_lines([f"chaosmining: {headline}"])
    report = pytester.path / "report"
    assert f"**{headline}**" in (report / "report.md").read_text()
    assert "## Failures (1)" in (report / "report.md").read_text()
    assert headline in (report / "report.html").read_text()
    step = summary_file.read_text()
    assert step.startswith(f"# ChaosMining (smoke tier): **{headline}**") and step.count("| mine | symbolic |") == 1
    assert payload["meta"]["step_summary"] is True
    main([str(report / "results.json")])  # the run wrote the summary: annotate adds no second table
    assert summary_file.read_text() == step


def test_changed_lists_only_tests_that_passed():
    """The judge notes a change of a result within its allowed drop even where another
    check of the same test fails: that test is a failure, not a change."""
    check = BaselineCheck(Baseline([], "b.json", metric_catalog()), BaselineScope((), frozenset(), {}))
    check.noted = {"t::a": ["fprec moved"], "t::b": ["fprec moved"]}
    check.outcome = {"t::a": "passed", "t::b": "failed"}
    assert check.changed == {"t::a": ["fprec moved"]}


def test_counts_state_failures_missing_tests_errors_and_why_tests_were_not_judged():
    outcomes = {
        "symbolic|SA|passed": 3,
        "symbolic|mine|failed": 1,
        "symbolic|-|failed": 1,  # a model-level test
        "vision|mine|not applicable": 4,
    }
    failures = [
        {"nodeid": "a", "kind": "failed"},
        {"nodeid": "chaosmining-baseline::b", "kind": "missing"},
        {"nodeid": "c", "kind": "failed"},
    ]
    counts = RunCounts.of(outcomes, failures, changed=2, errors=["the baseline matches none"])
    assert (counts.judged, counts.failed, counts.missing) == (6, 3, 1)
    assert counts.headline() == (
        "3 failed of 6 judged tests, 1 of them judged in the baseline and not run; 2 changed against the "
        "baseline (passed); 4 not judged (4 not applicable); 1 run error"
    )
    assert RunCounts.from_dict(counts.to_dict()) == counts
    assert RunCounts.of({"s|e|passed": 2}, []).headline() == "all 2 judged tests passed"
    control = RunCounts.of({"s|e|passed": 2, "s|random|xfailed": 1}, [])
    assert control.headline() == "all 3 judged tests passed (1 of them failing as expected)"


def test_the_failure_table_is_markdown_safe_capped_and_says_where_the_rest_are():
    """A raw traceback or ``|attribution|`` in a reason stays in its cell (before: it broke
    the table or became /attribution/); a long list ends with where the rest are."""
    assert cell("mean |attribution|\n  Traceback: x") == "mean \\|attribution\\| Traceback: x"
    assert cell("x" * 50, 10) == "x" * 9 + "…"
    failures = [{"nodeid": f"t.py::x[{i}]", "suite": "vision", "explainer": "e", "message": "|a|"} for i in range(30)]
    table = failure_table(failures, rows=25, more="report.md")
    assert table[0] == "## Failures (30)" and len([r for r in table if r.startswith("| e |")]) == 25
    assert "| … | | | 5 more: report.md |" in table
    assert all(row.count(" | ") + 2 == 5 or not row.startswith("| e |") for row in table)


def test_a_run_stopped_by_a_usage_error_leaves_no_earlier_findings_and_says_why(pytester, run_suite, capsys):
    """A misspelled explainer after a red run: the earlier run's results.json (and every
    file its manifest lists) is gone, stopped.json says why, and the annotate step turns
    that into the run's error instead of the earlier run's failures."""
    pytester.makeconftest(RAISING)
    args = ("--chaosmining-suites", "symbolic")
    run_suite("--chaosmining-explainers", "mine", *args, k="f08", fresh=False).assert_outcomes(passed=2)
    report = pytester.path / "report"
    listed = json.loads((report / MANIFEST).read_text())
    assert "results.json" in listed and "report.md" in listed
    (report / "unlisted.txt").write_text("the user's own file")
    stopped = run_suite("--chaosmining-explainers", "mnie", *args, k="f08", fresh=False)
    assert stopped.ret == 4  # a usage error
    assert not (report / "results.json").exists() and not (report / "report.md").exists()
    assert (report / "unlisted.txt").exists()  # only what a run wrote is removed
    reason = json.loads((report / STOPPED).read_text())["reason"]
    assert "mnie" in reason
    capsys.readouterr()
    main([str(report / "results.json")])
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("::error title=chaosmining: the run stopped::") and "mnie" in line


def test_annotate_states_the_run_s_errors_and_its_one_count():
    payload = {
        "failures": [],
        "counts": RunCounts(judged=3, errors=("the baseline b.json matches none",)).to_dict(),
    }
    (line,) = error_lines(payload)
    assert line == "::error title=chaosmining: the run failed::the baseline b.json matches none"
    assert summary(payload).startswith("**chaosmining: all 3 judged tests passed; 1 run error**")


CLASS_FIVE = """
import os

import torch


def gxi(model, inputs, target):
    x = inputs.detach().clone().requires_grad_(True)
    out = model(x)
    picked = out.gather(1, target.view(-1, 1)).sum() if isinstance(target, torch.Tensor) else out[:, target].sum()
    (grad,) = torch.autograd.grad(picked, x)
    attr = grad * inputs.detach()
    if os.environ.get("CLASS_FIVE") and isinstance(target, torch.Tensor):
        attr[target == 5] = 0.0  # the bug: maps of class 5 emptied
    return attr


def pytest_chaosmining_explainers(config):
    return {"gxi": gxi}
"""


def test_a_failure_names_the_class_its_damage_sits_in(pytester, run_suite, monkeypatch):
    """Gradient × input whose maps of class 5 are emptied, against its baseline: its
    failure names class 5 and says the other classes are untouched (before: sample
    positions only); results.json keeps each explained sample's class."""
    pytester.makeconftest(CLASS_FIVE)
    args = ("--chaosmining-explainers", "gxi", "--chaosmining-suites", "vision", "-rf")
    every = ("--chaosmining-figures", "all")  # a green run draws its example figure on asking
    run_suite(*args, *every, k="RBFP", fresh=False, report="base").assert_outcomes(passed=2)
    monkeypatch.setenv("CLASS_FIVE", "1")
    broken = run_suite(*args, "--chaosmining-baseline", "base/results.json", k="RBFP", fresh=False)
    broken.assert_outcomes(passed=1, failed=1)
    (failure,) = load_results(pytester)["failures"]
    first = failure["message"].splitlines()[0]
    assert "all in class 5: " in first and "classes untouched" in first, failure["message"]
    outline = next(r for r in load_results(pytester)["records"] if r["metric"] == "outline")
    assert outline["labels"] and 5 in outline["labels"] and len(outline["labels"]) == len(outline["maps"])
    pictures = [(pytester.path / folder / "vision_examples.png").read_bytes() for folder in ("base", "report")]
    assert pictures[0] != pictures[1]  # the failing sample drawn, the baseline's patch masses beside this run's


def test_a_model_s_cost_growth_fails_once_as_its_own_test_or_in_the_failures_of_all_its_cases():
    """An explainer's work on a model that grew beyond the allowed slowdown fails as a test of
    its own (``chaosmining-baseline::cost::…``) where its cases passed; where each of them
    failed already (a gross regression of each case), it goes in their reasons instead."""
    import types

    from pytest_chaosmining.verdict.baseline_check import COST_PREFIX
    from pytest_chaosmining.verdict.rule import BaselineRule
    from pytest_chaosmining.verdict.thresholds import Thresholds

    def cpu(formula: int, value: float) -> Record:
        record = Record("symbolic", "mlp", "SA", 0, "cpu_ms", value, {"formula": formula})
        record.nodeid = f"t::case{formula}"
        return record

    baseline = Baseline([cpu(1, 100.0), cpu(2, 100.0)], "b.json", metric_catalog())
    rule = BaselineRule(baseline, Thresholds({}), "smoke", max_slowdown=2.0)
    grown = [cpu(1, 300.0), cpu(2, 300.0)]  # 3x the baseline's median: beyond 2 x 100 + 20 ms

    def finish(failed: set[str]) -> tuple[BaselineCheck, list[object]]:
        emitted: list[object] = []
        hook = types.SimpleNamespace(pytest_runtest_logreport=lambda report: emitted.append(report))
        config = types.SimpleNamespace(option=types.SimpleNamespace(collectonly=False), hook=hook)
        session = types.SimpleNamespace(config=config, exitstatus=0)
        check = BaselineCheck(baseline, BaselineScope((), frozenset(), {}))
        check.finish(session, 0, grown, [], rule, failed)  # type: ignore[arg-type]
        return check, emitted

    check, emitted = finish(set())
    assert [r.nodeid for r in emitted] == [COST_PREFIX + "symbolic::SA::mlp::cpu_ms"] and not check.folded
    check, emitted = finish({"t::case1", "t::case2"})
    assert not emitted and all("Its work on the model grew too" in n[0] for n in check.folded.values())
    assert sorted(check.folded) == ["t::case1", "t::case2"]
    check, emitted = finish({"t::case1"})  # one case passed: the model's growth is a failure of its own
    assert len(emitted) == 1 and not check.folded


def test_a_class_is_named_only_where_the_evidence_holds_it():
    """One changed sample, or changes spread over classes, name no class; most of one
    class's samples changed, and most of the changes there, name it."""
    from pytest_chaosmining.verdict.where import in_classes

    labels = [0, 0, 0, 1, 1, 1, 2, 2, 2, 7]
    assert in_classes([9], labels) == ""  # "all in class 7: 1 of its 1" read as a class's bug
    assert in_classes([0, 3, 6], labels) == ""  # one of each: no class's change
    assert in_classes([0, 3], labels) == ""
    assert in_classes([0, 1, 2], labels) == "all in class 0: 3 of its 3 samples; the other 3 classes untouched"
    assert in_classes([0, 1, 6], labels).startswith("mostly in class 0: 2 of its 3 samples, 2 of the 3 changed")
    assert in_classes([0, 1], [0, 0, 0, 0, 0, 1]) == ""  # 2 of its 5: not the class as a whole
    assert in_classes([0, 1], None) == ""


HALF_SIGNS = """
import torch
from captum.attr import InputXGradient

from pytest_chaosmining.explainers import Explainer


def half_signs(model, inputs, target):  # a random half of the entries flipped, the same for every sample
    flips = torch.ones(inputs.shape[1:], device=inputs.device)
    flips.view(-1)[torch.randperm(flips.numel(), generator=torch.Generator().manual_seed(0))[: flips.numel() // 2]] = -1
    return InputXGradient(model).attribute(inputs, target=target) * flips


def pytest_chaosmining_explainers(config):
    return {"half": Explainer("half", half_signs, stochastic=True)}
"""


def test_declaring_an_explainer_stochastic_does_not_loosen_its_sign_bar(pytester, run_suite):
    """Gradient × input with half its entries' signs flipped, declared ``stochastic=True``
    but deterministic: its signs are judged by the deterministic bar (audio), not the
    samplers' (before: vision's 0.25, which it passed at 0.52; audio's 0.45), and fail."""
    pytester.makeconftest(HALF_SIGNS)
    args = ("--chaosmining-explainers", "half", "--chaosmining-suites", "audio", "-rf")
    result = run_suite(*args, k="RBFP", fresh=False)
    result.assert_outcomes(passed=1, failed=1)
    (failure,) = load_results(pytester)["failures"]
    assert "signs (a signed map gives each feature the sign" in failure["message"], failure["message"]
    sign = next(r for r in load_results(pytester)["records"] if r["metric"] == "truth_sign")
    from pytest_chaosmining.suites import shipped_thresholds

    deterministic = shipped_thresholds().optional_metric("audio", "smoke", "truth_sign", "default", "half")
    assert sign["value"] < sign["threshold"] == deterministic, sign
