"""``chaosmining-compare OLD.json NEW.json``: the baseline check's verdicts from two
results.json files, without a pytest run; and the shipped JSON Schema of results.json."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_chaosmining.tools.compare import compare_runs, main

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "reports" / "smoke" / "results.json"
SCHEMA = ROOT / "src" / "pytest_chaosmining" / "reports" / "results.schema.json"


@pytest.fixture(scope="module")
def payload():
    return json.loads(SMOKE.read_text())


def _write(tmp_path, payload, name="new.json"):
    path = tmp_path / name
    path.write_text(json.dumps(payload))
    return path


def _first(payload, **match):
    return next(r for r in payload["records"] if all(r[k] == v for k, v in match.items()))


def test_a_run_against_itself_has_no_change(capsys):
    assert main([str(SMOKE), str(SMOKE)]) == 0
    assert "no regression** (regressed 0, drift 0, cost 0, missing 0, new 0)" in capsys.readouterr().out


def test_a_score_lowered_past_its_drop_is_a_regression(tmp_path, payload, capsys):
    changed = copy.deepcopy(payload)
    fprec = _first(changed, suite="symbolic", metric="fprec", explainer="IG")
    fprec["value"] -= 0.03  # the calibrated drop of fprec is 0.02
    assert main([str(SMOKE), str(_write(tmp_path, changed))]) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and f"| regressed | `{fprec['nodeid']}` | fprec regressed:" in out
    within = copy.deepcopy(payload)
    _first(within, suite="symbolic", metric="fprec", explainer="IG")["value"] -= 0.01
    assert main([str(SMOKE), str(_write(tmp_path, within))]) == 0


def test_moved_maps_grown_costs_missing_and_new_results(tmp_path, payload):
    changed = copy.deepcopy(payload)
    maps = _first(changed, suite="symbolic", metric="fingerprint", explainer="IG")
    maps["maps"] = [row[::-1] for row in maps["maps"]]  # the features' masses reversed
    cost = _first(changed, suite="audio", metric="cpu_ms", explainer="DL")
    cost["value"] = 10 * cost["value"] + 1000
    gone = _first(changed, suite="vision", metric="iou", explainer="SA")
    changed["records"].remove(gone)
    new = {**copy.deepcopy(gone), "explainer": "mine", "nodeid": gone["nodeid"].replace("-SA-", "-mine-")}
    changed["records"].append(new)
    found = {(f.kind, f.nodeid) for f in compare_runs(SMOKE, _write(tmp_path, changed))}
    assert found == {
        ("drift", maps["nodeid"]),
        ("cost", cost["nodeid"]),
        ("missing", gone["nodeid"]),
        ("new", new["nodeid"]),
    }
    random_maps = copy.deepcopy(payload)
    control = _first(random_maps, suite="symbolic", metric="fingerprint", explainer="random")
    control["maps"] = [row[::-1] for row in control["maps"]]  # the control's maps are noise: never compared
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

    from pytest_chaosmining.core.verdicts.records import RESULTS_FORMAT

    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["format"]["const"] == RESULTS_FORMAT
    jsonschema.validate(payload, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**payload, "records": [{"suite": "symbolic"}]}, schema)
