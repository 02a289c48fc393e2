"""A built-in that fails a check because of its library's reported defect is a strict
expected failure citing the issue, never a loosened bar (verdict.known_defects)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_chaosmining.core.records import KNOWN_DEFECT_PROPERTY, Record
from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.reports.markdown import run_notes
from pytest_chaosmining.suites.registry import metric_catalog, shipped_thresholds
from pytest_chaosmining.verdict.judge import ConformanceFailure, Judge
from pytest_chaosmining.verdict.known_defects import KNOWN_DEFECTS, known_defect

ROOT = Path(__file__).resolve().parents[1]


class Node:
    nodeid = "vision/test_chaosmining_vision.py::test_iou[RBFP-DL]"

    def __init__(self) -> None:
        self.user_properties: list[tuple[str, object]] = []


def _judge(source: str) -> Judge:
    explainers = {"DL": Explainer("DL", lambda m, x, t: x, source=source, completeness=True)}
    return Judge(explainers, None, tier="smoke", catalog=metric_catalog())


def _completeness(value: float) -> Record:
    return Record("vision", "small_cnn", "DL", 0, "completeness", value, {"condition": "RBFP"})


def test_a_built_ins_known_defect_is_an_expected_failure_noted_with_its_issue():
    node, record = Node(), _completeness(0.82)
    _judge("builtin").require_all(node, [(record, 0.95, "DL on RBFP")])  # passes: expected
    notes = [str(v) for k, v in node.user_properties if k == KNOWN_DEFECT_PROPERTY]
    assert len(notes) == 1 and "pytorch/captum#1104" in notes[0] and "0.8200 < 0.9500" in notes[0]
    assert record.passed is False and record.expected == "pytorch/captum#1104, pytorch/captum#1085"
    assert run_notes({"known_defects": {node.nodeid: notes}})[0][0].startswith(
        "known library defects: 1 check(s) of built-ins failed as expected (pytorch/captum#1085; pytorch/captum#1104)"
    )


def test_below_what_the_defect_explains_the_check_fails_as_any_does():
    """The defect's floor is the bar its defective values were calibrated to: a further
    drop is a failure of its own, with or without a baseline."""
    with pytest.raises(ConformanceFailure, match="below what the known defect pytorch/captum#1104 explains"):
        _judge("builtin").require_all(Node(), [(_completeness(0.29), 0.95, "DL on RBFP")])


def test_a_bar_loosened_below_the_promise_judges_as_usual():
    """A user's thresholds file that lowers the bar is not told the defect is fixed."""
    node = Node()
    _judge("builtin").require_all(node, [(_completeness(0.82), 0.3, "DL on RBFP")])
    assert not [k for k, _ in node.user_properties if k == KNOWN_DEFECT_PROPERTY]


def test_a_known_defect_that_no_longer_shows_fails_the_test():
    """Strict: the day the library fixes it, the test turns red and names the stale entry."""
    with pytest.raises(ConformanceFailure, match="no longer shows"):
        _judge("builtin").require_all(Node(), [(_completeness(0.999), 0.95, "DL on RBFP")])


def test_a_registered_explainer_of_the_same_name_is_judged_by_the_bar():
    with pytest.raises(ConformanceFailure, match="completeness 0.8200 < threshold 0.9500"):
        _judge("user").require_all(Node(), [(_completeness(0.82), 0.95, "DL on RBFP")])


def test_the_shipped_bars_are_the_promise_not_the_defective_values():
    """The built-in's own bar is what the property promises, and the shared bar a
    registered explainer meets was not set from the defective values."""
    bars = shipped_thresholds(None)
    for defect in KNOWN_DEFECTS:
        own = bars.optional_metric(defect.suite, "smoke", defect.metric, "default", defect.explainer)
        shared = bars.optional_metric(defect.suite, "smoke", defect.metric, "default", "a-registered-one")
        assert own == 0.95 and shared is not None and shared >= 0.85, (defect, own, shared)
    runs = json.loads((ROOT / "benchmarks" / "axioms" / "properties.json").read_text())
    patterns = json.loads((ROOT / "benchmarks" / "real_bugs" / "patterns_calibration.json").read_text())
    for defect in KNOWN_DEFECTS:
        if defect.pattern is not None:  # a module-pattern network's: calibrated over its initialisations
            seen = patterns["explainers"][defect.explainer]["defects"][defect.pattern]
            assert seen["floor"] == defect.floor and seen["held_out_below_floor"] == 0, (defect.pattern, seen)
            assert seen["held_out_at_promise"] == 0, (defect.pattern, seen)  # not stale on unseen networks
            continue
        seen = runs["metrics"][f"{defect.suite}.{defect.metric}"]["explainers"][defect.explainer]
        # it fails there on every seed, calibration and held out (the entry is not stale), and
        # its floor is the bar the calibration sets on the defective values
        assert seen["max"] < seen["bar"] == defect.promise and seen["held_out_failed"] == seen["held_out_n"], seen
        assert seen["defect_floor"] == defect.floor <= seen["min"], seen
    assert known_defect("IG", "vision", "completeness") is None
