"""End-to-end tests of the plugin through pytester: options, registration, verdicts, scheduling and
reports (each run is a subprocess or an in-process pytester run)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SUBSET, load_results
from plugin_runs import CHEATS_CONFTEST, EXPLAINERS, SRC, judged_values


def test_without_the_flag_pytest_is_unaffected(pytester):
    pytester.makepyfile(test_own="def test_a():\n    assert True\n")
    pytester.makeconftest(
        "import sys\n"
        "def pytest_sessionfinish(session):\n"
        "    assert 'torch' not in sys.modules and 'captum' not in sys.modules, 'plugin imported torch'\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["collected 1 item"])
    result.stdout.no_fnmatch_line("*chaosmining summary*")
    # nothing left on disk: not even pytest-benchmark's empty .benchmarks folder
    assert not (pytester.path / ".benchmarks").exists()
    # a folder that was there before the run stays
    (pytester.path / ".benchmarks").mkdir()
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert (pytester.path / ".benchmarks").is_dir()


def test_entry_module_imports_nothing_heavy():
    code = (
        "import sys, pytest_chaosmining.plugin; "
        "print(sorted(m for m in ('torch','captum','sympy','numpy','pandas') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_options_are_listed_in_help(pytester):
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(
        ["*ChaosMining attribution conformance*", "*--chaosmining-tier*", "*--chaosmining-baseline*"]
    )


def test_smoke_run_from_an_empty_directory(pytester, run_suite):
    result = run_suite("-v", k=f"{SUBSET} or test_attribution_cost")
    outcomes = result.parseoutcomes()
    # 2 formulas: 2 quality tests + 2 x 9 built-ins + 10 cost tests (with the control's) pass, 2 random
    # controls xfail, GradCAM is skipped on both formulas and in the cost suite (not applicable)
    assert outcomes.get("passed") == 2 + 2 * len(EXPLAINERS) + len(EXPLAINERS) + 1, result.stdout.str()
    assert outcomes.get("xfailed") == 2 and outcomes.get("skipped") == 3
    result.stdout.fnmatch_lines(
        [
            "*test_fprec?f01-nf20-ln0.01-n2000-mlp3x100-lr0.01-e150-SA-s0? PASSED*",
            "*chaosmining summary*",
            "*suite*explainer*passed*failed*n/a*",  # GradCAM's skips counted as not applicable
            "*symbolic*SA*2*",
        ]
    )
    for name in ("results.json", "results.csv", "report.md", "report.html"):
        assert (pytester.path / "report" / name).is_file(), name
    assert not list((pytester.path / "report").glob("*.png"))  # a green run needs no figure by default
    said = "`fprec.png` (not drawn: `--chaosmining-figures all` draws it)"
    assert said in (pytester.path / "report" / "report.md").read_text()
    from pytest_chaosmining.tools.rebuild import rebuild  # every figure is one option away

    every = rebuild(pytester.path / "every", [pytester.path / "report" / "results.json"], every_figure=True)
    assert {"fprec.png", "leaderboard.png", "cost.png"} <= {Path(p).name for p in every}
    payload = load_results(pytester)
    assert payload["meta"]["tier"] == "smoke" and payload["meta"]["device"] == "cpu"
    assert payload["meta"]["versions"]["torch"]
    import jsonschema  # a run's results.json follows the shipped schema

    schema = json.loads((SRC / "reports" / "results.schema.json").read_text())
    jsonschema.validate(json.loads((pytester.path / "report" / "results.json").read_text()), schema)
    fprec = [r for r in payload["records"] if r["metric"] == "fprec"]
    assert {r["explainer"] for r in fprec} == {*EXPLAINERS, "random"}
    record = fprec[0]
    for field in ("suite", "model", "explainer", "case", "seed", "value", "threshold", "passed"):
        assert field in record
    assert payload["format"] == 3 and set(record["case"]) >= {"formula", "noise_features", "label_noise"}
    random = [r for r in fprec if r["explainer"] == "random"]
    assert random and all(r["passed"] is False for r in random)
    report = (pytester.path / "report" / "report.md").read_text()
    assert "| f08 |" in report and "Attribution cost" in report


def test_model_below_quality_gate_skips_its_explainers(pytester, run_suite):
    pytester.makefile(".toml", strict="[symbolic.smoke]\nquality_gate = 0.99\n")
    result = run_suite(
        "--chaosmining-thresholds",
        "strict.toml",
        "--chaosmining-explainers",
        "SA",
        "--chaosmining-suites",
        "symbolic",
        "-rs",
        k="f08",
    )
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*below its quality gate (uscore 0.* < 0.990)*"])


def test_threshold_failure_prints_value_threshold_and_margin(pytester, run_suite):
    pytester.makefile(".toml", strict="[symbolic.smoke.fprec.explainer.FA]\nf08 = 0.999\n")
    result = run_suite(
        "--chaosmining-thresholds",
        "strict.toml",
        "--chaosmining-explainers",
        "FA",
        "--chaosmining-suites",
        "symbolic",
        k="f08",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FA on f08-*: fprec 0.* < threshold 0.9990 (margin -0.*)*"])


def test_random_control_passing_a_threshold_turns_the_run_red(pytester, run_suite):
    """A bar the control meets fails the run even where another bar of the same
    test rejects the control (here the training-gain bar): each bar must reject it
    on its own, and the control's strict xfail does not absorb that failure."""
    pytester.makefile(".toml", loose="[symbolic.smoke.fprec]\nf01 = 0.0\n")
    result = run_suite(
        "--chaosmining-thresholds",
        "loose.toml",
        "--chaosmining-explainers",
        "random",
        "--chaosmining-suites",
        "symbolic",
        "-rf",
        k="f01",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*the random control passed a bar on its own*fprec 0.*>= threshold 0.0000*"])


def test_second_run_trains_nothing(pytester, run_suite, tmp_path):
    args = ("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic")
    first = run_suite(*args, cache=tmp_path / "c", k="f02")
    first.stdout.fnmatch_lines(["*chaosmining: training symbolic f02-*epoch 150/150*"])
    second = run_suite(*args, cache=tmp_path / "c", k="f02")
    second.assert_outcomes(passed=2)
    second.stdout.no_fnmatch_line("*chaosmining: training*")
    assert load_results(pytester)["records"]  # report still written


def test_quiet_run_prints_no_progress(pytester, run_suite, tmp_path):
    result = run_suite(
        "-q", "--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", cache=tmp_path / "c", k="f03"
    )
    result.assert_outcomes(passed=2)  # the model trained (a run that errors out prints no progress either)
    result.stdout.no_fnmatch_line("*chaosmining: training*")


def test_xdist_workers_report_what_trains(pytester, run_suite, tmp_path):
    """Under -n 2 the workers' progress lines reach the terminal, named by worker."""
    result = run_suite(
        "-n",
        "2",
        "--chaosmining-explainers",
        "SA",
        "--chaosmining-suites",
        "symbolic",
        cache=tmp_path / "c",
        k="f02 or f05",
        subprocess=True,
    )
    result.assert_outcomes(passed=4)
    lines = result.stderr.lines + result.stdout.lines
    assert any(
        line.startswith("[gw") and "chaosmining: training symbolic f0" in line and "epoch 150/150" in line
        for line in lines
    ), "\n".join(lines[-20:])


def test_loadgroup_runs_every_test_of_a_model_on_one_worker(pytester, run_suite):
    """--dist loadgroup keeps a model's tests on one worker (xdist's own grouping is
    lost on pytest >= 9.2: pytest_chaosmining.plugin.scheduling schedules from the plan)."""
    import re

    result = run_suite(
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "-v",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-explainers",
        "SA,IG,DL",
        k="f07 or f09",
        report=None,
    )
    result.assert_outcomes(passed=8)
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        found = re.match(r"\[(gw\d)\].*test_chaosmining_symbolic\.py::\w+\[(f\d\d)-", line)
        if found:
            workers.setdefault(found.group(2), set()).add(found.group(1))
    assert sorted(workers) == ["f07", "f09"] and all(len(w) == 1 for w in workers.values()), workers


def test_the_scheduling_scope_comes_from_the_plan():
    from pytest_chaosmining.plugin.scheduling import scope_of

    groups = {("rfe", "f10-n1500-nf150-e150-SA-s0"): "rfe:f10-n1500-nf150-e150-s0"}
    assert (
        scope_of("rfe/test_chaosmining_rfe.py::test_rfewna[f10-n1500-nf150-e150-SA-s0]", groups)
        == "rfe:f10-n1500-nf150-e150-s0"
    )
    assert (
        scope_of("rfe/test_chaosmining_rfe.py::test_rfewna[f10-n1500-nf150-e150-SA-s0]@x", groups)
        == "rfe:f10-n1500-nf150-e150-s0"
    )  # xdist's suffix, where pytest still applies it
    assert scope_of("tests/test_mine.py::test_a@mine", groups) == "mine"  # a user's own xdist_group is kept
    for other in (
        "rfe/test_chaosmining_rfe.py::test_statistical_rfe[f10-n1500-nf150-e150-s0-RFE-svr]",
        "tests/test_mine.py::test_rfewna[f10-n1500-nf150-e150-SA-s0]",
        "test_x.py::test_y",
    ):
        assert scope_of(other, groups) == other  # not in the plan: a scope of its own


def test_results_do_not_depend_on_xdist(pytester, run_suite, tmp_path):
    run_suite("-n", "0", cache=tmp_path / "a", report="r0", k="f07 or f09")
    run_suite("-n", "2", cache=tmp_path / "b", report="r2", k="f07 or f09")
    v0, v2 = judged_values(pytester, "r0"), judged_values(pytester, "r2")
    assert v0 and v0 == v2


def test_ini_options(pytester, run_suite):
    pytester.makeini(
        "[pytest]\nchaosmining = true\nchaosmining_tier = smoke\nchaosmining_explainers = SA\n"
        "chaosmining_suites = symbolic\nchaosmining_report = ini-report\n"
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-k", "f01", "--chaosmining-cache", str(pytester.path / "c")
    )
    result.assert_outcomes(passed=2)
    assert (pytester.path / "ini-report" / "results.json").is_file()


#: a value each option refuses, and what its message must say beside the flag as typed
BAD_VALUES = {
    "tier": ("huge", "invalid choice"),
    "report": ("a-file", "a folder (not a file)"),
    "cache": ("a-file", "a folder (not a file)"),
    "device": ("nonsense", "nonsense"),
    "explainers": ("nope", "unknown explainer(s) ['nope']"),
    "suites": ("nope", "unknown suite(s) nope; choose from"),
    "seeds": ("0", "a count N >= 1"),
    "data": ("nowhere", "an existing folder"),
    "sweep": ("nope", "unknown factor(s) nope at tier smoke; choose from label_noise, noise_features"),
    "training": ("standard,adversarial", "unknown training mode(s) adversarial; choose from standard, saliency-guided"),
    "sg-k": ("1.5", "a fraction in (0, 1)"),
    "sg-lambda": ("-1", "a weight >= 0"),
    "sg-gradient": ("both", "invalid choice"),
    "ensemble": ("maybe", "invalid choice"),
    "precision": ("fp64", "invalid choice"),
    "pack": ("nowhere", "an existing folder"),
    "builtin-results": ("forget", "invalid choice"),
    "known-defects": ("ignore", "invalid choice"),
    "own-merit": ("some", "invalid choice"),
    "figures": ("pictures", "invalid choice"),
    "verdict": ("lenient", "invalid choice"),
    "call-timeout": ("0", "a number of seconds > 0"),
    "shard": ("3/2", "I/N with 1 <= I <= N"),
    "thresholds": ("high.toml", "[symbolic.smoke.fprec] f03 = 'high' (a number expected)"),
    "baseline": ("missing.json", "No such file"),
    "retired": ("mygxi", "explainers of a baseline, so --chaosmining-baseline too"),
    "max-drop": ("-1", "a drop >= 0"),
    "max-slowdown": ("0.5", "a factor >= 1"),
}


def test_every_option_has_a_bad_value_tried():
    from pytest_chaosmining.settings import OPTION_NAMES

    assert sorted(BAD_VALUES) == sorted(OPTION_NAMES)


#: what pytester's HOME (its own folder) gets from an import: matplotlib's font cache, not the run's
HOME_CACHES = (".cache", ".config")


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.relative_to(root).parts[0] not in HOME_CACHES}


def _only_stopped_written(root: Path, before: set[str], said: str) -> None:
    """Nothing was written but the report folder ``r``'s ``stopped.json``, saying why (so
    that a CI step reading the folder reports the usage error, not an earlier run's
    findings); argparse's own errors (a bad choice) stop pytest before the plugin, which
    writes nothing then."""
    assert _files(root) - {"r", "r/stopped.json"} == before - {"r", "r/stopped.json"}
    stopped = root / "r" / "stopped.json"
    assert not stopped.exists() or said in json.loads(stopped.read_text())["reason"]


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_is_a_usage_error_before_anything_is_written(pytester, name):
    """Every option's bad value stops the run before anything runs or is written (but the
    report folder's ``stopped.json``, saying why): a usage error (exit 4) on one line
    naming the flag as typed, the value and what is allowed; the same value in the ini
    file names the ini key."""
    value, allowed = BAD_VALUES[name]
    pytester.makefile(".toml", high='[symbolic.smoke.fprec]\nf03 = "high"\n')
    (pytester.path / "a-file").write_text("")
    before = _files(pytester.path)
    args = ["--chaosmining", "-p", "no:cacheprovider"]
    args += [] if name == "suites" else ["--chaosmining-suites", "symbolic"]
    if name not in ("cache", "report"):
        args += ["--chaosmining-cache", "c", "--chaosmining-report", "r"]
    result = pytester.runpytest_inprocess(*args, f"--chaosmining-{name}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    said = [line for line in result.stderr.lines if f"--chaosmining-{name}" in line]
    assert said and allowed in said[0], result.stderr.str()
    if name in ("cache", "report"):
        assert _files(pytester.path) == before
    else:
        _only_stopped_written(pytester.path, before, f"--chaosmining-{name}")
        assert "invalid choice" in allowed or (pytester.path / "r" / "stopped.json").exists()
    if "invalid choice" in allowed:
        return  # argparse checks the command line's choices; the ini's are checked below
    key = f"chaosmining_{name.replace('-', '_')}"
    pytester.makefile(".ini", pytest=f"[pytest]\n{key} = {value}\n")
    before = _files(pytester.path)
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    said = [line for line in result.stderr.lines if f"{key} in pytest.ini" in line]
    assert said and allowed in said[0], result.stderr.str()
    if name in ("cache", "report"):
        assert _files(pytester.path) == before
    else:
        _only_stopped_written(pytester.path, before, key)


def test_a_registration_hook_that_raises_is_one_usage_error_naming_it(pytester):
    """A conftest whose ``pytest_chaosmining_explainers`` imports a library that is not
    installed stops the run before anything runs or is written (but ``stopped.json``): one usage error naming
    the hook's file and line and the error, not an internal error or a collection error
    per test file; without ``--chaosmining`` the hook is never called."""
    pytester.makeconftest("def pytest_chaosmining_explainers(config):\n    import not_a_library_here\n    return {}\n")
    before = _files(pytester.path)
    args = ["--chaosmining", "-p", "no:cacheprovider", "--chaosmining-suites", "symbolic"]
    result = pytester.runpytest_inprocess(*args, "--chaosmining-cache", "c", "--chaosmining-report", "r")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    result.stderr.fnmatch_lines(
        ["ERROR: pytest_chaosmining_explainers (*conftest.py:2) raised ModuleNotFoundError: No module named*"]
    )
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    _only_stopped_written(pytester.path, before, "not_a_library_here")
    assert pytester.runpytest_inprocess("-p", "no:cacheprovider").ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_run_that_judges_nothing_fails_unless_it_asked_to_record_only(pytester):
    """Every test ending without a verdict (here the one explainer applies nowhere) is no
    green run: exit 1, saying what became of the tests and how to ask for a run that
    records only; with ``--chaosmining-verdict report-only`` it passes and says so.  Beside
    the control and the models' tests (``own``) the explainer is still judged nowhere: red,
    naming it."""
    pytester.makeconftest(
        "from pytest_chaosmining.explainers import NotApplicable\n"
        "def nowhere(model, inputs, target):\n    raise NotApplicable('not here')\n"
        "def pytest_chaosmining_explainers(config):\n    return {'nowhere': nowhere}\n"
    )
    args = ["--chaosmining", "-p", "no:cacheprovider", "--chaosmining-suites", "symbolic", "-k", "f15 and nowhere"]
    args += ["--chaosmining-explainers", "nowhere"]
    result = pytester.runpytest_inprocess(*args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines(["ERROR: this run judged none of its 1 tests (1 not applicable)*report-only*"])
    recorded = pytester.runpytest_inprocess(*args, "--chaosmining-verdict", "report-only")
    assert recorded.ret == pytest.ExitCode.OK, recorded.stdout.str()
    recorded.stdout.fnmatch_lines(["chaosmining: report-only run*1 tests recorded (1 not applicable), none judged"])
    # beside the control and the models' tests, which judge no explainer of the library's: still red, by name
    own = ["--chaosmining", "-p", "no:cacheprovider", "--chaosmining-suites", "symbolic", "-k", "f15"]
    beside = pytester.runpytest_inprocess(*own, "--chaosmining-explainers", "own")
    assert beside.ret == pytest.ExitCode.TESTS_FAILED, beside.stdout.str()
    beside.stdout.fnmatch_lines(
        [
            "chaosmining: all * judged tests passed*",
            "ERROR: explainer 'nowhere' was judged nowhere in this run: its 1 tests ended 1 not applicable, none "
            "with a verdict of its own (the models' tests and the random control judge no explainer)",
        ]
    )


def test_an_ini_choice_is_checked_too(pytester):
    pytester.makefile(".ini", pytest="[pytest]\nchaosmining_precision = fp64\n")
    result = pytester.runpytest_inprocess("--chaosmining", "-p", "no:cacheprovider", "--co")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*chaosmining_precision in pytest.ini: 'fp64' is not allowed; choose from fp32, bf16"])


def test_training_mode_is_an_axis_of_the_suites(pytester, run_suite):
    """``--chaosmining-training standard,saliency-guided`` collects every model twice;
    the guided one's ids carry its settings."""
    result = run_suite(
        "--chaosmining-training",
        "standard,saliency-guided",
        "--chaosmining-sg-gradient",
        "absolute",
        "--chaosmining-suites",
        "symbolic,audio",
        "--chaosmining-explainers",
        "SA",
        "--collect-only",
        "-q",
        report=None,
        k=None,
    )
    ids = [line for line in result.stdout.lines if "::" in line]
    symbolic = [i for i in ids if "test_fprec[f01-" in i]
    assert len(symbolic) == 2 and sum(i.endswith("-sg-k0.1-l1-abs-SA-s0]") for i in symbolic) == 1, symbolic
    assert sum("-sg-k0.1-l1-abs-SA-s0]" in i for i in ids if "test_channel_attribution" in i) == 4


def test_github_step_summary(pytester, run_suite, monkeypatch):
    """The step summary of a failing run says on its first screen which explainer
    failed where and why, then gives the leaderboard."""
    pytester.makeconftest(CHEATS_CONFTEST)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    run_suite("--chaosmining-explainers", "SA,constant", "--chaosmining-suites", "symbolic", report=None, k="f01")
    lines = summary.read_text().splitlines()
    assert lines[0].startswith("# ChaosMining (smoke tier): **") and " failed of " in lines[0], lines[0]
    first_screen = "\n".join(lines[:12])
    assert "## Failures (" in first_screen and "| constant | symbolic | `test_fprec[f01-" in first_screen
    assert "fprec 0.0000 < threshold" in first_screen, first_screen
    text = "\n".join(lines)
    assert text.index("## Failures") < text.index("## Leaderboard") and "| SA (paper) | " in text
    assert "{" not in text and "nan" not in text


def test_pytest_html_report_carries_the_leaderboard(pytester, run_suite):
    """With pytest-html installed, its report opens with the run's leaderboard (no sort
    script of ours there: the heads are plain)."""
    pytest.importorskip("pytest_html")
    run_suite("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", "--html", "html.html", k="f01")
    page = (pytester.path / "html.html").read_text()
    assert "<h2>Leaderboard</h2>" in page and "SA (paper)" in page and "sortBoard" not in page
    assert "td.v-pass" in page and re.search(r'class="num v-pass" data-sort="[\d.]+">[\d.]+<br><small>pass', page)


def _readme_fixture_example() -> str:
    """The documentation's example test for the public fixtures (docs/internals.md; kept in sync by this test)."""
    readme = (Path(__file__).parents[1] / "docs" / "internals.md").read_text()
    section = readme.split("## Using the suites from your own tests", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_fixture_example_runs_and_is_judged(pytester, run_suite):
    """The public fixtures give a user's own test a trained model, its data and
    truth, and the judge: the README's example passes, its record reaches the
    report, and the same test with a bar it cannot meet fails through the judge."""
    example = _readme_fixture_example()
    pytester.makepyfile(
        test_my_method=example,
        test_my_strict_method=example.replace('0.8, "grad*input on f02"', '1.01, "grad*input on f02"'),
    )
    result = run_suite("--chaosmining-suites", "symbolic", k="my_gradient")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*grad*input on f02: fprec * < threshold 1.0100*"])
    records = [r for r in load_results(pytester)["records"] if r["suite"] == "mine"]
    assert [(r["explainer"], r["metric"]) for r in records] == [("grad*input", "fprec")] * 2
    assert records[0]["value"] == records[1]["value"] >= 0.8
    # two tests with one result identity: a baseline could not tell them apart, and the run says so
    result.stdout.fnmatch_lines(
        ["*tests with one result identity*mine/*grad*input*fprec: *test_my_method.py::*, *test_my_strict_method.py::*"]
    )
    # a user's own judged result is a baseline result like the suites': one that stops running fails
    (pytester.path / "test_my_strict_method.py").write_text(
        example.replace('"mine"', '"mine-strict"').replace('0.8, "grad*input on f02"', '1.01, "grad*input on f02"')
    )
    base = run_suite("--chaosmining-suites", "symbolic", k="my_gradient", report="base")
    base.assert_outcomes(passed=1, failed=1)
    assert "one result identity" not in base.stdout.str()  # told apart now: no warning
    again = run_suite(
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-baseline",
        "base/results.json",
        k="my_gradient and not strict",
        report="again",
    )
    again.assert_outcomes(passed=1, failed=1)
    again.stdout.fnmatch_lines(["FAILED *chaosmining-baseline::*test_my_strict_method*"])


def test_public_fixtures_skip_without_chaosmining(pytester):
    pytester.makepyfile(test_mine="def test_mine(chaosmining_model):\n    raise AssertionError('ran')\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(skipped=1)


def test_markers_select_one_suite_and_one_explainer(pytester, run_suite):
    """``-m "chaosmining_vision and chaosmining_explainer(name='SA')"`` runs exactly the
    vision tests of SA (``-k SA`` would also match the saliency suite's ids); markers
    pass ``--strict-markers``."""
    expression = "chaosmining_vision and chaosmining_explainer(name='SA')"
    result = run_suite("-m", expression, "--strict-markers", "--collect-only", "-q", k=None, fresh=False, report=None)
    ids = [line for line in result.stdout.lines if "::" in line]
    assert ids and all("test_chaosmining_vision.py::" in i and "-SA-" in i for i in ids), ids
    assert len(ids) == 4  # 4 conditions at smoke


def test_a_default_run_leaves_out_built_ins_without_bars_in_a_suite_unless_named(pytester, run_suite):
    """IteROAR has no bars for GBP: a default run does not run it there (and says
    so); named in --chaosmining-explainers, it runs."""
    ids = [
        line
        for line in run_suite(
            "--chaosmining-suites", "iteroar,symbolic", "--collect-only", "-q", k=None, fresh=False, report=None
        ).stdout.lines
        if "::" in line
    ]
    iteroar = [i for i in ids if "test_chaosmining_iteroar.py::test_salient_removal" in i]
    assert iteroar and not any("-GBP" in i for i in iteroar) and any("-SA" in i for i in iteroar)
    assert any("test_chaosmining_symbolic.py::" in i and "-GBP-" in i for i in ids)
    named = run_suite(
        "--chaosmining-suites",
        "iteroar",
        "--chaosmining-explainers",
        "SA,GBP",
        "--collect-only",
        "-q",
        k=None,
        fresh=False,
        report=None,
    ).stdout.lines
    assert any("test_chaosmining_iteroar.py::test_salient_removal" in i and "GBP" in i for i in named)


def test_benchmark_options_carry_every_explainers_timing_and_never_skip_a_judgement(pytester, run_suite):
    """Every explainer test is timed through pytest-benchmark: --benchmark-json lists
    each with its suite, case, explainer and peak memory, built-ins included although
    a first run cached their results.  No pytest-benchmark option turns a
    chaosmining run green with nothing judged: --benchmark-only, --benchmark-skip
    (often in addopts) and -p no:benchmark run every conformance test, timed by hand
    where pytest-benchmark does not time it."""
    args = ("--chaosmining-suites", "symbolic,cost", "--chaosmining-explainers", "SA,IG,random")
    run_suite(*args, "--chaosmining-figures", "all", k="f01 or cost", fresh=False).assert_outcomes(passed=9, xfailed=1)
    report = (pytester.path / "report" / "report.md").read_text()
    assert "## Convergence, consistency and cost (ChaosMining Figure 5)" in report
    assert "| SA | 1.000 (" in report and (pytester.path / "report" / "figure5.png").exists()
    result = run_suite(*args, "--benchmark-only", "--benchmark-json", "bench.json", k="f01 or cost", fresh=False)
    result.assert_outcomes(passed=9, xfailed=1)
    lines = result.stdout.lines  # pytest-benchmark's table compact, one per explainer; the verdicts after it
    tables = [i for i, line in enumerate(lines) if "benchmark 'explainer_name=" in line]
    summary = max(i for i, line in enumerate(lines) if "chaosmining summary" in line)
    assert tables and max(tables) < summary, "\n".join(lines[-60:])
    header = next(line for line in lines if line.startswith("Name (time in"))
    assert "Median" in header and "Rounds" in header and "StdDev" not in header and "Mean" not in header
    bench = json.loads((pytester.path / "bench.json").read_text())["benchmarks"]
    info = {(b["extra_info"]["suite"], b["extra_info"]["explainer"]): b for b in bench}
    assert set(info) == {(suite, e) for suite in ("symbolic", "cost") for e in ("SA", "IG", "random")}
    assert all(b["extra_info"]["case"] and b["extra_info"]["peak_mem_mb"] >= 0 for b in bench)
    assert {b["group"] for b in bench} == {"chaosmining symbolic", "chaosmining cost"}
    assert {b["stats"]["rounds"] for b in bench if b["extra_info"]["suite"] == "cost"} == {5}
    symbolic = info[("symbolic", "SA")]["extra_info"]
    assert symbolic["attribution_calls"] == 2  # the trained model (timed by pytest-benchmark), then the untrained
    for option in (("--benchmark-skip",), ("-p", "no:benchmark")):
        run = run_suite(
            *args, *option, "--chaosmining-builtin-results", "recompute", k="f01 or cost", fresh=False, report="by-hand"
        )
        run.assert_outcomes(passed=9, xfailed=1)
        timed = [r for r in load_results(pytester, "by-hand")["records"] if r["metric"] in ("time_ms", "cpu_ms")]
        assert timed and all(r["value"] > 0 for r in timed if r["explainer"] != "random"), option


def test_a_sweep_judges_its_default_condition_and_reports_the_others(pytester, run_suite):
    """``--chaosmining-sweep``: the default condition is judged with its calibrated bars
    (the control still fails there); the sweep's other conditions, whose bars were never
    calibrated, are recorded and skipped as report-only with the condition named (with
    no noise feature FPrec is 1 on any map, so nothing could be judged there), listed
    in results.json, the terminal summary and report.md, and drawn in figure4.png."""
    result = run_suite(
        "--chaosmining-suites", "symbolic", "--chaosmining-sweep", "noise_features",
        "--chaosmining-explainers", "SA,random", "--chaosmining-figures", "all", "-rs", k="f01",
    )  # fmt: skip
    result.assert_outcomes(passed=2, skipped=6, xfailed=1)
    result.stdout.fnmatch_lines(["*report-only: 6 tests in conditions whose bars were not calibrated*"])
    results = load_results(pytester)
    conditions = results["meta"]["report_only_conditions"]
    assert sum(conditions.values()) == 6 and any(k.startswith("noise_features = 0; every feature") for k in conditions)
    swept = [r for r in results["records"] if r["metric"] == "fprec" and r["case"]["noise_features"] != 20]
    assert swept and all(r["threshold"] is None for r in swept)
    assert (pytester.path / "report" / "figure4.png").stat().st_size > 10_000
    report = (pytester.path / "report" / "report.md").read_text()
    assert "report-only: 6 tests in conditions whose bars were not calibrated (recorded, not judged)" in report


def test_each_option_s_default_is_its_row_s_and_an_empty_list_takes_it(pytester):
    """A run that names no value of an option takes the option's one default (its row in
    ``OPTIONS``): an empty training list trains as the standard mode, never as another."""
    from pytest_chaosmining.settings import OPTIONS, resolve

    config = pytester.parseconfig("--chaosmining", "--chaosmining-training=,")
    settings = resolve(config, ("symbolic",))
    assert settings.training == ("standard",) and settings.guides() == [None]
    defaults = {option.name.replace("-", "_"): option.default for option in OPTIONS if option.default is not None}
    plain = resolve(pytester.parseconfig("--chaosmining"), ("symbolic",))
    for name, default in defaults.items():
        value = getattr(plain, name)
        assert value == default or value == (default,), (name, value, default)
