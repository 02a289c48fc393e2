"""results.json's format 3: records grouped by test in a small results.json, their
per-sample fields in the samples file beside it, read back as they were written; a
samples file missing, of another run or edited apart stops the reader, naming it."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.core.results_file import (
    PER_SAMPLE,
    ROW_FIELDS,
    TEST_FIELDS,
    NotAResultsFile,
    copy_results,
    read_results,
    samples_file,
    write_results,
)


def _records() -> list[Record]:
    case = {"condition": "RBFP", "canvas": 42}
    fingerprint = {"samples": 2, "features": 3, "signed": "AAAA"}
    return [
        Record("vision", "cnn", "IG", 0, "fingerprint", 2.0, case, nodeid="t.py::a[IG]", maps=fingerprint),
        Record("vision", "cnn", "IG", 0, "iou", 0.5, case, 0.4, True, "t.py::a[IG]", samples=[0.4, 0.6], labels=[3, 5]),
        Record("vision", "cnn", "IG", 0, "outline", 2.0, case, nodeid="t.py::a[IG]", maps=[[1.0, 0.5], [2.0, -0.1]]),
        Record("vision", "cnn", "IG", 0, "cpu_ms", 12.5, case, nodeid="t.py::b[IG]", measured=True),
        Record("bam", "m", "SA", 0, "mcs", float("nan"), {}, nodeid="t.py::c[SA]", expected="captum#1"),
        Record("vision", "cnn", "-", 0, "accuracy", 0.9, case, 0.5, True, ""),
    ]


def _write(tmp_path, records=None):
    path = tmp_path / "results.json"
    payload = {"meta": {"tier": "smoke"}, "outcomes": {"vision|IG|passed": 1}, "failures": [], "counts": {}}
    written = write_results(path, payload, [r.to_dict() for r in records or _records()])
    return path, written


def test_every_record_field_has_its_place():
    assert set(Record.__dataclass_fields__) == {*TEST_FIELDS, *ROW_FIELDS, *PER_SAMPLE}


def test_records_read_back_as_written_with_their_samples(tmp_path):
    path, written = _write(tmp_path)
    assert written == [str(samples_file(path)), str(path)]
    back = [Record.from_dict(r) for r in read_results(path, samples=True)["records"]]
    mine = _records()
    assert len(back) == len(mine)
    for then, now in zip(mine, back, strict=True):
        assert (math.isnan(then.value) and math.isnan(now.value)) or then.value == now.value
        assert {**then.to_dict(), "value": 0} == {**now.to_dict(), "value": 0}


def test_results_json_keeps_no_per_sample_field_and_a_light_read_none(tmp_path):
    path, _ = _write(tmp_path)
    text = path.read_text()
    assert "AAAA" not in text and "0.6" not in text and '"samples": {' in text
    light = read_results(path)["records"]
    assert not any(k in r for r in light for k in PER_SAMPLE)
    assert [r["metric"] for r in light] == [r.metric for r in _records()]
    assert len(json.loads(text)["tests"]) == 4  # a, b, c and the model-level record: one entry per test


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (lambda side, other: side.unlink(), "*per-sample results results.samples.json.gz are missing beside it*"),
        (lambda side, other: side.write_bytes(other.read_bytes()), "*belongs to another run than this results.json*"),
    ],
)
def test_a_samples_file_missing_or_of_another_run_stops_the_reader(tmp_path, spoil, said):
    from fnmatch import fnmatch

    path, _ = _write(tmp_path)
    (tmp_path / "other").mkdir()
    _, other = _write(tmp_path / "other", _records()[:2])
    spoil(samples_file(path), tmp_path / "other" / "results.samples.json.gz")
    read_results(path)  # a reader that needs no maps reads it
    with pytest.raises(NotAResultsFile) as caught:
        read_results(path, samples=True)
    assert fnmatch(str(caught.value), said), caught.value


def test_a_samples_file_edited_apart_from_its_results_stops_the_reader(tmp_path):
    path, _ = _write(tmp_path)
    payload = json.loads(path.read_text())
    payload["tests"][0][1].insert(0, ["extra", 1.0, None, None, None, None])  # every later record moves down
    path.write_text(json.dumps(payload))
    with pytest.raises(NotAResultsFile, match="entry 0 is not record 0"):
        read_results(path, samples=True)


def test_older_formats_and_a_compressed_file_are_read(tmp_path):
    older = tmp_path / "old.json"
    records = [r.to_dict() for r in _records()[:2]]
    older.write_text(json.dumps({"format": 2, "meta": {}, "records": records}))
    assert read_results(older, samples=True)["records"][1]["samples"] == [0.4, 0.6]
    path, _ = _write(tmp_path)
    packed = tmp_path / "results.json.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert len(read_results(packed, samples=True)["records"]) == len(_records())


def test_a_baseline_is_copied_whole(tmp_path, capsys):
    from pytest_chaosmining.tools import save_baseline

    path, _ = _write(tmp_path)
    target = tmp_path / "repo" / ".github" / "baseline.json"
    assert save_baseline.main([str(path), str(target)]) == 0
    assert "commit" in capsys.readouterr().out
    assert read_results(target, samples=True)["records"][1]["labels"] == [3, 5]
    samples_file(path).unlink()
    assert save_baseline.main([str(path), str(tmp_path / "b.json")]) == save_baseline.USAGE_ERROR
    assert not (tmp_path / "b.json").exists()
    assert copy_results(target, tmp_path / "c.json")[-1] == str(tmp_path / "c.json")
