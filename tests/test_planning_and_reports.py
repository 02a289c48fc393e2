import json

import pytest

from pytest_chaosmining.core.records import Record, sort_records
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.reports.markdown import build_markdown, write_reports
from pytest_chaosmining.reports.run_results import RunResults
from pytest_chaosmining.suites import all_suites
from pytest_chaosmining.testbeds.formulas.cases import cost_case, plan_cases
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.verdict.baseline import Baseline
from pytest_chaosmining.verdict.rule import BaselineRule
from pytest_chaosmining.verdict.thresholds import Thresholds


def test_tiers_cover_all_formulas_and_the_paper_defaults():
    assert len(plan_cases(SYMBOLIC["smoke"])) == 15
    paper = plan_cases(SYMBOLIC["paper"])
    assert len(paper) == 15 * 5
    c = paper[0]
    assert (c.n_samples, c.noise_features, c.label_noise, c.width, c.depth, c.lr, c.epochs, c.optimizer) == (
        10000,
        100,
        0.01,
        100,
        3,
        1e-3,
        1000,
        "adam",
    )
    assert cost_case(SYMBOLIC["paper"]).formula == 2


def test_sweeps_vary_one_factor_without_duplicating_the_default():
    cases = plan_cases(SYMBOLIC["paper"], seeds=1, sweeps=["noise_features"])
    assert sorted({c.noise_features for c in cases}) == [0, 50, 100, 150, 200]
    assert len(cases) == 15 * 5
    assert {c.label_noise for c in cases} == {0.01}
    with pytest.raises(KeyError, match="no sweep"):
        plan_cases(SYMBOLIC["ci"], sweeps=["width"])


def test_ids_are_readable_and_unique():
    cases = plan_cases(SYMBOLIC["paper"], seeds=2, sweeps=["optimizer", "dropout"])
    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids)
    assert "f03-nf100-ln0.01-n10000-mlp3x100-lr0.001-e1000-s1" in ids
    assert any("-sgd-" in i for i in ids) and any("-do0.1-" in i for i in ids)


def _records():
    out = []
    for seed in (0, 1):
        cond = {"formula": 1, "noise_features": 10, "label_noise": 0.01, "n_samples": 100}
        out.append(Record("symbolic", "mlp", "-", seed, "uscore", 0.9, cond))
        out.append(Record("symbolic", "mlp", "SA", seed, "fprec", 0.8 + seed / 10, cond, 0.5, True))
        out.append(Record("symbolic", "mlp", "SA", seed, "time_ms", 3.0, cond))
    return out


def test_markdown_tables_give_mean_and_std_over_seeds():
    md = build_markdown(
        RunResults(_records(), {"tier": "ci", "seeds": 2, "versions": {}}, {"symbolic|SA|passed": 2}), all_suites()
    )
    assert "| nf=10, ln=0.01, n=100, mlp | 0.900 ± 0.000 | 0.850 ± 0.050 |" in md
    assert "| symbolic | SA | 2 | 0 |\n" in md  # passed and failed; no column for a kind nobody met


def test_write_reports(tmp_path):
    recs = sort_records(_records())
    written = write_reports(tmp_path, RunResults(recs, {"tier": "ci"}), "# md")
    assert {p.split("/")[-1] for p in written} == {
        "results.json",
        "results.samples.json.gz",
        "results.csv",
        "report.md",
    }
    from pytest_chaosmining.suites import get_suite

    assert [p.name for p in get_suite("symbolic").figures(recs, tmp_path, None, True)] == ["fprec.png"]
    assert get_suite("symbolic").figures(recs, tmp_path / "needed", None, False) == []  # none a failure needs
    payload = read_results(tmp_path / "results.json", samples=True)
    assert len(payload["records"]) == 6
    header = (tmp_path / "results.csv").read_text().splitlines()[0]
    assert header.startswith("suite,model,explainer,formula,label_noise,n_samples,noise_features,seed,metric,value")


def test_baseline_flags_only_drops_beyond_the_allowance(tmp_path):
    from pytest_chaosmining.suites import metric_catalog

    catalog = metric_catalog()
    recs = [Record(**{**r.to_dict(), "threshold": 0.5}) if r.metric == "fprec" else r for r in _records()]
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"records": [r.to_dict() for r in recs]}))
    base = Baseline.load(path, catalog)
    r = recs[1]
    fprec = catalog.judged(r.suite, r.metric)
    assert base.drop(r, fprec, 0.02).regression is None
    worse = Record(**{**r.to_dict(), "value": r.value - 0.05})
    assert "regressed" in base.drop(worse, fprec, 0.02).regression
    slower = Record(**{**recs[2].to_dict(), "value": 1e9})
    assert base.drop(slower, fprec, 0.02).regression is None  # not judged in the baseline: no value to compare
    path.write_text("{")
    with pytest.raises(ValueError, match="not JSON .*: not a chaosmining results.json"):
        Baseline.load(path, catalog)


def test_every_judged_metric_is_compared_with_the_baseline_training_gain_too():
    """The judge refuses a metric its suite does not declare judged, and the baseline
    compares every declared judged metric: training_gain was once left out of a
    central list, so its drop passed unnoticed."""
    from pytest_chaosmining.core.metrics.catalog import UndeclaredMetric
    from pytest_chaosmining.suites import all_suites, metric_catalog
    from pytest_chaosmining.verdict.judge import ConformanceFailure, Judge

    catalog = metric_catalog()
    fields = {"formula": 2, "noise_features": 20, "label_noise": 0.01, "n_samples": 2000}
    old = Record("symbolic", "mlp", "IG", 0, "training_gain", 0.60, fields, threshold=0.1, passed=True)
    rule = BaselineRule(Baseline([old], "base.json", catalog), Thresholds({}), "ci", max_drop=0.02)
    judge = Judge({}, rule, tier="ci", catalog=catalog)

    class Node:
        nodeid = "t"
        user_properties: list = []

    dropped = Record(**{**old.to_dict(), "value": 0.30, "threshold": None, "passed": None})
    with pytest.raises(ConformanceFailure, match="training_gain regressed: 0.3000 < baseline 0.6000"):
        judge.require(Node(), dropped, 0.1, "IG on f02")
    with pytest.raises(UndeclaredMetric, match="'made_up' of suite 'symbolic' is judged but not declared"):
        judge.require(Node(), Record("symbolic", "mlp", "IG", 0, "made_up", 1.0, fields), 0.1, "IG")
    for suite in all_suites():  # every calibrated metric is a declared judged one
        assert all(catalog.is_judged(suite.name, name) for name in suite.calibration.judged)


def test_audio_cases_cover_the_grid_with_readable_ids():
    from pytest_chaosmining.testbeds.audio.cases import plan_cases as plan_audio
    from pytest_chaosmining.testbeds.audio.tiers import AUDIO

    cases = plan_audio(AUDIO["paper"], seeds=2)
    assert len(cases) == 4 * 4 * 2 and len({c.id for c in cases}) == len(cases)
    ids = {c.id for c in cases}
    assert "SBFP-10ch-16kHz-lstm-e30-s1" in ids
    transformer = next(c for c in cases if c.model == "transformer")
    assert transformer.lr == 1e-4 and next(c for c in cases if c.model == "tcn").lr == 1e-3
    paper = AUDIO["paper"]
    assert (paper.channels, paper.rate, paper.duration, paper.epochs, paper.batch_size) == (10, 16000, 1.0, 30, 128)


def test_audio_report_is_shaped_like_table_4():
    from pytest_chaosmining.reports.markdown import build_markdown

    records = []
    for cond in ("RBFP", "SBFP", "SBRP"):
        c = {
            "condition": cond,
            "arch": "tcn",
            "channels": 8,
            "rate": 4000,
            "duration": 0.5,
            "n_train": 10,
            "source": "embedded",
        }
        records.append(Record("audio", "tcn-e8", "-", 0, "accuracy", 0.8, c))
        records.append(Record("audio", "tcn-e8", "-", 0, "params_m", 0.04, c))
        records.append(Record("audio", "tcn-e8", "SA", 0, "channel_share", 0.7, c, 0.5, True))
        records.append(Record("audio", "tcn-e8", "SA", 0, "top1_hit", 0.9, c))
    text = build_markdown(RunResults(records, {"tier": "ci"}), all_suites())
    assert "## Audio" in text and "### speech at a fixed channel (FP)" in text
    assert "| tcn-e8 | 0.040 | 8 ch × 0.5 s @ 4000 Hz | 80.00 | 0.700 |" in text
    assert "SBRP SA (share)" in text and "Top-1 channel hit rate" in text


def test_protocol_cases_and_the_paper_settings():
    from pytest_chaosmining.suites.bam.spec import plan_cases as bam_cases
    from pytest_chaosmining.suites.bam.tiers import BAM
    from pytest_chaosmining.suites.iteroar.spec import plan_cases as iteroar_cases
    from pytest_chaosmining.suites.iteroar.tiers import ITEROAR
    from pytest_chaosmining.testbeds.digits.tiers import VISION

    paper = iteroar_cases(ITEROAR["paper"], VISION["paper"])
    assert {c.rho for c in paper} == {0.5} and {c.fraction for c in paper} == {0.05}  # IteROAR: τ 95th pct, ρ 0.5
    assert {c.fill for c in paper} == {"zero", "mean"} and all(c.retrain_epochs is None for c in paper)
    for tier in ("smoke", "ci", "paper"):
        cases = iteroar_cases(ITEROAR[tier], VISION[tier])
        assert len({c.id for c in cases}) == len(cases)
        # random positions, except at smoke, where the SBRP model rarely learns: there the
        # model-randomisation check (training_gain) rejects a centre prior instead
        assert all(c.base.condition.endswith("RP") for c in cases) or tier == "smoke"
    assert BAM["paper"].ks == (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    ids = [c.explainer_id("SA") for c in bam_cases(BAM["ci"], seeds=3)]
    assert len(set(ids)) == 3 and ids[0] == "40px-small_cnn-e10-SA-s0"


def test_protocol_report_sections_from_records(tmp_path):
    from pytest_chaosmining.reports.tables import records_frame
    from pytest_chaosmining.suites import get_suite

    cond = {"condition": "SBRP", "canvas": 42, "fill": "zero", "tau": 0.95, "rho": 0.05}
    records = [
        Record("iteroar", "m", name, 0, "accuracy", acc, {**cond, "iteration": i})
        for name, accs in (("random-pixels", (0.6, 0.5)), ("SA", (0.6, 0.1)))
        for i, acc in enumerate(accs)
    ]
    records += [
        Record("iteroar", "m", "SA", 0, metric, value, cond)
        for metric, value in (("leak_accuracy", 0.4), ("leak_random_accuracy", 0.1), ("mamo", 0.2), ("drop_gain", 0.4))
    ]
    records += [
        Record("bam", "m", "SA", 0, "mcs", 0.3, {"canvas": 32}),
        Record("bam", "m", "-", 0, "accuracy", 0.9, {"canvas": 32, "role": "f_o", "version": "images"}),
    ]
    iteroar, bam = get_suite("iteroar"), get_suite("bam")
    lines = "\n".join(iteroar.sections(records_frame(records)) + bam.sections(records_frame(records)))
    assert "| SA | 0.600 → 0.100 |" in lines and "0.400 / 0.100 **leaks**" in lines
    assert "| random-pixels | 0.600 → 0.500 |" in lines and "| f_o | 0.900 |" in lines
    written = iteroar.figures(records, tmp_path, None, True) + bam.figures(records, tmp_path, None, True)
    assert [p.name for p in written] == ["iteroar_accuracy.png", "bam_scores.png"]


def test_seed_ranges_plan_exactly_those_seeds():
    from pytest_chaosmining.settings import parse_seeds
    from pytest_chaosmining.testbeds.formulas.cases import plan_cases
    from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

    assert parse_seeds("3") == 3 and parse_seeds("100-103") == range(100, 104)
    for bad in ("0", "5-4", "x", "1-"):
        with pytest.raises(ValueError, match="seeds"):
            parse_seeds(bad)
    assert {c.seed for c in plan_cases(SYMBOLIC["smoke"], parse_seeds("100-102"))} == {100, 101, 102}
    assert {c.seed for c in plan_cases(SYMBOLIC["smoke"], 2)} == {0, 1}


def test_report_lists_failures_first_and_embeds_the_figures_it_names():
    from pytest_chaosmining.reports.markdown import embed_figures

    outcomes = {"symbolic|SA|passed": 3, "vision|mine|failed": 1, "vision|mine|passed": 1}
    failures = [
        {
            "nodeid": "vision/test_chaosmining_vision.py::test_iou[x-mine-s0]",
            "suite": "vision",
            "explainer": "mine",
            "message": "mine on x: iou 0.10 < threshold 0.56 | margin",
        }
    ]
    md = build_markdown(
        RunResults(
            _records(),
            {"tier": "smoke", "seeds": {"symbolic": "0", "vision": "0-1"}, "versions": {}},
            outcomes,
            failures,
        ),
        all_suites(),
    )
    assert "| seeds per suite | symbolic 0, vision 0-1 |" in md and "{" not in md.split("## Failures")[0]
    assert md.index("## Failures (1)") < md.index("## Conformance tests")
    assert "| mine | vision | `test_iou[x-mine-s0]` | mine on x: iou 0.10 < threshold 0.56 \\| margin |" in md
    table = md[md.index("## Conformance tests") :]
    assert table.index("| vision | mine |") < table.index("| symbolic | SA |")
    text = embed_figures("Curves: `curves.png`.\nmore\n\nnext", ["curves.png", "other.png"])
    assert text.split("\n")[:4] == ["Curves: [`curves.png`](curves.png).", "more", "", "![curves.png](curves.png)"]
    assert text.endswith("## Figures\n\n![other.png](other.png)\n")
    left_out = embed_figures("Curves: `curves.png`, `bars.png`.\n", ["curves.png"], "not drawn")
    assert left_out.startswith("Curves: [`curves.png`](curves.png), `bars.png` (not drawn).")


def test_shards_split_the_cases_by_id_alone_and_cover_each_once():
    from pytest_chaosmining.run.torch_device import worker_gpu
    from pytest_chaosmining.settings import parse_shard
    from pytest_chaosmining.suites import in_shard

    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/2", "3/2", "2", "a/b", "1/0"):
        with pytest.raises(ValueError, match="I/N"):
            parse_shard(bad)
    ids = [f"case-{i}" for i in range(200)]
    owners = [[i for i in (1, 2, 3) if in_shard("vision", case, (i, 3))] for case in ids]
    assert all(len(o) == 1 for o in owners)  # every case in exactly one shard
    sizes = [sum(o == [i] for o in owners) for i in (1, 2, 3)]
    assert min(sizes) > 40, sizes  # and the shards are not lopsided
    assert all(in_shard("vision", case, None) for case in ids)
    assert [worker_gpu(w, 4) for w in ("gw0", "gw1", "gw5", None)] == [0, 1, 1, 0]
    assert worker_gpu("gw3", 1) == 0


def test_records_of_results_before_format_2_are_read_with_their_case_fields():
    """results.json before format 2 named a record's case fields ``condition``: a
    committed baseline of that format still compares result for result."""
    fields = {"condition": "RBFP", "canvas": 42}
    record = Record("vision", "small_cnn-e8", "IG", 0, "iou", 0.6, fields, 0.2, True, "t[IG]")
    legacy = {k: v for k, v in record.to_dict().items() if k != "case"} | {"condition": fields}
    assert Record.from_dict(legacy) == record and Record.from_dict(record.to_dict()) == record
    assert Record.from_dict(legacy).key() == record.key()


def test_the_terminal_summary_never_prints_nan():
    """A time that was not measured (nan: a suite that times nothing, a not-applicable
    row) leaves its column at '-' instead of averaging into nan."""
    from collections import Counter

    from pytest_chaosmining.reports.markdown import terminal_table
    from pytest_chaosmining.suites import all_suites

    records = [
        Record("rfe", "RFEwNA", "SA", 0, "fprec", 0.8, {}),
        Record("rfe", "RFEwNA", "SA", 0, "time_ms", float("nan"), {}),
        Record("symbolic", "mlp", "IG", 0, "time_ms", 2.0, {}),
        Record("symbolic", "mlp", "IG", 0, "time_ms", float("nan"), {}),
    ]
    outcomes = Counter({("rfe", "SA", "passed"): 1, ("iteroar", "IG", "skipped"): 1, ("symbolic", "IG", "passed"): 1})
    lines = terminal_table(records, outcomes, all_suites())
    assert not any("nan" in line for line in lines), lines
    assert lines[-1].split()[-1] == "2.0" and lines[2].split()[-1] == "-"


def test_the_terminal_summary_has_no_row_without_a_test():
    """Values recorded without a test of their explainer (a reference's, a timing's)
    make no row of zeros: a row stands for a verdict."""
    from collections import Counter

    from pytest_chaosmining.reports.markdown import terminal_table
    from pytest_chaosmining.suites import all_suites

    records = [
        Record("cost", "mlp", "mylib-IxG", 0, "time_ms", 3.0, {}),
        Record("symbolic", "mlp", "IG", 0, "fprec", 0.8, {}),
    ]
    lines = terminal_table(records, Counter({("symbolic", "IG", "passed"): 1}), all_suites())
    assert len(lines) == 2 and lines[1].split()[:3] == ["symbolic", "IG", "1"], lines


def test_skips_are_counted_by_why_the_test_was_not_judged():
    """The skip messages of the judge and the suites sort into the reasons the reports
    count apart (not applicable, no calibrated bar, report-only, model below gate);
    the tables show a column per reason counted and none for reasons not met."""
    from collections import Counter

    from pytest_chaosmining.reports.markdown import build_markdown, terminal_table
    from pytest_chaosmining.suites import all_suites
    from pytest_chaosmining.verdict.skips import skip_kind

    messages = {
        "Skipped: not applicable: GradCAM needs a 2-D convolution": "not applicable",
        "not judged: no calibrated bar for iou here (IG on RBRP); the values are recorded": "no calibrated bar",
        "not judged: suite rfe is report-only at this tier (its bars were not calibrated on held-out seeds)": (
            "report-only"
        ),
        "model RBRP-42px is below its quality gate (accuracy 0.110 < 0.500); its explainers are not judged": (
            "model below gate"
        ),
        "f_0 of SBFP-42px is below the IteROAR accuracy gate (0.4 < 0.5): removing features ...": "model below gate",
        "BAM premise does not hold on case; nothing to score (...)": "model below gate",
        "a user's own reason": "skipped",
    }
    assert {m: skip_kind(m) for m in messages} == messages
    outcomes = Counter(
        {("vision", "IG", "passed"): 3, ("vision", "IG", "not applicable"): 1, ("rfe", "IG", "report-only"): 2}
    )
    lines = terminal_table([], outcomes, all_suites())
    assert lines[0].split()[2:6] == ["passed", "failed", "n/a", "report"], lines[0]
    assert lines[1].split()[:6] == ["rfe", "IG", "0", "0", "0", "2"], lines
    markdown = build_markdown(
        RunResults([], {"tier": "smoke"}, {f"{s}|{e}|{o}": n for (s, e, o), n in outcomes.items()}), []
    )
    assert "| suite | explainer | passed | failed | not applicable | report-only |" in markdown


def test_a_scorecard_gives_each_explainer_its_failures_closest_bar_cost_and_change():
    from pytest_chaosmining.reports.scorecard import scorecards

    def rec(explainer, metric, value, threshold=None, cond="RBRP"):
        return Record(
            "vision", "small_cnn", explainer, 0, metric, value, {"condition": cond}, threshold,
            None if threshold is None else value >= threshold, f"v.py::test_iou[{cond}-{explainer}-s0]",
        )  # fmt: skip

    records = [
        rec("SA", "iou", 0.70, 0.60), rec("SA", "iou", 0.65, 0.60, "SBRP"), rec("SA", "time_ms", 10.0),
        rec("IG", "iou", 0.50, 0.55), rec("IG", "iou", 0.70, 0.55, "SBRP"), rec("IG", "time_ms", 25.0),
        rec("random", "iou", 0.02, 0.55),
    ]  # fmt: skip
    baseline = {
        "rows": [
            ["vision", "small_cnn", "IG", "iou", "RBRP", 0, 0.50, 0.60],
            ["vision", "m", "IG", "iou", "x", 0, None, 0.6],
        ]
    }
    cards = scorecards(records, baseline)
    assert list(cards) == ["SA", "IG"]  # the control has no scorecard
    assert cards["IG"][0].cells() == ["vision", "2", "1", "-0.050 (iou, RBRP-IG-s0)", "2.50×", "-0.1000"]
    assert cards["SA"][0].cells() == ["vision", "2", "0", "+0.050 (iou, SBRP-SA-s0)", "1.00×", "—"]


def test_an_undefined_value_reads_as_a_word_not_nan():
    from pytest_chaosmining.reports.tables import mean_sd

    assert mean_sd([float("nan")]) == "undefined" and mean_sd([0.5, float("nan")]) == "0.500" and mean_sd([]) == ""


def test_random_positions_train_longer_at_smoke_and_a_resized_pick_sets_one_size_for_all():
    """The smoke RP models train on more data for longer (the fixed ones keep their
    cases); a composing suite's pick that sets the training size sets it everywhere."""
    from pytest_chaosmining.testbeds.digits.cases import plan_cases
    from pytest_chaosmining.testbeds.digits.tiers import VISION

    cases = {c.condition: c for c in plan_cases(VISION["smoke"])}
    assert (cases["RBFP"].n_train, cases["RBFP"].epochs) == (4000, 8)
    assert (cases["RBRP"].n_train, cases["RBRP"].epochs) == (cases["SBRP"].n_train, cases["SBRP"].epochs) == (8000, 16)
    kept = VISION["smoke"].resized(("small_cnn",), ("SBRP",), {"n_val": 300})
    assert kept.training_size("SBRP") == (8000, 16)
    resized = VISION["smoke"].resized(("small_cnn",), ("SBRP",), {"n_train": 1000, "epochs": 3})
    assert resized.training_size("SBRP") == (1000, 3) and resized.conditions == ("SBRP",)


def test_a_shipped_test_that_fails_before_naming_its_explainer_is_a_failure_of_the_run():
    """A suite's test that errs before the judge tags it (in a fixture, in a suite's own
    scoring: seen with an old scikit-learn) is listed among results.json's failures, so
    that chaosmining-compare and the summary cannot call the run clean."""
    import types
    from collections import Counter

    from _pytest.reports import TestReport

    from pytest_chaosmining.plugin.collector import ResultCollector

    def report(nodeid: str) -> TestReport:
        return TestReport(nodeid, ("x", 0, "x"), {}, "failed", "InvalidParameterError: subsample", "setup")

    collector = types.SimpleNamespace(
        failures={}, tests={}, records=[], _suite_of=ResultCollector._suite_of, baseline_check=None
    )
    collector._fail = lambda *args: ResultCollector._fail(collector, *args)
    collector.uncalibrated, collector.uncalibrated_tests, collector.known_defects = Counter(), [], {}
    for nodeid in (
        "rfe/test_chaosmining_rfe.py::test_rfewna[generated-SA-s0]",
        "../../src/pytest_chaosmining/suites/symbolic/test_chaosmining_symbolic.py::test_prediction_quality[f01]",
        "tests/test_mine.py::test_own",  # a user's own test: not the plugin's to count
        "tests/test_chaosmining_rfe.py::test_copy",  # a user's file of the same name elsewhere
    ):
        ResultCollector.pytest_runtest_logreport(collector, report(nodeid))
    failures = list(collector.failures.values())
    assert [(f["suite"], f["explainer"]) for f in failures] == [("rfe", "-"), ("symbolic", "-")]
    assert "subsample" in failures[0]["message"]
    assert sorted(collector.tests.values()) == [("rfe", "-", "failed"), ("symbolic", "-", "failed")]  # counted once


def test_a_report_only_tier_s_sweep_still_finds_its_default_condition():
    """At a tier whose bars are report-only (paper) no condition is judged, and with one
    swept factor every condition differs from the others in one field: the default is
    the tier's own, not the first listed (nf = 0, where every map scores 1)."""
    from pytest_chaosmining.suites.symbolic.figure4 import in_default_condition
    from pytest_chaosmining.testbeds.formulas.cases import default_condition
    from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

    paper = default_condition(SYMBOLIC["paper"])
    records = [
        Record("symbolic", "mlp", "SA", 0, "fprec", value, case={**paper, "formula": 1, "noise_features": nf})
        for nf, value in ((0, 1.0), (100, 0.8), (200, 0.6))
    ]
    assert [r.value for r in in_default_condition(records)] == [0.8]
