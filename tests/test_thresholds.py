"""The shipped thresholds reject the random control, everywhere, by a margin."""

import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.attribution import fprec
from pytest_chaosmining.core.tiers import TIERS
from pytest_chaosmining.suites import SUITES_DIR, shipped_thresholds
from pytest_chaosmining.testbeds.formulas.data import TRAIN_FRACTION
from pytest_chaosmining.testbeds.formulas.formulas import get_formula
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

THRESHOLDS = shipped_thresholds()
EXPLAINERS = ("SA", "DL", "IG", "FA", "some-user-explainer")


@pytest.mark.parametrize("tier", TIERS)
def test_random_attributions_fail_every_symbolic_threshold(tier):
    spec = SYMBOLIC[tier]
    n_test = spec.n_samples - int(round(spec.n_samples * TRAIN_FRACTION))
    rng = np.random.default_rng(0)
    for formula in spec.formulas:
        k = get_formula(formula).n_vars
        n_features = k + spec.noise_features
        truth = rng.choice(n_features, size=k, replace=False)
        random_fprec = fprec(rng.random((n_test, n_features)), truth)
        chance = k / n_features
        assert random_fprec == pytest.approx(chance, abs=0.03)
        for explainer in EXPLAINERS:
            thr = THRESHOLDS.metric("symbolic", tier, "fprec", f"f{formula:02d}", explainer)
            assert thr >= chance + 0.1, (tier, formula, explainer, thr, chance)
            assert random_fprec < thr, (tier, formula, explainer)


@pytest.mark.parametrize("tier", TIERS)
def test_quality_gate_is_meaningful(tier):
    gate = THRESHOLDS.quality_gate("symbolic", tier)
    # a constant prediction of 0 scores UScore 0; predicting y itself scores 1
    assert 0.3 <= gate < 1.0


def test_user_file_overrides_one_entry(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("[symbolic.ci.fprec]\nf03 = 0.99\n")
    merged = shipped_thresholds(path)
    assert merged.metric("symbolic", "ci", "fprec", "f03", "user") == 0.99
    assert merged.metric("symbolic", "ci", "fprec", "f04", "user") == THRESHOLDS.metric(
        "symbolic", "ci", "fprec", "f04", "user"
    )


def test_unreadable_user_file(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text("not = [toml")
    with pytest.raises(ValueError, match="cannot read chaosmining thresholds"):
        shipped_thresholds(path)


@pytest.mark.parametrize("tier", TIERS)
def test_random_maps_fail_every_vision_threshold(tier):
    from pytest_chaosmining.core.metrics.localisation import localisation
    from pytest_chaosmining.testbeds.digits.tiers import VISION

    spec = VISION[tier]
    side = 7 * spec.fg
    rng = np.random.default_rng(0)
    attr = rng.random((16, 3, side, side))
    corners = rng.integers(0, 6 * spec.fg + 1, (16, 2))
    boxes = np.concatenate([corners, np.full((16, 2), spec.fg)], axis=1)
    iou, _ = localisation(attr, boxes, sigma=6 * side / 224)
    for condition in spec.conditions:
        for explainer in EXPLAINERS:
            thr = THRESHOLDS.optional_metric("vision", tier, "iou", condition, explainer)
            assert thr is None or (thr >= 1 / 49 + 0.05 and iou.mean() < thr), (tier, condition, explainer, thr)


def test_declared_unlearned_models():
    assert THRESHOLDS.unlearned("vision", "paper", "alexnet", "RBFP")
    assert THRESHOLDS.unlearned("vision", "ci", "small_cnn", "RBRP") is None
    assert "23 of 24" in THRESHOLDS.unlearned("vision", "smoke", "small_cnn", "SBFP")  # a rate, measured


@pytest.mark.parametrize("tier", TIERS)
def test_random_maps_fail_every_audio_threshold(tier):
    from pytest_chaosmining.core.metrics.attribution import channel_scores
    from pytest_chaosmining.testbeds.audio.tiers import AUDIO

    spec = AUDIO[tier]
    rng = np.random.default_rng(0)
    attr = rng.random((256, spec.channels, 200))
    share, hit = channel_scores(attr, rng.integers(0, spec.channels, 256))
    chance = 1 / spec.channels
    assert share.mean() == pytest.approx(chance, abs=0.01) and hit.mean() == pytest.approx(chance, abs=0.05)
    assert THRESHOLDS.default("audio", tier, "training_gain") >= 0.05
    judged = 0
    for model in spec.models:
        for condition in spec.conditions:
            key = f"{model}-{condition}"
            if THRESHOLDS.unlearned("audio", tier, key, model, condition):
                continue
            for explainer in EXPLAINERS:
                top1 = THRESHOLDS.optional_metric("audio", tier, "top1_hit", key, explainer)
                assert top1 is None or (top1 >= chance + 0.1 and hit.mean() < top1), (tier, key, explainer, top1)
                bar = THRESHOLDS.optional_metric("audio", tier, "channel_share", key, explainer)
                if bar is not None:
                    judged += 1
                    assert bar >= chance + 0.05 and share.mean() < bar, (tier, key, explainer, bar)
    assert judged or tier == "paper"  # the calibrated tiers judge the share somewhere


def test_tolerance_factor_is_the_exact_noncentral_t_factor():
    """k = t'_0.90(m - 1, z_0.995 * sqrt(m)) / sqrt(m): tabulated one-sided normal tolerance
    factors (coverage 0.995, confidence 0.90); the closed-form approximation used before gave
    4.0, 3.6, 3.4 and 3.2 here, 7.3 at three values (9 % low)."""
    from pytest_chaosmining.tools.calibrate import tolerance_factor

    assert [round(tolerance_factor(m), 2) for m in (3, 8, 12, 16, 30)] == [8.09, 4.16, 3.71, 3.49, 3.18]
    with pytest.raises(ValueError):
        tolerance_factor(2)


def _audio_record(metric, explainer, value, cond, seed, passed=True):
    return {
        "suite": "audio",
        "metric": metric,
        "explainer": explainer,
        "value": value,
        "seed": seed,
        "threshold": 0.0,
        "passed": passed,
        "nodeid": f"test[{cond}-{explainer}-s{seed}]",
        "case": {"arch": "tcn", "condition": cond, "channels": 8},
    }


def test_calibration_sets_bars_from_the_spread_and_refuses_bars_the_control_reaches():
    from pytest_chaosmining.tools.calibrate import calibrate, held_out_check, to_toml

    rng = np.random.default_rng(0)
    records = []
    for seed in range(100, 112):
        for e, fp, rp in (("SA", 0.60, 0.13), ("FA", 0.70, 0.14)):
            records += [
                _audio_record("channel_share", e, fp + rng.normal(0, 0.02), "RBFP", seed),
                _audio_record("channel_share", e, rp + rng.normal(0, 0.01), "RBRP", seed),
            ]
        records += [
            _audio_record("channel_share", "random", 0.125 + rng.normal(0, 0.005), c, seed) for c in ("RBFP", "RBRP")
        ]
        records.append(_audio_record("untrained_share", "SA", 0.9, "RBFP", seed))  # not a judged metric
    bars = {(b.bar_key, b.explainer): b for b in calibrate(records)}
    sa = bars[("tcn-RBFP", "SA")]
    assert sa.bar == pytest.approx(math.floor((sa.mean - 3.64 * sa.sd) * 100) / 100, abs=0.011)
    assert 0.45 < sa.bar < min(sa.values) and sa.false_fail_rate() < 0.005
    assert bars[("tcn-RBRP", "SA")].bar is None  # the control's upper bound reaches it: not judged
    t = tomllib.loads(to_toml(list(bars.values()), "smoke"))["audio"]["smoke"]["channel_share"]
    assert t["tcn-RBFP"] == min(sa.bar, bars[("tcn-RBFP", "FA")].bar) and t["tcn-RBRP"] == -math.inf
    held = [
        _audio_record("channel_share", "SA", 0.61, "RBFP", 200),
        _audio_record("channel_share", "SA", 0.2, "RBFP", 201),
        _audio_record("channel_share", "random", 0.13, "RBFP", 200),
        _audio_record("channel_share", "SA", 0.13, "RBRP", 200),
    ]  # no bar there: not judged
    check = held_out_check(held, list(bars.values()))
    assert check.tests == {("audio", "SA"): 2, ("audio", "random"): 1}
    assert len(check.failed[("audio", "SA")]) == 1 and len(check.failed[("audio", "random")]) == 1


@pytest.mark.parametrize("tier", TIERS)
def test_random_selections_fail_every_rfe_threshold(tier):
    from pytest_chaosmining.suites.rfe.tiers import RFE_TIERS

    spec = RFE_TIERS[tier]
    rng = np.random.default_rng(0)
    datasets = [
        (f"f{f:02d}", get_formula(f).n_vars, get_formula(f).n_vars + spec.noise_features) for f in spec.formulas
    ]
    datasets.append(("generated", spec.clf_informative, spec.clf_features))
    for key, k, n in datasets:
        truth = set(range(k))
        random_fprec = np.mean([len(truth & set(rng.choice(n, k, replace=False))) / k for _ in range(200)])
        for explainer in EXPLAINERS:
            thr = THRESHOLDS.optional_metric("rfe", tier, "fprec", key, explainer)
            assert thr is None or (thr >= k / n + 0.1 and random_fprec < thr), (tier, key, explainer, thr)


@pytest.mark.parametrize("tier", ["smoke", "ci", "paper"])
def test_protocol_bars_sit_clear_of_what_a_random_explainer_scores(tier):
    """A random explainer's masks are random pixels (drop gain 0 in expectation)
    and its maps give random and true regions the same attribution (MCS / IDR
    gain 0): every bar must stand clear of 0 by more than run-to-run noise."""
    from pytest_chaosmining.suites.bam.tiers import BAM
    from pytest_chaosmining.suites.iteroar.tiers import ITEROAR

    t = shipped_thresholds()
    bam_key = f"{BAM[tier].canvas}px"  # the key the tier's cases look their bars up under
    chains = [f"{condition}-{fill}" for condition in ITEROAR[tier].conditions for fill in ITEROAR[tier].fills]
    for explainer in ("SA", "DL", "IG", "FA", "random", "user-method"):
        mcs = t.optional_metric("bam", tier, "mcs_gain", bam_key, explainer)
        assert mcs is None or mcs >= 0.05, (tier, explainer, mcs)
        idr = t.optional_metric("bam", tier, "idr_gain", bam_key, explainer)
        assert idr is None or idr >= 0.05
        for chain in chains:
            drop = t.optional_metric("iteroar", tier, "drop_gain", chain, explainer)
            assert drop is None or drop >= 0.10, (tier, chain, explainer, drop)
            gain = t.optional_metric("iteroar", tier, "training_gain", chain, explainer)
            assert gain is None or gain >= 0.05, (tier, chain, explainer, gain)
        # a bar exists wherever the tier judges at all: not every entry may be "not judged"
        assert any(t.optional_metric("iteroar", tier, "drop_gain", chain, explainer) is not None for chain in chains)
        assert t.optional_metric("bam", tier, "mcs_gain", bam_key, explainer) is not None


def test_a_built_in_beyond_the_papers_four_is_judged_only_against_its_own_bars(tmp_path):
    """GBP has no bars of its own in the shipped IteROAR tables: it is reported,
    not judged there (the shared bar is the paper's four's), while a user's
    explainer still gets the shared bar; bars of its own judge it."""
    shipped = shipped_thresholds(own_bars_only=frozenset({"GBP"}))
    assert shipped.optional_metric("iteroar", "smoke", "drop_gain", "SBFP-zero", "GBP") is None
    assert shipped.optional_metric("iteroar", "smoke", "drop_gain", "SBFP-zero", "mine") == 0.38
    own = tmp_path / "own.toml"
    own.write_text("[iteroar.smoke.drop_gain.explainer.GBP]\nSBFP-zero = 0.41\n")
    assert (
        shipped_thresholds(own, frozenset({"GBP"})).optional_metric("iteroar", "smoke", "drop_gain", "SBFP-zero", "GBP")
        == 0.41
    )


RAW = Path(__file__).resolve().parents[1] / "reports" / "calibration" / "raw"


PLAN = Path(__file__).resolve().parents[1] / "benchmarks" / "calibration" / "plan.toml"


def _calibration_plan(suite, tier="smoke"):
    """The runs benchmarks/calibration/merge.py sets a suite's shipped bars at ``tier`` from, and its rule."""
    import tomllib

    from pytest_chaosmining.tools.calibrate import Rule, plan_runs

    plan = tomllib.loads(PLAN.read_text())[tier][suite]
    return plan_runs(RAW, plan["calibration"], suite), Rule(coverage=plan.get("coverage", Rule().coverage))


def _entries(table):
    for metric, bars in table.items():
        if not isinstance(bars, dict):
            continue
        for key, value in bars.items():
            if key == "explainer":
                for explainer, own in value.items():
                    for k, v in own.items():
                        yield (metric, explainer, k), v
            else:
                yield (metric, "", key), value


@pytest.mark.parametrize(
    ("tier", "suite"),
    [("smoke", s) for s in ("symbolic", "audio", "vision", "rfe", "iteroar", "bam")] + [("ci", "symbolic")],
)
def test_shipped_bars_are_what_the_calibration_tool_makes_of_the_committed_runs(tier, suite):
    """Every calibrated bar of the tier in the suite's thresholds.toml, and no other, comes
    out of the calibration tool run on the committed raw calibration results."""
    import tomllib

    from pytest_chaosmining.tools.calibrate import calibrate, load_runs, to_toml

    runs, rule = _calibration_plan(suite, tier)
    records, _, _ = load_runs(runs)
    made = dict(_entries(tomllib.loads(to_toml(calibrate(records, rule), tier))[suite][tier]))
    shipped = tomllib.loads((SUITES_DIR / suite / "thresholds.toml").read_text())[suite][tier]
    shipped_bars = {k: v for k, v in _entries(shipped) if k[0] in {m for m, _, _ in made}}
    assert shipped_bars == made


def test_built_ins_without_bars_of_their_own_in_a_suite_are_left_out_there():
    t = shipped_thresholds(own_bars_only=frozenset({"GBP", "GradCAM"}))
    assert t.lacks_own_bars("iteroar", "smoke", "GBP") and t.lacks_own_bars("bam", "smoke", "GradCAM")
    assert not t.lacks_own_bars("vision", "smoke", "GradCAM") and not t.lacks_own_bars("symbolic", "smoke", "GBP")
    assert not t.lacks_own_bars("cost", "smoke", "GBP")  # a suite without per-explainer bars lacks nothing
    assert not t.lacks_own_bars("iteroar", "smoke", "mine")  # a user's explainer gets the shared bars


def test_a_model_randomisation_bar_is_refused_where_the_built_ins_spread_reaches_it():
    """Gains sit just above the control's bound; where a built-in's own spread puts more
    than 1 in 200 of its seeds below that, the check is not judged (audio RBRP at smoke)."""
    from pytest_chaosmining.tools.calibrate import calibrate

    rng = np.random.default_rng(1)
    records = []
    for seed in range(100, 120):
        records.append(_audio_record("training_gain", "SA", 0.9 + rng.normal(0, 0.03), "RBFP", seed))
        records.append(_audio_record("training_gain", "SA", 0.3 + rng.normal(0, 0.1), "RBRP", seed))
        records += [_audio_record("training_gain", "random", 0.0, c, seed) for c in ("RBFP", "RBRP")]
    bars = {b.bar_key: b for b in calibrate(records)}
    assert bars["tcn-RBFP"].bar == pytest.approx(0.08) and min(bars["tcn-RBRP"].values) > 0.08
    assert bars["tcn-RBRP"].bar is None and "spread" in bars["tcn-RBRP"].refused


def test_leave_one_seed_out_judges_each_seed_against_the_others_bars():
    from pytest_chaosmining.tools.calibrate import Rule, leave_one_seed_out

    records = [_audio_record("channel_share", "SA", 0.6 + 0.01 * (seed % 3), "RBFP", seed) for seed in range(12)]
    records.append(_audio_record("channel_share", "SA", 0.2, "RBFP", 12))  # one weak seed
    check = leave_one_seed_out(records, Rule())
    assert check.tests == {("audio", "SA"): 13}
    assert [m.split(" < ")[0] for m in check.failed[("audio", "SA")]] == ["channel_share 0.200"]
    wider = leave_one_seed_out(records, Rule(coverage=0.9999, sd_floor=0.2))
    assert not wider.failed  # a wide enough rule fails nothing


def test_the_run_level_rate_counts_a_seed_whose_tests_fail_together_once():
    """Failures of one weak model cluster: three explainers failing on one seed are one
    failing run of the suite, not three independent events."""
    from pytest_chaosmining.tools.calibrate import calibrate, held_out_check, run_level_line

    cal = [
        _audio_record("channel_share", e, 0.6 + 0.01 * (s % 3), "RBFP", s)
        for e in ("SA", "DL", "IG")
        for s in range(12)
    ]
    held = [_audio_record("channel_share", e, 0.6, "RBFP", s) for e in ("SA", "DL", "IG") for s in (20, 21)]
    held += [_audio_record("channel_share", e, 0.2, "RBFP", 22) for e in ("SA", "DL", "IG")]  # one weak model
    check = held_out_check(held, calibrate(cal))
    assert sum(len(v) for v in check.failed.values()) == 3 and check.failing_runs() == (1, 3)
    assert run_level_line(check).startswith("Run level (a suite's built-in tests on one seed): 1 of 3 runs")


def test_a_calibration_plan_keeps_only_the_named_conditions_of_a_run(tmp_path):
    """A run whose models of some conditions were retrained since is read for the other
    conditions only (benchmarks/calibration/plan.toml: ``{run = ..., conditions = [...]}``)."""
    import json

    from pytest_chaosmining.tools.calibrate import load_runs, plan_runs

    records = [_audio_record("top1_hit", "SA", 0.9, c, 100) for c in ("RBFP", "RBRP", "SBFP")]
    records.append({**records[0], "suite": "vision"})  # a run of two suites
    (tmp_path / "old.json").write_text(
        json.dumps({"meta": {"tier": "smoke", "seeds": {"audio": "100"}}, "records": records})
    )
    runs = plan_runs(tmp_path, ["old.json", {"run": "old.json", "conditions": ["RBFP", "SBFP"]}], "audio")
    assert [len(load_runs([r])[0]) for r in runs] == [3, 2]
    assert len(load_runs(plan_runs(tmp_path, ["old.json"]))[0]) == 4
    assert {r["case"]["condition"] for r in load_runs(runs[1:])[0]} == {"RBFP", "SBFP"}


def test_merging_one_tier_keeps_the_other_tiers_calibrated_block():
    """merge.py merges smoke then ci into one thresholds.toml; merging again must keep
    each tier's heading comment and tables (a replaced table ends at the next block)."""
    from pytest_chaosmining.tools.calibrate import calibrate, merge_into, to_toml

    records = [_audio_record("channel_share", "SA", 0.6 + 0.01 * (seed % 3), "RBFP", seed) for seed in range(12)]
    bars = calibrate(records)
    text = "[audio.smoke]\nquality_gate = 0.5\n\n[audio.ci]\nquality_gate = 0.5\n"
    for tier in ("smoke", "ci", "smoke", "ci"):
        text = merge_into(text, to_toml(bars, tier), bars, tier, f"{tier} note")
    assert (
        text.count("# Calibrated bars of audio, tier smoke") == 1
        and text.count("# Calibrated bars of audio, tier ci") == 1
    )
    assert tomllib.loads(text)["audio"]["smoke"]["channel_share"] == tomllib.loads(text)["audio"]["ci"]["channel_share"]


def test_shipped_drop_allowances_are_the_calibrated_ones_and_name_judged_metrics():
    """Every ``[<suite>.smoke.max_drop]``, ``paired_drop``, ``map_agreement`` and ``sample_drift`` entry is what
    benchmarks/mutations/benign_calibrate.py makes of the committed benign changes (the
    suites it covers) or what calibrate_drops.py made of its runs (drops.json: saliency,
    IteROAR), and names a metric its suite judges; a metric without an entry falls back to 0.02."""
    import json
    import sys

    from pytest_chaosmining.suites import metric_catalog
    from pytest_chaosmining.verdict.rule import DEFAULT_MAX_DROP, CalibratedDrops

    mutations = Path(__file__).parents[1] / "benchmarks" / "mutations"
    sys.path.insert(0, str(mutations))
    try:
        from benign_calibrate import calibrate
    finally:
        sys.path.remove(str(mutations))
    tables = calibrate()
    rows = json.loads((mutations / "drops.json").read_text())["rows"]
    expected = {(r["suite"], r["metric"]): r["allowed"] for r in rows if r["suite"] not in tables}
    expected |= {(suite, metric): value for suite, t in tables.items() for metric, value in t["max_drop"].items()}
    catalog = metric_catalog()
    shipped = {
        (suite, metric): value
        for suite, tiers in THRESHOLDS.table.items()
        for metric, value in tiers.get("smoke", {}).get("max_drop", {}).items()
    }
    assert shipped == expected
    for suite, table in tables.items():
        smoke = THRESHOLDS.table[suite]["smoke"]
        assert smoke.get("paired_drop", {}) == table["paired_drop"], suite
        if "map_agreement" in table:  # the suites that keep fingerprints of maps
            assert smoke["map_agreement"]["default"] == table["map_agreement"], suite
            assert smoke["sample_drift"] == table["sample_drift"], suite
            assert CalibratedDrops(THRESHOLDS, "smoke").sample_drift(suite) is not None
    assert all(catalog.is_judged(suite, metric) for suite, metric in shipped)
    # a discrete score moves by whole images, clips or features: at least the floor; vision's box
    # share is continuous and paired per image: at least 0.01
    assert all(v >= DEFAULT_MAX_DROP for (suite, metric), v in shipped.items() if metric != "box_share")
    assert shipped[("vision", "box_share")] >= 0.01
    smoke, ci = CalibratedDrops(THRESHOLDS, "smoke"), CalibratedDrops(THRESHOLDS, "ci")
    assert smoke.allowed("vision", "iou") == shipped[("vision", "iou")]
    assert ci.allowed("vision", "iou") == DEFAULT_MAX_DROP
    assert smoke.allowed("symbolic", "uscore") == DEFAULT_MAX_DROP


def test_a_tier_judges_only_with_bars_calibrated_on_held_out_seeds():
    """Every shipped section judges only where its bars were calibrated on held-out
    seeds; elsewhere it says ``report_only`` (the saliency suite at smoke: its claims
    were measured on the tier's own seeds)."""
    from pytest_chaosmining.suites import all_suites

    names = [s.name for s in all_suites()]
    for tier in ("smoke", "ci", "paper"):
        judged_uncalibrated = set(THRESHOLDS.uncalibrated(names, tier)) - set(THRESHOLDS.report_only(names, tier))
        assert judged_uncalibrated == set(), tier
    assert THRESHOLDS.report_only(names, "smoke") == ["saliency"]
    assert set(THRESHOLDS.report_only(names, "ci")) == {"vision", "audio", "rfe", "saliency", "iteroar", "bam"}


def test_a_report_only_suite_records_its_results_and_skips_with_the_reason():
    """In a report-only suite no bar and no baseline drop is judged: the values are
    recorded without a threshold and the test skips saying why; another suite of
    the same run is judged as before."""
    from pytest_chaosmining.core.records import Record
    from pytest_chaosmining.verdict.judge import ConformanceFailure, Judge

    class Node:
        nodeid = "t"
        user_properties: list = []

    judge = Judge({}, None, tier="ci", report_only=frozenset({"vision"}))
    low = Record("vision", "cnn", "IG", 0, "iou", 0.01, {"condition": "RBFP"})
    with pytest.raises(pytest.skip.Exception, match="suite vision is report-only at this tier"):
        judge.require_all(Node(), [(low, 0.5, "IG on RBFP")])
    assert low.threshold is None and low.passed is None
    judge.require(Node(), Record("vision", "cnn", "-", 0, "accuracy", 0.1, {}), 0.8, "model")
    with pytest.raises(ConformanceFailure, match="iou 0.0100 < threshold 0.5000"):
        judge.require_all(Node(), [(Record("audio", "tcn", "IG", 0, "iou", 0.01, {}), 0.5, "IG")])
