"""End-to-end tests of runs against a baseline: regressions, missing results, drift of the maps,
costs, shards and JUnit properties."""

import json

import pytest
from conftest import load_results
from plugin_runs import breaking_conftest, drift_checks_of

from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.tools.compare import compare_runs


def test_baseline_regression_fails_the_dropped_results(pytester, run_suite):
    run_suite("--chaosmining-explainers", "SA,FA", "--chaosmining-suites", "symbolic", k="f08").assert_outcomes(
        passed=3
    )
    payload = load_results(pytester)
    for record in payload["records"]:
        if record["explainer"] == "FA" and record["metric"] == "fprec":
            record["value"] += 0.2
    (pytester.path / "baseline.json").write_text(json.dumps(payload))
    result = run_suite(
        "--chaosmining-explainers",
        "SA,FA",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-baseline",
        "baseline.json",
        "--chaosmining-max-drop",
        "0.1",
        k="f08",
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*FA on f08*fprec regressed: * < baseline * - max drop 0.1*"])
    # new: each explainer test's agreement of its maps with the baseline's (a baseline keeps fingerprints)
    assert drift_checks_of(pytester) == 2
    # compared: uscore and each explainer's fprec and training_gain (checks of the maps' own merit and
    # the maps' agreement with the baseline's are judged by their bars alone: neither compared nor new)
    result.stdout.fnmatch_lines(["*baseline *baseline.json: compared 5, new 0, missing 0 judged results*"])
    # without --chaosmining-max-drop each metric's own allowed drop ([suite.tier.max_drop]) applies
    against = ("--chaosmining-explainers", "SA,FA", "--chaosmining-suites", "symbolic")
    against += ("--chaosmining-baseline", "baseline.json", "--chaosmining-thresholds", "drops.toml")
    pytester.makefile(".toml", drops="[symbolic.smoke.max_drop]\nfprec = 0.25\n")
    run_suite(*against, k="f08").assert_outcomes(passed=3)
    pytester.makefile(".toml", drops="[symbolic.smoke.max_drop]\nfprec = 0.15\n")
    result = run_suite(*against, k="f08")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*FA on f08*fprec regressed: * < baseline * - max drop 0.15*"])


def test_a_baseline_matching_nothing_fails_the_run(pytester, run_suite):
    """A baseline from another tier or with renamed models compares nothing: that
    is an error, not a silent pass; a partial match says what was compared and what is new."""
    run_suite("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", k="f08").assert_outcomes(passed=2)
    payload = load_results(pytester)
    renamed = json.loads(json.dumps(payload))
    for record in renamed["records"]:
        record["model"] = "renamed-" + record["model"]
    (pytester.path / "renamed.json").write_text(json.dumps(renamed))
    result = run_suite(
        "--chaosmining-explainers",
        "SA",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-baseline",
        "renamed.json",
        k="f08",
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*ERROR: the baseline *renamed.json matches none of this run's 3 judged results*"])
    partial = json.loads(json.dumps(payload))
    partial["records"] = [r for r in partial["records"] if r["metric"] != "fprec"]
    (pytester.path / "partial.json").write_text(json.dumps(partial))
    result = run_suite(
        "--chaosmining-explainers",
        "SA",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-baseline",
        "partial.json",
        k="f08",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*baseline *partial.json: compared 2, new 1, missing 0 judged results*"])


def test_a_judged_result_that_disappears_fails_the_run_by_name(pytester, run_suite, monkeypatch):
    """Against a baseline, a result judged there and not here fails the run as a test
    of its own that JUnit shows: an explainer that starts declaring it does not apply
    (``NotApplicable``), and a test that no longer runs."""
    args = ("--chaosmining-explainers", "SA,mine", "--chaosmining-suites", "symbolic")
    pytester.makeconftest(breaking_conftest('NotApplicable("this release dropped tabular support")'))
    run_suite(*args, k="f08", fresh=False, report="base").assert_outcomes(passed=3)
    same = run_suite(*args, "--chaosmining-baseline", "base/results.json", k="f08", fresh=False, report="same")
    same.assert_outcomes(passed=3)
    assert drift_checks_of(pytester, "same") == 2  # new: the agreement of the maps with the baseline's
    same.stdout.fnmatch_lines(["*compared 5, new 0, missing 0 judged results*"])  # uscore, two fprec, two gains
    monkeypatch.setenv("BROKEN", "1")
    broken = run_suite(
        *args,
        "--chaosmining-baseline",
        "base/results.json",
        "--junitxml",
        "junit.xml",
        k="f08 and not test_prediction_quality",
        fresh=False,
        report="broken",
    )
    broken.assert_outcomes(passed=1, skipped=1, failed=2)
    broken.stdout.fnmatch_lines(
        [
            "*judged in the baseline, not in this run: it skipped: not applicable*(the baseline's fprec *, "
            "training_gain *)*",
            "*judged in the baseline, not in this run: it did not run*(the baseline's uscore *)*",
            "*compared 2, new 0, missing 3 judged results*",  # the maps' agreement is never new
            "FAILED *chaosmining-baseline::*test_fprec*-mine-*",
            "FAILED *chaosmining-baseline::*test_prediction_quality*",
        ]
    )
    assert broken.ret == 1
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count("<failure") == 2 and "chaosmining-baseline" in junit
    report = (pytester.path / "broken" / "report.md").read_text()
    assert "## Against the baseline" in report and "| missing |" in report
    page = (pytester.path / "broken" / "report.html").read_text()
    assert "<h2>Against the baseline</h2>" in page and "<td class=num>missing</td>" in page
    assert len(load_results(pytester, "broken")["failures"]) == 2


def test_junit_properties_are_scalars(pytester, run_suite):
    import xml.etree.ElementTree as ET

    run_suite(
        "--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", "--junitxml", "junit.xml", k="f08"
    ).assert_outcomes(passed=2)
    case = next(c for c in ET.parse(pytester.path / "junit.xml").iter("testcase") if "SA" in c.get("name"))
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    names = ("chaosmining.fprec", "chaosmining.fprec_threshold", "chaosmining.fprec_margin")  # namespaced
    value, threshold, margin = (float(props[k]) for k in names)
    assert abs(value - threshold - margin) < 1e-9
    assert all(not v.startswith("{'") for v in props.values())  # no Python reprs of dicts
    json.loads(props["chaosmining_record"])  # the record itself travels as JSON


def test_a_baseline_of_another_tier_is_a_usage_error_and_collect_only_judges_nothing(pytester, run_suite):

    run_suite("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic", k="f08").assert_outcomes(passed=2)
    payload = load_results(pytester)
    payload["meta"]["tier"] = "ci"
    (pytester.path / "ci.json").write_text(json.dumps(payload))
    other = run_suite("--chaosmining-explainers", "SA", "--chaosmining-baseline", "ci.json", k="f08", report=None)
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(["*--chaosmining-baseline: *ci.json is a ci run; this run is smoke*"])
    listed = run_suite(
        "--chaosmining-explainers",
        "SA",
        "--chaosmining-baseline",
        "report/results.json",
        "--collect-only",
        k="f08 and test_prediction_quality",
        report=None,
    )
    assert listed.ret == 0 and "chaosmining-baseline::" not in listed.stdout.str()


def test_time_and_memory_are_gated_against_the_baseline(pytester, run_suite):
    """With --chaosmining-baseline, an explainer whose CPU time on a model, the median of
    its cases, grew beyond --chaosmining-max-slowdown × the baseline's (plus slack) fails
    the run (``chaosmining-baseline::cost::…``); a case beyond twice that fails its own
    test, and where every case of the model failed so, the model's growth is part of their
    failures, not a failure again (one regression, one failure; a growth whose cases passed
    fails as its own test: test_one_count.py)."""
    args = ("--chaosmining-suites", "cost", "--chaosmining-explainers", "SA,IG")
    run_suite(*args, k="test_attribution_cost", fresh=False).assert_outcomes(passed=2)
    path = pytester.path / "report" / "results.json"
    payload = read_results(path, samples=True)
    for record in payload["records"]:
        if record["metric"] == "cpu_ms" and record["explainer"] == "IG":
            record["value"] = -1000.0  # a baseline no real call can stay within
    (pytester.path / "baseline.json").write_text(json.dumps(payload))
    result = run_suite(
        *args,
        "--chaosmining-baseline",
        "baseline.json",
        "--chaosmining-max-slowdown",
        "1.5",
        k="test_attribution_cost",
        fresh=False,
        report="again",
    )
    result.assert_outcomes(passed=1, failed=1)  # its own test (a gross regression), its model's growth in it
    result.stdout.fnmatch_lines(
        ["*IG on *: cpu_ms regressed: * ms > 3 × baseline -1000.0 ms + 20 ms*Its work on the model grew too: cpu_ms*"]
    )
    assert "chaosmining-baseline::cost::" not in result.stdout.str()
    counts = read_results(pytester.path / "again" / "results.json", samples=True)["counts"]
    assert counts["failed"] == 1 and counts["judged"] == 2, counts


def test_shards_merge_into_the_report_of_the_unsharded_run(pytester, run_suite):
    """--chaosmining-shard 1/2 and 2/2 split the cases between two runs, stably
    (by case id); their results.json merged by the rebuild command give the
    unsharded run's records (timings aside), outcomes and failures."""
    from pytest_chaosmining.tools.rebuild import rebuild

    args = ("--chaosmining-suites", "symbolic,cost", "--chaosmining-explainers", "SA,random")
    subset = "f01 or f02 or f08 or cost"
    run_suite(*args, k=subset, fresh=False).assert_outcomes(passed=10, xfailed=3)
    shards = []
    for index in (1, 2):
        result = run_suite(*args, "--chaosmining-shard", f"{index}/2", k=subset, fresh=False, report=f"shard{index}")
        assert result.ret == 0
        shards.append(pytester.path / f"shard{index}" / "results.json")
    parts = [{(r["suite"], r["case"]["formula"]) for r in read_results(p)["records"]} for p in shards]
    assert all(parts) and not parts[0] & parts[1], parts  # each shard ran a disjoint, non-empty share
    rebuild(pytester.path / "merged", shards)

    def comparable(report: str) -> tuple:
        payload = read_results(pytester.path / report / "results.json", samples=True)
        records = sorted(
            json.dumps(r, sort_keys=True)
            for r in payload["records"]
            if r["metric"] not in ("time_ms", "cpu_ms", "peak_mem_mb")
        )
        return records, payload["outcomes"], payload["failures"], payload["counts"]

    assert comparable("merged") == comparable("report")
    assert (pytester.path / "merged" / "report.html").exists()


def test_a_shard_against_the_whole_runs_baseline_misses_only_its_own_cases(pytester, run_suite):
    """A shard run is compared with the baseline of the whole run: the other shard's
    results are not missing, one of this shard's cases that stops running is."""
    args = ("--chaosmining-suites", "symbolic", "--chaosmining-explainers", "SA")
    subset = "f01 or f02 or f08"
    run_suite(*args, k=subset, fresh=False, report="whole").assert_outcomes(passed=6)
    first = run_suite(
        *args,
        "--chaosmining-shard",
        "1/2",
        "--chaosmining-baseline",
        "whole/results.json",
        k=subset,
        fresh=False,
        report="shard1",
    )
    assert first.ret == 0
    assert drift_checks_of(pytester, "shard1")  # judged against the baseline, never counted as new
    first.stdout.fnmatch_lines(["*new 0, missing 0 judged results*"])
    mine = sorted({r["case"]["formula"] for r in load_results(pytester, "shard1")["records"]})
    assert mine and len(mine) < 3, mine  # this shard holds some of the three formulas, not all
    keep = " or ".join(f"f{f:02d}" for f in mine[1:]) or "nothing_at_all"
    narrower = run_suite(
        *args,
        "--chaosmining-shard",
        "1/2",
        "--chaosmining-baseline",
        "whole/results.json",
        k=keep,
        fresh=False,
        report="shard1-narrow",
    )
    assert narrower.ret == 1
    narrower.stdout.fnmatch_lines([f"FAILED *chaosmining-baseline::*f{mine[0]:02d}-*"])
    assert f"f{mine[0]:02d}" in " ".join(load_results(pytester, "shard1-narrow")["meta"]["baseline"]["missing"])


#: a conftest registering ``mine``: IG, or IG with its maps drifted when CHAOSMINING_TEST_DRIFT is set
DRIFT_CONFTEST = """
import os

import torch

from pytest_chaosmining.explainers import attribute, builtin_explainers

IG = builtin_explainers()["IG"]

def mine(model, inputs, target, context):
    attr = attribute(IG, model, inputs, target, context)
    if os.environ.get("CHAOSMINING_TEST_DRIFT") == "rows":  # a bug on two inputs only
        attr = attr.clone()
        attr[[3, 7]] = 0.0
    elif os.environ.get("CHAOSMINING_TEST_DRIFT"):
        weights = 0.7 + 0.6 * torch.rand(attr.shape[1:], generator=torch.Generator().manual_seed(3))
        attr = attr * weights
    return attr

def pytest_chaosmining_explainers(config):
    return {"mine": mine}
"""


def test_maps_that_drift_from_the_baseline_fail_and_unchanged_maps_pass(pytester, run_suite, monkeypatch):
    """results.json keeps a fingerprint of each explainer's maps (shown in no human
    report); against that baseline the same explainer agrees exactly and passes,
    and one whose maps were reweighted by 0.7-1.3 per feature (its FPrec still
    passing; on f15, whose mass spreads over several features) fails the drift check, saying how much the maps moved."""
    pytester.makeconftest(DRIFT_CONFTEST)
    args = ("--chaosmining-explainers", "mine", "--chaosmining-suites", "symbolic", "-rf")
    run_suite(*args, report="base", k="f15").assert_outcomes(passed=2)
    records = load_results(pytester, "base")["records"]
    kept = [r for r in records if r["metric"] == "fingerprint"]
    assert len(kept) == 1 and kept[0]["maps"]["samples"] == 400 and kept[0]["explainer"] == "mine"  # every row
    assert "fingerprint" not in (pytester.path / "base" / "report.md").read_text()
    baseline = str(pytester.path / "base" / "results.json")
    again = run_suite(*args, "--chaosmining-baseline", baseline, report="again", k="f15")
    again.assert_outcomes(passed=2)
    agreement = [r for r in load_results(pytester, "again")["records"] if r["metric"] == "map_agreement"]
    assert [(r["threshold"], r["passed"]) for r in agreement] == [(0.998, True)]
    assert agreement[0]["value"] == pytest.approx(1.0, abs=1e-12)
    monkeypatch.setenv("CHAOSMINING_TEST_DRIFT", "1")
    drifted = run_suite(*args, "--chaosmining-baseline", baseline, report="drifted", k="f15")
    drifted.assert_outcomes(passed=1, failed=1)
    drifted.stdout.fnmatch_lines(
        ["*mine on f15*its maps moved from the baseline's (mean cosine of the feature masses over 400 explained*0.9*"]
    )
    fprec = [r for r in load_results(pytester, "drifted")["records"] if r["metric"] == "fprec"]
    assert fprec and all(r["passed"] for r in fprec)
    monkeypatch.setenv("CHAOSMINING_TEST_DRIFT", "rows")
    rows = run_suite(*args, "--chaosmining-baseline", baseline, report="rows", k="f15")
    rows.assert_outcomes(passed=1, failed=1)
    rows.stdout.fnmatch_lines(["*the maps of 2 of 400 explained samples moved from the baseline's*samples 3, 7)*"])


def test_the_run_and_compare_give_the_same_verdicts_on_the_same_files(pytester, run_suite, monkeypatch):
    """A run against a baseline and ``chaosmining-compare`` of the same two results.json ask the
    same rule (:class:`~pytest_chaosmining.verdict.rule.BaselineRule`): the tests the run failed on
    the baseline's account are those compare finds regressed or drifted, each for the same reason,
    and a test neither failed passes both."""
    pytester.makeconftest(DRIFT_CONFTEST)
    args = ("--chaosmining-explainers", "mine,FA,SA", "--chaosmining-suites", "symbolic", "-rf")
    run_suite(*args, report="base", k="f15").assert_outcomes(passed=4)
    payload = load_results(pytester, "base")
    for record in payload["records"]:
        if record["explainer"] == "FA" and record["metric"] == "fprec":
            record["value"] += 0.2  # FA's score falls 0.2 below the baseline's
    baseline = pytester.path / "baseline.json"
    baseline.write_text(json.dumps(payload))
    monkeypatch.setenv("CHAOSMINING_TEST_DRIFT", "1")  # mine's maps move, its bars still pass
    run_suite(*args, "--chaosmining-baseline", str(baseline), report="new", k="f15").assert_outcomes(passed=2, failed=2)
    new = pytester.path / "new" / "results.json"
    failed = {f["nodeid"]: f["message"] for f in json.loads(new.read_text())["failures"]}
    findings = compare_runs(baseline, new)
    judged = {f.nodeid: f.message for f in findings if f.kind in ("regressed", "drift")}
    assert sorted(judged) == sorted(failed) and len(failed) == 2
    for nodeid, message in judged.items():  # compare names the explainer where the run names its case
        reason = message.split(" (")[0].removeprefix("mine: ")
        assert reason in failed[nodeid] and reason.startswith(("fprec regressed: 0.", "its maps moved")), reason
    assert {f.kind for f in findings} == {"failed", "regressed", "drift"}  # the run's own failures, no other


#: ``lrp`` promises its maps' size, ``plain`` does not; both double their maps when CHAOSMINING_TEST_SIZE is set
SIZE_CONFTEST = """
import os

from pytest_chaosmining.explainers import Explainer, attribute, builtin_explainers

SA = builtin_explainers()["SA"]

def maps(model, inputs, target, context):
    attr = attribute(SA, model, inputs, target, context)
    return attr * 2.0 if os.environ.get("CHAOSMINING_TEST_SIZE") else attr

def pytest_chaosmining_explainers(config):
    return {"lrp": Explainer("lrp", maps, sized=True), "plain": maps}
"""


def test_maps_that_change_size_fail_where_the_explainer_promises_their_size(pytester, run_suite, monkeypatch):
    """zennit#54 and #100 moved LRP maps by a factor and nowhere else: against the
    baseline, an explainer that promises its maps' size (``sized``) fails
    ``size_agreement`` when every map doubles, naming the ratios; the same maps of an
    explainer that promises nothing of their size pass (a rescaled saliency is no
    regression), and unchanged maps pass."""
    pytester.makeconftest(SIZE_CONFTEST)
    args = ("--chaosmining-explainers", "lrp,plain", "--chaosmining-suites", "symbolic", "-rf")
    run_suite(*args, report="base", k="f15").assert_outcomes(passed=3)
    baseline = str(pytester.path / "base" / "results.json")
    same = run_suite(*args, "--chaosmining-baseline", baseline, report="same", k="f15")
    same.assert_outcomes(passed=3)
    sizes = [r for r in load_results(pytester, "same")["records"] if r["metric"] == "size_agreement"]
    assert [(r["explainer"], r["threshold"], r["passed"]) for r in sizes] == [("lrp", 0.81, True)]
    monkeypatch.setenv("CHAOSMINING_TEST_SIZE", "1")
    doubled = run_suite(*args, "--chaosmining-baseline", baseline, report="doubled", k="f15")
    doubled.assert_outcomes(passed=2, failed=1)
    doubled.stdout.fnmatch_lines(["FAILED *lrp*the size of its maps moved from the baseline's*", "*0.5000*median 2*"])


def test_a_baseline_from_another_machine_gates_no_cost_and_says_so(pytester, run_suite):
    """The run's summary names the machines when the baseline's CPU differs: scores and
    maps are compared, CPU time and memory not (the session decides it once)."""
    args = ("--chaosmining-suites", "symbolic", "--chaosmining-explainers", "SA")
    run_suite(*args, k="f01", report="base").assert_outcomes(passed=2, xfailed=0)
    path = pytester.path / "base" / "results.json"
    payload = read_results(path, samples=True)
    payload["meta"]["machine"]["cpu"] = "Another CPU 9000"
    path.write_text(json.dumps(payload))
    result = run_suite(*args, f"--chaosmining-baseline={path}", k="f01")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*ran on Another CPU 9000*CPU time and memory are not compared*"])


def test_costs_replayed_from_the_pack_are_not_gated_and_the_run_says_which_were(pytester, run_suite):
    """A built-in's result reused from the pack or the derived cache carries the costs
    recorded when it was computed: they are not this run's, so a baseline no real call
    could stay within fails only where both runs measured the cost.  A registered
    explainer's cost is always measured (and gated)."""
    pytester.makeconftest(SIZE_CONFTEST)
    args = ("--chaosmining-suites", "symbolic", "--chaosmining-explainers", "SA,plain")
    run_suite(*args, k="f01", report="base").assert_outcomes(passed=3)  # computed: measured
    path = pytester.path / "base" / "results.json"
    payload = read_results(path, samples=True)
    costs = [r for r in payload["records"] if r["metric"] == "cpu_ms"]
    assert len(costs) == 2 and all(r["measured"] is True for r in costs)
    for record in costs:
        record["value"] = -1000.0
    path.write_text(json.dumps(payload))
    baseline = f"--chaosmining-baseline={path}"
    run_suite(*args, k="f01", report="warm", fresh=False)  # the derived cache holds SA's result now
    replayed = run_suite(*args, baseline, k="f01", report="replayed", fresh=False)
    replayed.assert_outcomes(passed=2, failed=1)  # plain's test, its work on the model part of its failure
    measured = {
        r["explainer"]: r["measured"] for r in load_results(pytester, "replayed")["records"] if r["metric"] == "cpu_ms"
    }
    assert measured == {"SA": False, "plain": True}
    replayed.stdout.fnmatch_lines(
        [
            "*costs: 2 of 4 compared (measured in both runs); not compared: 2 replayed here*",
            "*plain on*cpu_ms regressed*",
        ]
    )
    again = run_suite(*args, baseline, k="f01", report="measured")
    again.assert_outcomes(passed=1, failed=2)  # each test once, its model's growth in its reason
    again.stdout.fnmatch_lines(["*costs: 4 of 4 compared*", "*SA on*cpu_ms regressed*Its work on the model grew too*"])


ROWS_CONFTEST = """
import os

from pytest_chaosmining.explainers import attribute, builtin_explainers

IG = builtin_explainers()["IG"]

def maps(model, inputs, target, context):
    attr = attribute(IG, model, inputs, target, context)
    bug = os.environ.get("CHAOSMINING_TEST_BUG")
    if bug == "rows":
        attr[100:108] = 0.0  # empty maps on 8 rows beyond the fingerprint's 32
    if bug == "sign":
        attr = -attr
    return attr

def pytest_chaosmining_explainers(config):
    return {"mine": maps}
"""


def test_drift_sees_every_explained_row_and_the_sign(pytester, run_suite, monkeypatch):
    """A saliency whose maps are empty on 8 of the 400 rows passed every symbolic test
    against its baseline (the fingerprint keeps 32), and IG with its sign flipped,
    registered as a plain callable, failed only where ``truth_sign`` is judged: the
    outline of every explained sample fails both, naming the samples, in every
    condition, and an unchanged run passes."""
    pytester.makeconftest(ROWS_CONFTEST)
    args = ("--chaosmining-explainers", "mine", "--chaosmining-suites", "symbolic", "-rf")
    subset = "f01 or f05"
    base = run_suite(*args, report="base", k=subset)
    base.assert_outcomes(passed=4)
    baseline = f"--chaosmining-baseline={pytester.path / 'base' / 'results.json'}"
    run_suite(*args, baseline, report="same", k=subset).assert_outcomes(passed=4)
    monkeypatch.setenv("CHAOSMINING_TEST_BUG", "rows")
    rows = run_suite(*args, baseline, report="rows", k=subset)
    rows.assert_outcomes(passed=2, failed=2)
    rows.stdout.fnmatch_lines(["FAILED *mine*maps of 8 of 400 explained samples changed entirely*", "*100, 101, 102*"])
    monkeypatch.setenv("CHAOSMINING_TEST_BUG", "sign")
    sign = run_suite(*args, baseline, report="sign", k=subset)
    sign.assert_outcomes(passed=2, failed=2)
    sign.stdout.fnmatch_lines(["FAILED *mine*changed entirely*", "*clearly signed now clearly of the other sign*"])
    assert offline_verdicts(pytester, "base", ("same", "rows", "sign")) == {"same": set(), "rows": {2}, "sign": {2}}


def offline_verdicts(pytester, base: str, runs: tuple[str, ...]) -> dict[str, set[int]]:
    """``chaosmining-compare`` of each run against ``base``: the tests its drift findings
    name, counted (the live gate's verdict on the same two files must match)."""
    from pytest_chaosmining.tools.compare import compare_runs

    out = {}
    for run in runs:
        findings = compare_runs(pytester.path / base / "results.json", pytester.path / run / "results.json")
        failing = {f.nodeid for f in findings if f.kind in ("drift", "failed")}
        out[run] = {len(failing)} if failing else set()
    return out


NOISY_CONFTEST = """
import os

import torch

from pytest_chaosmining.explainers import Explainer, attribute, builtin_explainers

SG = builtin_explainers()["SG"]

def maps(model, inputs, target, context):
    attr = attribute(SG, model, inputs, target, context)
    if os.environ.get("CHAOSMINING_TEST_NOISE"):
        attr = attr + 0.5 * attr.std() * torch.randn_like(attr)
    return attr

def pytest_chaosmining_explainers(config):
    return {"sg": Explainer("sg", maps, stochastic=True)}
"""


def test_a_sampler_s_drift_allowance_is_the_stricter_of_the_two_runs_noise(pytester, run_suite, monkeypatch):
    """SmoothGrad with extra noise of half its maps' spread passed 4 of its 23 tests
    against its baseline: its drift allowance was measured on its own, noisier draws.
    A declared sampler's noise is recorded beside its fingerprint, and the allowance is
    the stricter of the two runs': the noisier SmoothGrad fails in every condition, a
    reseed-free rerun passes."""
    pytester.makeconftest(NOISY_CONFTEST)
    # a test of drift: its cost is not at stake (the noise costs nothing; a loaded CI machine once made
    # both first calls 2.3x slower, test_a_first_cost_that_could_fail_its_model_s_median_is_measured_again)
    args = (
        "--chaosmining-explainers",
        "sg",
        "--chaosmining-suites",
        "symbolic",
        "-rf",
        "--chaosmining-max-slowdown=50",
    )
    subset = "f01 or f05"
    run_suite(*args, report="base", k=subset).assert_outcomes(passed=4)
    noise = [r for r in load_results(pytester, "base")["records"] if r["metric"] == "noise_agreement"]
    assert len(noise) == 2 and all(0.0 < r["value"] < 1.0 for r in noise)
    baseline = f"--chaosmining-baseline={pytester.path / 'base' / 'results.json'}"
    run_suite(*args, baseline, report="same", k=subset).assert_outcomes(passed=4)
    monkeypatch.setenv("CHAOSMINING_TEST_NOISE", "1")
    noisy = run_suite(*args, baseline, report="noisy", k=subset)
    noisy.assert_outcomes(passed=2, failed=2)
    noisy.stdout.fnmatch_lines(
        ["FAILED *sg*moved from the baseline's*", "*the stricter of this run's and the baseline's*"]
    )
    assert offline_verdicts(pytester, "base", ("same", "noisy")) == {"same": set(), "noisy": {2}}


RENAMED_CONFTEST = """
import pytest


def gxi(model, inputs, target):
    inputs = inputs.clone().requires_grad_(True)
    model(inputs).sum().backward()
    return inputs.grad * inputs


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {"mygxi": gxi, "mygxi2": gxi}
"""


def test_a_renamed_explainer_is_missing_unless_the_run_retires_it(pytester, run_suite):
    """The baseline's results of an explainer this run does not produce are missing, whatever
    ``--chaosmining-explainers`` names (a rename is no way round the gate); the run that
    declares it retired compares the rest and says what it retired."""
    pytester.makeconftest(RENAMED_CONFTEST)
    args = ("--chaosmining-suites", "symbolic", "-p", "no:randomly")
    run_suite(*args, "--chaosmining-explainers", "mygxi", k="f08", fresh=False, report="base").assert_outcomes(passed=2)
    renamed = run_suite(
        *args, "--chaosmining-explainers", "mygxi2", "--chaosmining-baseline", "base/results.json", k="f08",
        fresh=False, report="renamed",
    )  # fmt: skip
    assert renamed.ret == pytest.ExitCode.TESTS_FAILED, renamed.stdout.str()
    renamed.stdout.fnmatch_lines(["*missing 3 judged results*", "FAILED *chaosmining-baseline::*-mygxi-*"])
    retired = run_suite(
        *args, "--chaosmining-explainers", "mygxi2", "--chaosmining-baseline", "base/results.json",
        "--chaosmining-retired", "mygxi", k="f08", fresh=False, report="retired",
    )  # fmt: skip
    assert retired.ret == pytest.ExitCode.OK, retired.stdout.str()
    retired.stdout.fnmatch_lines(
        [
            "*missing 0 judged results*",
            "retired (--chaosmining-retired), not compared: mygxi (* judged results in the baseline)",
        ]
    )


def test_compare_and_the_pr_summary_judge_as_the_run_judged(pytester, run_suite):
    """The run records how it judged (``meta.judging``: its allowed drop, thresholds file,
    retired explainers): compare applies them to the same two files without being told, and
    the pull request's summary states the run's verdict with the run's counts."""
    from pytest_chaosmining.tools.pr_summary import pr_summary

    args = ("--chaosmining-explainers", "FA,SA", "--chaosmining-suites", "symbolic", "-p", "no:randomly")
    run_suite(*args, report="base", k="f15", fresh=False).assert_outcomes(passed=3)
    payload = load_results(pytester, "base")
    for record in payload["records"]:
        if record["explainer"] == "FA" and record["metric"] == "fprec":
            record["value"] += 0.01  # FA's score falls 0.01 below the baseline's: within the shipped allowed drop
    baseline = pytester.path / "baseline.json"
    baseline.write_text(json.dumps(payload))
    strict = run_suite(*args, "--chaosmining-baseline", str(baseline), "--chaosmining-max-drop", "0.001",
                       report="strict", k="f15", fresh=False)  # fmt: skip
    strict.assert_outcomes(passed=2, failed=1)
    new = pytester.path / "strict" / "results.json"
    assert load_results(pytester, "strict")["meta"]["judging"]["max_drop"] == 0.001
    regressed = {f.nodeid for f in compare_runs(baseline, new) if f.kind == "regressed"}
    failed = {f["nodeid"] for f in load_results(pytester, "strict")["failures"]}
    assert regressed == failed and len(failed) == 1  # the run's allowed drop, read from its results.json
    assert not [f for f in compare_runs(baseline, new, max_drop=0.05) if f.kind == "regressed"]  # told otherwise
    summary = pr_summary(baseline, new)
    assert summary.startswith("## chaosmining: regressed against main") and "1 failed" in summary, summary
    lenient = run_suite(*args, "--chaosmining-baseline", str(baseline), report="lenient", k="f15", fresh=False)
    lenient.assert_outcomes(passed=3)
    summary = pr_summary(baseline, pytester.path / "lenient" / "results.json")
    assert summary.startswith("## chaosmining: no regression against main"), summary


def test_each_baseline_moves_the_own_merit_checks_one_case_on(pytester, run_suite):
    """Without a baseline the own-merit checks run on the first case (f01); against that run
    on f01 and f02 (nothing the baseline judged goes missing), against that one on f02 and
    f03 (f01 only carried: not missing); ``--chaosmining-own-merit all`` checks every case."""
    args = ("--chaosmining-explainers", "SA", "--chaosmining-suites", "symbolic")
    cases = "f01 or f02 or f03"

    def rotation(report: str) -> dict[str, float]:
        records = load_results(pytester, report)["records"]
        return {r["case"]["formula"]: r["value"] for r in records if r["metric"] == "own_merit_rotation"}

    run_suite(*args, k=cases, fresh=False, report="first").assert_outcomes(passed=6)
    assert rotation("first") == {1: 1.0}
    second = run_suite(*args, "--chaosmining-baseline", "first/results.json", k=cases, fresh=False, report="second")
    second.assert_outcomes(passed=6)
    second.stdout.fnmatch_lines(["*missing 0 judged results*"])
    assert rotation("second") == {1: 0.0, 2: 1.0}
    third = run_suite(*args, "--chaosmining-baseline", "second/results.json", k=cases, fresh=False, report="third")
    third.assert_outcomes(passed=6)
    third.stdout.fnmatch_lines(["*missing 0 judged results*"])
    assert rotation("third") == {2: 0.0, 3: 1.0}
    every = run_suite(*args, "--chaosmining-own-merit", "all", k=cases, fresh=False, report="every")
    assert rotation("every") == {1: 1.0, 2: 0.0, 3: 0.0}
    every.assert_outcomes(passed=6)
