"""A check an explainer fails because of its library's reported defect is a strict expected
failure citing the issue, never a loosened bar, whoever declares it (a built-in or an
explainer a library registers: ``Explainer(..., known=...)``); a method correct but weaker
than a shared bar is judged at its declared level (explainers.limitations)."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from pathlib import Path

import pytest

from pytest_chaosmining.core.records import KNOWN_DEFECT_PROPERTY, Record
from pytest_chaosmining.explainers import Explainer, builtin_explainers
from pytest_chaosmining.explainers.builtin_limitations import (
    BUILTIN_LIMITATIONS,
    DEEPLIFT,
    GUIDED_BACKPROP,
    builtin_limitation,
)
from pytest_chaosmining.explainers.limitations import KnownLimitation
from pytest_chaosmining.reports.markdown import run_notes
from pytest_chaosmining.suites.registry import metric_catalog, shipped_thresholds
from pytest_chaosmining.verdict.judge import ConformanceFailure, Judge

ROOT = Path(__file__).resolve().parents[1]


class Node:
    nodeid = "vision/test_chaosmining_vision.py::test_iou[RBFP-DL]"

    def __init__(self) -> None:
        self.user_properties: list[tuple[str, object]] = []


def _judge(source: str, known: tuple[KnownLimitation, ...] = DEEPLIFT, name: str = "DL") -> Judge:
    explainers = {name: Explainer(name, lambda m, x, t: x, source=source, completeness=True, known=known)}
    return Judge(explainers, None, tier="smoke", catalog=metric_catalog())


def _completeness(value: float, explainer: str = "DL") -> Record:
    return Record("vision", "small_cnn", explainer, 0, "completeness", value, {"condition": "RBFP"})


def _notes(node: Node) -> list[str]:
    return [str(v) for k, v in node.user_properties if k == KNOWN_DEFECT_PROPERTY]


@pytest.mark.parametrize("source", ["builtin", "user"])
def test_a_known_limitation_is_an_expected_failure_noted_with_its_issue(source):
    """The built-in and a library's registration declaring the same limitation get the same verdict."""
    node, record = Node(), _completeness(0.82)
    _judge(source).require_all(node, [(record, 0.95, "DL on RBFP")])  # passes: expected
    notes = _notes(node)
    assert len(notes) == 1 and "pytorch/captum#1104" in notes[0] and "0.8200 < 0.9500" in notes[0]
    assert record.passed is False and record.expected == "pytorch/captum#1104, pytorch/captum#1085"
    assert run_notes({"known_defects": {node.nodeid: notes}})[0][0].startswith(
        "known limitations: 1 check(s) failed as expected (pytorch/captum#1085; pytorch/captum#1104)"
    )


def test_below_what_the_limitation_explains_the_check_fails_as_any_does():
    """The floor is the bar its defective values were calibrated to: a further drop is a
    failure of its own, with or without a baseline."""
    with pytest.raises(ConformanceFailure, match="below what the known limitation pytorch/captum#1104 explains"):
        _judge("builtin").require_all(Node(), [(_completeness(0.29), 0.95, "DL on RBFP")])


def test_a_bar_loosened_below_the_promise_judges_as_usual():
    """A user's thresholds file that lowers the bar is not told the limitation is gone."""
    node = Node()
    _judge("builtin").require_all(node, [(_completeness(0.82), 0.3, "DL on RBFP")])
    assert not _notes(node)


def test_a_known_limitation_that_no_longer_shows_fails_the_test_as_stale():
    """Strict: the day the library fixes it, the test turns red and names the stale declaration."""
    with pytest.raises(ConformanceFailure, match="no longer shows.*the declaration is stale"):
        _judge("user").require_all(Node(), [(_completeness(0.999), 0.95, "DL on RBFP")])


def test_a_registered_limitation_held_against_the_shared_bar_is_stale_only_at_its_promise():
    """A registered DeepLift meets the shared vision bar (0.85), below the promise (0.95) its
    declaration names: between them it passes as any check does, at the promise the
    declaration is stale, below the bar it is expected, and a value that is no number fails."""
    judge = _judge("user", name="myDL")
    node, between = Node(), _completeness(0.88, "myDL")
    judge.require_all(node, [(between, 0.85, "myDL on RBFP")])
    assert between.passed and not _notes(node)
    with pytest.raises(ConformanceFailure, match="no longer shows.*the declaration is stale"):
        judge.require_all(Node(), [(_completeness(1.0, "myDL"), 0.85, "myDL on RBFP")])
    below = _completeness(0.82, "myDL")
    judge.require_all(node, [(below, 0.85, "myDL on RBFP")])
    assert below.passed is False and below.expected and len(_notes(node)) == 1
    for value in (float("nan"), 0.1):
        with pytest.raises(ConformanceFailure, match="below what the known limitation"):
            judge.require_all(Node(), [(_completeness(value, "myDL"), 0.85, "myDL on RBFP")])


def test_a_value_that_is_no_number_fails_the_bar():
    """NaN is below no bar and above none: it fails, never passes silently."""
    with pytest.raises(ConformanceFailure, match="completeness nan < threshold 0.9500"):
        _judge("user", known=()).require_all(Node(), [(_completeness(float("nan")), 0.95, "DL on RBFP")])


def test_an_undeclared_check_is_judged_by_the_bar():
    """Nothing is excused by name: a registered DeepLift without the declaration, or with one
    for another check, is judged by the bar."""
    with pytest.raises(ConformanceFailure, match="completeness 0.8200 < threshold 0.9500"):
        _judge("user", known=()).require_all(Node(), [(_completeness(0.82), 0.95, "DL on RBFP")])
    other = (dataclasses.replace(DEEPLIFT[1], check="truth_sign"),)
    with pytest.raises(ConformanceFailure, match="completeness 0.8200 < threshold 0.9500"):
        _judge("user", known=other).require_all(Node(), [(_completeness(0.82), 0.95, "DL on RBFP")])


def test_a_limitation_holds_on_the_cases_it_declares_only():
    """DeepLift's missing GELU rule is declared on formulas 2-15; on f01 its sums hold and the
    bar judges it (a pass, not a stale declaration)."""
    judge, node = _judge("builtin"), Node()
    for formula, value in ((1, 0.979), (4, 0.92)):
        record = Record("symbolic", "mlp", "DL", 0, "completeness", value, {"formula": formula})
        judge.require_all(node, [(record, 0.95, f"DL on f{formula:02d}")])
    assert len(_notes(node)) == 1 and "formula 2, 3" in _notes(node)[0]
    record = Record("symbolic", "mlp", "DL", 0, "completeness", 0.9, {"formula": 1})
    with pytest.raises(ConformanceFailure, match="completeness 0.9000 < threshold 0.9500"):
        judge.require_all(Node(), [(record, 0.95, "DL on f01")])


def test_a_method_declared_weaker_is_judged_at_its_level_and_shown():
    """Correct but weaker than the shared bar: judged at the declared floor (below it, it
    fails), its value recorded and the shared bar shown in the note; never stale."""
    weaker = (
        KnownLimitation(
            "vision", "completeness", ("example/lib#7",), "a sampled surrogate sums loosely", floor=0.5, weaker=True
        ),
    )
    judge, node = _judge("user", weaker, "mine"), Node()
    record = _completeness(0.6, "mine")
    judge.require_all(node, [(record, 0.95, "mine on RBFP")])
    assert record.passed and record.threshold == 0.5 and "the shared bar 0.9500" in _notes(node)[0]
    judge.require_all(Node(), [(_completeness(0.99, "mine"), 0.95, "mine on RBFP")])  # never stale
    lower = _completeness(0.45, "mine")
    judge.require_all(Node(), [(lower, 0.4, "mine on RBFP")])  # a bar below its level judges it: never stricter
    assert lower.passed and lower.threshold == 0.4
    with pytest.raises(ConformanceFailure, match="completeness 0.4000 < threshold 0.5000"):
        judge.require_all(Node(), [(_completeness(0.4, "mine"), 0.95, "mine on RBFP")])
    note = run_notes({"known_defects": {node.nodeid: _notes(node)}})[0][0]
    assert note.startswith("declared weaker: 1 check(s) judged at their declared level") and "example/lib#7" in note
    with pytest.raises(ValueError, match="declare the floor"):
        KnownLimitation("vision", "completeness", ("example/lib#7",), "x", weaker=True)
    with pytest.raises(ValueError, match="name its references"):
        KnownLimitation("vision", "completeness", (), "x")
    with pytest.raises(ValueError, match="must list its values"):
        KnownLimitation("symbolic", "completeness", ("example/lib#7",), "x", cases={"formula": 2})  # type: ignore[dict-item]


def test_a_weaker_level_the_random_control_reaches_fails_the_run():
    """A declared weaker level is a bar: where the control scores at or above it on the
    same case the declaration rejects nothing, and the run fails saying so."""
    from pytest_chaosmining.verdict.weaker_levels import levels_the_control_reaches

    weaker = KnownLimitation("symbolic", "fprec", ("example/lib#7",), "a sampled surrogate", floor=0.3, weaker=True)
    explainers = {"mine": Explainer("mine", lambda m, x, t: x, source="user", known=(weaker,))}

    def fprec(explainer: str, value: float, formula: int, threshold: float | None) -> Record:
        return Record(
            "symbolic", "mlp", explainer, 0, "fprec", value, {"formula": formula}, threshold, nodeid=f"f{formula}"
        )

    records = [
        fprec("mine", 0.5, 10, 0.3),  # judged at 0.3; the control scores 0.31 there: rejects nothing
        fprec("random", 0.31, 10, None),
        fprec("mine", 0.5, 2, 0.3),  # the control scores 0.03: the level rejects it
        fprec("random", 0.03, 2, None),
        fprec("mine", 0.9, 1, 0.25),  # the shared bar was below the floor: judged at the bar, not the level
        fprec("random", 0.3, 1, None),
    ]
    lines = levels_the_control_reaches(records, explainers, "random")
    assert len(lines) == 1 and "random control scores 0.3100" in lines[0] and "(f10)" in lines[0], lines


def test_the_built_ins_declare_their_limitations_as_a_library_would():
    assert builtin_explainers()["DL"].known == BUILTIN_LIMITATIONS["DL"] == DEEPLIFT
    assert builtin_explainers()["GBP"].known == BUILTIN_LIMITATIONS["GBP"] == GUIDED_BACKPROP
    assert all(not e.known for name, e in builtin_explainers().items() if name not in ("DL", "GBP"))
    assert builtin_limitation("IG", "vision", "completeness") is None


def _calibration_runs() -> list[dict]:
    """The own-merit calibration runs of every calibration and held-out seed, read as
    benchmarks/axioms/calibrate_properties.py reads them."""
    axioms = ROOT / "benchmarks" / "axioms"
    sys.path.insert(0, str(axioms))
    try:
        from calibrate_properties import RUNS, read_run
    finally:
        sys.path.remove(str(axioms))
    return [read_run(path) for path in sorted(RUNS.glob("properties-*.json.xz"))]


def _symbolic_completeness(explainer: str) -> dict[int, list[float]]:
    """The calibration and held-out seeds' symbolic completeness of ``explainer``, per formula."""
    found: dict[int, list[float]] = {}
    for run in _calibration_runs():
        for entry in run["formulas"]:
            found.setdefault(entry["formula"], []).append(entry[explainer]["completeness"])
    return found


def _condition_completeness(suite: str, explainer: str) -> dict[str, list[float]]:
    """The calibration and held-out seeds' completeness of ``explainer`` in a classifier
    ``suite``, per condition (the probe case and the rotation's other cases)."""
    found: dict[str, list[float]] = {}
    for run in _calibration_runs():
        for case in [run["probe"][suite], *run.get("cases", {}).get(suite, [])]:
            condition = case.get("case", "RBFP").split("-")[0]  # the probe: the plan's first, RBFP
            found.setdefault(condition, []).append(case["values"][explainer]["completeness"])
    return found


def test_the_shipped_bars_are_the_promise_not_the_defective_values():
    """The built-in's own bar is what the property promises, and the shared bar a
    registered explainer meets was not set from the defective values."""
    bars = shipped_thresholds(None)
    declared = [(name, known) for name, every in BUILTIN_LIMITATIONS.items() for known in every]
    for name, known in declared:
        own = bars.optional_metric(known.suite, "smoke", known.check, "default", name)
        shared = bars.optional_metric(known.suite, "smoke", known.check, "default", "a-registered-one")
        # a check of yours the limitation is of is judged, but vision's signs (not told from chance there)
        judged_for_yours = shared is not None and shared >= 0.65
        assert own == known.promise and (judged_for_yours or (known.suite, known.check) == ("vision", "truth_sign"))
    runs = json.loads((ROOT / "benchmarks" / "axioms" / "properties.json").read_text())
    patterns = json.loads((ROOT / "benchmarks" / "real_bugs" / "patterns_calibration.json").read_text())
    for name, known in declared:
        if known.pattern is not None:  # a module-pattern network's: calibrated over its initialisations
            seen = patterns["explainers"][name]["defects"][known.pattern]
            assert seen["floor"] == known.floor and seen["held_out_below_floor"] == 0, (known.pattern, seen)
            assert seen["held_out_at_promise"] == 0, (known.pattern, seen)  # not stale on unseen networks
            continue
        seen = runs["metrics"][f"{known.suite}.{known.check}"]["explainers"][name]
        assert seen["bar"] == known.promise and seen["defect_floor"] == known.floor <= seen["min"], seen
        if not known.cases:  # it fails there on every seed, calibration and held out (not stale)
            assert seen["max"] < seen["bar"] and seen["held_out_failed"] == seen["held_out_n"], seen
            continue
        if "condition" in known.cases:  # on the conditions it is declared for it fails on every seed
            for condition, values in _condition_completeness(known.suite, name).items():
                assert condition not in known.cases["condition"] or max(values) < known.promise, (condition, values)
            continue
        # on the formulas it is declared for it fails on every seed; on the others its sums hold
        for formula, values in _symbolic_completeness(name).items():
            declared = formula in known.cases["formula"]
            assert all((v < known.promise) == declared and v >= known.floor for v in values), (formula, values)
    assert not math.isinf(bars.optional_metric("symbolic", "smoke", "completeness", "f02", "DL") or -math.inf)


def test_the_documented_registration_declares_what_it_says():
    """docs/explainers.md's captum DeepLift registration builds, and declares what the built-in does."""
    text = (ROOT / "docs" / "explainers.md").read_text()
    block = text.split("**Known limitations, declared where you register.**")[1].split("```python")[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(block, namespace)  # noqa: S102 - the documented example itself
    registered = namespace["pytest_chaosmining_explainers"](None)["myDL"]  # type: ignore[operator]
    for known in registered.known:
        built_in = builtin_limitation("DL", known.suite, known.check, known.pattern)
        assert built_in is not None and known.references[0] == built_in.references[0], known
        assert (known.floor, known.cases, known.promise) == (built_in.floor, built_in.cases, built_in.promise), known
