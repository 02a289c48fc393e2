"""The mutation benchmark's parts (benchmarks/mutations): its mutants keep the
explainer contract, and its verdicts read failures the way the judge writes them.
The benchmark itself runs the default run per mutant (tens of minutes): its
committed table is benchmarks/mutations/results.md."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

MUTATIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "mutations"
sys.path.insert(0, str(MUTATIONS))

from mutants import BENIGN, COST, HARMFUL, MUTANTS, SAME_WORK, explainer  # noqa: E402
from run import kinds_of, short_nodeid, verdict  # noqa: E402

from pytest_chaosmining.explainers import ExplainerNotApplicable, attribute  # noqa: E402


def test_the_benchmark_has_the_mutants_the_issue_asks_for():
    kinds = [m.kind for m in MUTANTS.values()]
    assert kinds.count(HARMFUL) >= 20 and kinds.count(BENIGN) + kinds.count(COST) >= 5
    assert SAME_WORK <= set(MUTANTS)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_keeps_the_contract_and_changes_the_map(name):
    """Every mutant returns a map of the inputs' shape (so the suites judge its scores,
    not a contract error) on a tabular model, or declares itself image-only."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).eval()
    inputs = torch.randn(8, 6)
    try:
        out = attribute(explainer(name), model, inputs, torch.arange(8) % 3)
    except ExplainerNotApplicable:
        assert MUTANTS[name].base == "GradCAM"
        return
    assert out.shape == inputs.shape
    base = attribute(explainer(f"base:{MUTANTS[name].base}"), model, inputs, torch.arange(8) % 3)
    if MUTANTS[name].kind == HARMFUL and name != "ig_wrong_target":
        assert not torch.allclose(out, base), "a harmful mutant that changes nothing measures nothing"


def test_gradcam_mutant_runs_on_a_cnn():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(4, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
    ).eval()
    inputs = torch.randn(2, 1, 8, 8)
    out = attribute(explainer("gradcam_first_layer"), model, inputs, 0)
    assert out.shape == inputs.shape


def test_verdicts_read_the_judges_messages():
    assert kinds_of("candidate on f01: fprec 0.1 < threshold 0.5 (margin -0.4)", "x") == {"bar"}
    assert kinds_of("candidate on f01: fprec regressed: 0.5 < baseline 0.9 - max drop 0.02", "x") == {"drop"}
    assert kinds_of("candidate on f01: cpu_ms regressed: 300 ms > 2 × baseline 100 ms + 20 ms", "x") == {"cost"}
    assert kinds_of("judged in the baseline b.json (fprec 0.9) but not in this run", "chaosmining-baseline::t") == {
        "missing"
    }
    assert kinds_of("explainer 'candidate' returned shape (1,), expected the inputs' shape (2,)", "x") == {"contract"}
    base = {"failures": [{"nodeid": "t_fails_anyway", "suite": "vision", "message": "iou 0.1 < threshold 0.5"}]}
    failure = {"nodeid": "t1", "suite": "symbolic", "explainer": "candidate", "message": "fprec 0.1 < threshold 0.5"}
    anyway = {**failure, "nodeid": "t_fails_anyway", "suite": "vision"}
    bars_run = {"failures": [failure, anyway], "outcomes": {}, "seconds": 1.0}
    baseline_run = {"failures": [failure, anyway], "outcomes": {"symbolic|candidate|failed": 1}, "seconds": 2.0}
    row = verdict(bars_run, baseline_run, HARMFUL, base)
    assert (row["bars"], row["with_baseline"], row["suites"], row["verdict"]) == (
        1,
        1,
        ["symbolic 1"],
        "caught by the bars",
    )
    assert verdict({**bars_run, "failures": []}, {**baseline_run, "failures": []}, BENIGN, base)["verdict"] == "passes"


def test_a_test_is_the_same_test_under_another_rootdir():
    """A run against a baseline outside the folder may get another rootdir (pytest counts a
    path given to an option as a separate word), so its nodeids carry a longer prefix: the
    base's failures are still subtracted and each test counts once."""
    short = "symbolic/test_chaosmining_symbolic.py::test_fprec[f01-candidate-s0]"
    long = "wtm/src/pytest_chaosmining/suites/" + short
    base = {"failures": [{"nodeid": short, "suite": "symbolic", "message": "fprec 0.1 < threshold 0.5"}]}
    other = "vision/test_chaosmining_vision.py::test_iou[RBRP-candidate-s0]"
    failures = [
        {"nodeid": long, "suite": "symbolic", "explainer": "candidate", "message": "fprec 0.1 < threshold 0.5"},
        {"nodeid": "a/src/pytest_chaosmining/suites/" + other, "suite": "vision", "message": "iou 0.1 < threshold 0.3"},
    ]
    bars_run = {"failures": [{**failures[1], "nodeid": other}], "outcomes": {}, "seconds": 1.0}
    baseline_run = {"failures": failures, "outcomes": {}, "seconds": 1.0}
    row = verdict(bars_run, baseline_run, HARMFUL, base)
    assert (row["bars"], row["with_baseline"], row["suites"]) == (1, 1, ["vision 1"])
    assert short_nodeid("chaosmining-baseline::" + long) == short
