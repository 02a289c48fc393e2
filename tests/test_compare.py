"""``chaosmining-compare OLD.json NEW.json``: the baseline check's verdicts from two
results.json files, without a pytest run; and the shipped JSON Schema of results.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.tools.compare import compare_runs, main

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "reports" / "smoke" / "results.json"
SCHEMA = ROOT / "src" / "pytest_chaosmining" / "reports" / "results.schema.json"


@pytest.fixture(scope="module")
def payload():
    return read_results(SMOKE, samples=True)


def _write(tmp_path, payload, name="new.json"):
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


def _reversed(stored):
    """A stored fingerprint with each sample's features in reverse order."""
    from pytest_chaosmining.core.metrics.fingerprints import Fingerprint

    found = Fingerprint.read(stored)
    signed = None if found.signed is None else found.signed[:, ::-1]
    return Fingerprint(found.mass[:, ::-1], signed).stored()


def _first(payload, **match):
    return next(r for r in payload["records"] if all(r[k] == v for k, v in match.items()))


def test_a_run_against_itself_has_no_change(capsys):
    assert main([str(SMOKE), str(SMOKE)]) == 0
    assert (
        "no regression** (failed 0, regressed 0, drift 0, cost 0, missing 0, new 0, changed 0)"
        in capsys.readouterr().out
    )


def test_a_score_lowered_past_its_drop_is_a_regression(tmp_path, payload, capsys):
    changed = copy.deepcopy(payload)
    fprec = _first(changed, suite="symbolic", metric="fprec", explainer="IG")
    fprec["value"] -= 0.04  # the calibrated drop of fprec is 0.035
    assert main([str(SMOKE), str(_write(tmp_path, changed))]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and f"| regressed | `{fprec['nodeid']}` | fprec regressed:" in out
    within = copy.deepcopy(payload)
    _first(within, suite="symbolic", metric="fprec", explainer="IG")["value"] -= 0.01
    assert main([str(SMOKE), str(_write(tmp_path, within))]) == 0


def test_moved_maps_grown_costs_missing_and_new_results(tmp_path, payload):
    changed = copy.deepcopy(payload)
    maps = _first(changed, suite="symbolic", metric="fingerprint", explainer="IG")
    maps["maps"] = _reversed(maps["maps"])  # the features' masses reversed
    cost = _first(changed, suite="audio", metric="cpu_ms", explainer="DL")
    cost["value"] = 10 * cost["value"] + 1000
    gone = _first(changed, suite="vision", metric="iou", explainer="SA")
    changed["records"].remove(gone)
    new = {**copy.deepcopy(gone), "explainer": "mine", "nodeid": gone["nodeid"].replace("-SA-", "-mine-")}
    changed["records"].append(new)
    found = {(f.kind, f.nodeid) for f in compare_runs(SMOKE, _write(tmp_path, changed))}
    assert found == {
        ("drift", maps["nodeid"]),
        ("cost", cost["nodeid"]),  # one case beyond twice the allowed slowdown: a gross regression
        ("cost", f"chaosmining-baseline::cost::audio::DL::{cost['model']}::cpu_ms"),  # the median of its 2 cases
        ("missing", gone["nodeid"]),
        ("new", new["nodeid"]),
    }
    grown = copy.deepcopy(payload)
    model = cost["model"]
    for record in grown["records"]:  # every case of DL's work on this network at 2.5x: no case gross
        if (record["suite"], record["model"], record["explainer"], record["metric"]) == (
            "audio",
            model,
            "DL",
            "cpu_ms",
        ):
            record["value"] = 2.5 * record["value"] + 30
    found = {(f.kind, f.nodeid) for f in compare_runs(SMOKE, _write(tmp_path, grown))}
    assert found == {("cost", f"chaosmining-baseline::cost::audio::DL::{model}::cpu_ms")}
    random_maps = copy.deepcopy(payload)
    control = _first(random_maps, suite="symbolic", metric="fingerprint", explainer="random")
    control["maps"] = _reversed(control["maps"])  # the control's maps are noise: never compared
    assert compare_runs(SMOKE, _write(tmp_path, random_maps)) == []


def test_a_suite_the_new_run_did_not_run_is_missing_only_when_asked(tmp_path, payload):
    symbolic_only = {**payload, "records": [r for r in payload["records"] if r["suite"] == "symbolic"]}
    path = _write(tmp_path, symbolic_only)
    assert compare_runs(SMOKE, path) == []
    assert {f.kind for f in compare_runs(SMOKE, path, all_suites=True)} == {"missing"}


def test_an_unreadable_file_exits_2(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main([str(SMOKE), str(broken)]) == 2


def test_results_json_follows_its_shipped_schema(payload):
    """The committed default run's results.json, and the schema's own format version."""
    import jsonschema

    from pytest_chaosmining.core.records import RESULTS_FORMAT

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format"]["const"] == RESULTS_FORMAT
    written = json.loads(SMOKE.read_text())  # the file as written (records grouped by test)
    jsonschema.validate(written, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**written, "tests": [[["symbolic"], [["fprec"]]]]}, schema)


def test_the_runs_own_failures_fail_the_comparison(tmp_path, payload, capsys):
    """A run that failed on its own (a sign check, say: no score moved against the
    baseline) fails the comparison too, so that compare's exit status and the run's agree."""
    failed = copy.deepcopy(payload)
    failed["failures"] = [
        {"nodeid": "symbolic/t.py::test_fprec[f08-mine-s0]", "suite": "symbolic", "explainer": "mine",
         "message": "mine on f08: truth_sign 0.0052 < threshold 0.4000"},
        {"nodeid": "chaosmining-baseline::symbolic/t.py::test_fprec[f08-SA-s0]", "suite": "symbolic",
         "explainer": "SA", "message": "judged in the baseline but not in this run"},
    ]  # fmt: skip
    assert main([str(SMOKE), str(_write(tmp_path, failed))]) == 1
    out = capsys.readouterr().out
    assert "| failed | `symbolic/t.py::test_fprec[f08-mine-s0]` | failed in this run: mine on f08: truth_sign" in out
    assert "chaosmining-baseline::" not in out  # a missing result is the comparison's own finding ("missing")


def test_costs_are_compared_only_on_the_same_machine_and_stack(tmp_path, payload):
    """Another CPU model, device, GPU model or torch measures the machine, not the explainer:
    no cost is compared there; the same machine and stack gate it."""
    slower = copy.deepcopy(payload)
    cost = _first(slower, suite="audio", metric="cpu_ms", explainer="DL")
    cost["value"] = 10 * cost["value"] + 1000
    laptop = copy.deepcopy(payload)
    laptop["meta"]["machine"] = {"cpu": "A laptop CPU", "cores": 8, "device": "cpu"}
    slower["meta"]["machine"] = {"cpu": "A runner CPU", "cores": 2, "device": "cpu"}
    old = _write(tmp_path, laptop, "old.json")
    assert not [f for f in compare_runs(old, _write(tmp_path, slower)) if f.kind == "cost"]
    slower["meta"]["machine"] = {"cpu": "A laptop CPU", "cores": 8, "device": "cpu", "stack": "torch 3.0, numpy 3"}
    laptop["meta"]["machine"]["stack"] = "torch 2.14.1, numpy 2.4.6"
    old = _write(tmp_path, laptop, "old.json")
    assert not [f for f in compare_runs(old, _write(tmp_path, slower)) if f.kind == "cost"]
    slower["meta"]["machine"]["stack"] = laptop["meta"]["machine"]["stack"]
    found = [f for f in compare_runs(old, _write(tmp_path, slower)) if f.kind == "cost"]
    assert [f.nodeid for f in found] == [
        cost["nodeid"],
        f"chaosmining-baseline::cost::audio::DL::{cost['model']}::cpu_ms",
    ]
    assert all("cpu_ms regressed" in f.message for f in found)


def test_results_json_is_strict_json(tmp_path):
    """NaN (a correlation of a constant, not measured) is written as null and read back as NaN."""
    import math

    from pytest_chaosmining.core.records import Record, strict_json

    record = Record("bam", "m", "SA", 0, "mcs_k_corr", float("nan"))
    text = json.dumps(strict_json({"records": [record.to_dict()]}), allow_nan=False)
    assert '"value": null' in text
    assert math.isnan(Record.from_dict(json.loads(text)["records"][0]).value)


def test_an_offline_comparison_leaves_out_the_report_only_conditions(tmp_path):
    """A sweep's conditions other than the default are recorded, never judged, in a run;
    chaosmining-compare leaves them out as well (a drop there is no regression)."""
    from pytest_chaosmining.core.records import Record

    case = {"formula": 1, "noise_features": 0, "label_noise": 0.01, "n_samples": 2000}

    def results(value: float, report_only: list[str]) -> Path:
        record = Record(
            suite="symbolic",
            model="mlp",
            explainer="SA",
            seed=0,
            metric="fprec",
            value=value,
            case=case,
            nodeid="t::swept",
        )
        path = tmp_path / f"{value}.json"
        meta = {"tier": "smoke", "report_only_tests": report_only}
        path.write_text(json.dumps({"records": [record.to_dict()], "meta": meta, "failures": []}))
        return path

    old = results(0.9, ["t::swept"])
    assert not [f for f in compare_runs(old, results(0.1, ["t::swept"])) if f.kind == "regressed"]
    assert [f for f in compare_runs(old, results(0.1, [])) if f.kind == "regressed"]  # where it was judged


def test_a_run_gets_the_same_verdicts_from_either_results_format(tmp_path, payload):
    """The committed run and a changed one (a score past its drop, one explainer's maps
    reversed), each written inline (format 2's layout) and as format 3 (results.json and
    its samples file): compare finds the same, and format 3's results.json is a small file."""
    from pytest_chaosmining.core.results_file import write_results

    changed = copy.deepcopy(payload)
    _first(changed, suite="symbolic", metric="fprec", explainer="IG")["value"] -= 0.04
    kept = _first(changed, suite="vision", metric="fingerprint", explainer="SA")
    kept["maps"] = _reversed(kept["maps"])
    rest = {k: v for k, v in changed.items() if k in ("meta", "outcomes", "failures", "counts")}
    inline = _write(tmp_path, {**changed, "format": 2})
    grouped = tmp_path / "grouped" / "results.json"
    grouped.parent.mkdir()
    write_results(grouped, rest, changed["records"])
    found = [sorted((f.kind, f.nodeid) for f in compare_runs(SMOKE, path)) for path in (inline, grouped)]
    assert found[0] == found[1] and {"regressed", "drift"} <= {kind for kind, _ in found[0]}, found
    assert grouped.stat().st_size < inline.stat().st_size / 10
