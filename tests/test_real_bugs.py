"""The corpus of real bugs (benchmarks/real_bugs/) is well formed, and what docs and README
say of its replay is the committed runs, number for number."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks" / "real_bugs"


@pytest.fixture(scope="module")
def replay():
    sys.path.insert(0, str(HERE))
    try:
        spec = importlib.util.spec_from_file_location("real_bugs_replay", HERE / "replay.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("real_bugs_replay", None)
        sys.path.remove(str(HERE))


def test_the_corpus_is_what_the_issue_asks_for(replay):
    """At least 15 reported bugs of at least four libraries, each cited by its number; at
    least 10 silent and at least 8 reproduced by the libraries' own releases, unmodified."""
    entries = [e for e in replay.load_corpus() if not e.control]
    assert len(entries) >= 15
    assert len({e.library for e in entries}) >= 4
    assert sum(e.effect == "silent" for e in entries) >= 10
    assert sum(e.reproduction == "release_pair" for e in entries) >= 8
    for entry in entries:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", entry.reference), entry.id
        assert entry.effect in ("silent", "raises"), entry.id
        assert entry.reproduction in ("release_pair", "wrapper", "unfixed"), entry.id
        assert entry.covered or entry.not_covered_why, f"{entry.id}: a miss must say why"
        if entry.reproduction == "release_pair":
            assert re.fullmatch(r"[\w-]+==[\d.]+", entry.bad) and re.fullmatch(r"[\w-]+==[\d.]+", entry.good)
        elif entry.reproduction == "unfixed":  # no release has the fix: the bad one is judged alone
            assert entry.bad and not entry.good, entry.id
        elif entry.covered:  # a wrapper replays the installed release, the bad side through the wrapper
            assert entry.wrapper and entry.bad == entry.good == "installed", entry.id


def test_every_replayed_name_is_a_built_in_or_a_registered_library_method(replay):
    from explainers import METHODS, WRAPPERS

    from pytest_chaosmining.explainers import builtin_explainers

    builtins = set(builtin_explainers())
    for entry in replay.load_corpus():
        for name in entry.explainers:
            assert name in builtins or name in METHODS, (entry.id, name)
        assert not entry.wrapper or entry.wrapper in WRAPPERS, entry.id
        assert not entry.wrapper or entry.register, f"{entry.id}: a wrapper wraps a registered library method"


def test_every_covered_entry_and_control_has_a_committed_replay(replay):
    """No silent green: an entry whose pattern a suite covers is replayed, and its outcome
    committed; a control raised nothing."""
    for entry in replay.load_corpus():
        path = HERE / "runs" / f"{entry.id}.json"
        if entry.covered or entry.control:
            assert path.exists(), f"{entry.id} was never replayed"
            run = json.loads(path.read_text())
            assert run["verdict"] != "error", (entry.id, run.get("why"))
            if entry.control:
                assert run["verdict"] == "quiet", (entry.id, run["bars_alone"], run["against_baseline"])


def test_the_docs_table_is_the_committed_runs(replay):
    text = (ROOT / "docs" / "real_bugs.md").read_text()
    marker = "<!-- replay table -->"
    start = text.index(marker) + len(marker)
    shown = text[start : text.index(marker, start)].strip()
    assert shown == replay.table(replay.load_corpus()).strip()


def test_the_readme_cites_the_committed_figures(replay):
    """The README's sentence on real bugs states the committed table's counts."""
    entries = replay.load_corpus()
    runs = {
        e.id: json.loads((HERE / "runs" / f"{e.id}.json").read_text()) for e in entries if e.covered and not e.control
    }
    silent = [e for e in entries if e.covered and not e.control and e.effect == "silent"]
    caught = sum(runs[e.id]["verdict"].startswith("caught") for e in silent)
    alone = sum(runs[e.id]["verdict"] == "caught by the bars alone" for e in silent)
    controls = [e for e in entries if e.control]
    readme = (ROOT / "README.md").read_text()
    bugs = len([e for e in entries if not e.control])
    stated = (
        f"{bugs} bugs reported against {len({e.library for e in entries if not e.control})} libraries; "
        f"{sum(e.covered for e in entries if not e.control)} live in a pattern the default run's networks have"
    )
    assert stated in readme
    assert f"{caught} of the {len(silent)} silent ones among them are caught ({alone} by the bars alone)" in readme
    raising = [e for e in entries if e.covered and not e.control and e.effect == "raises"]
    raised = sum(runs[e.id]["verdict"].startswith("caught") for e in raising)
    assert f"{raised} of the {len(raising)} that raise are caught" in readme
    quiet = sum(json.loads((HERE / "runs" / f"{e.id}.json").read_text())["verdict"] == "quiet" for e in controls)
    assert quiet == len(controls) and f"{len(controls)} controls raise nothing" in readme


def test_the_pattern_networks_run_and_the_docs_quote_their_committed_figures():
    """benchmarks/real_bugs/patterns.py: every pattern network gives one logit per class, and
    the figures docs/real_bugs.md quotes are in the committed patterns.md."""
    import torch

    spec = importlib.util.spec_from_file_location("real_bugs_patterns", HERE / "patterns.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, model in module.networks().items():
        assert model(torch.rand(2, 3, 12, 12)).shape == (2, 10), name
    table = (HERE / "patterns.md").read_text()
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table.splitlines() if line.startswith("| ")}
    assert rows["max-pool before ReLU · DeepLift"].split(" | ")[1:5] == [
        "1.000 / 0e+00",
        "1.000 / 0e+00",
        "0.983 / 0e+00",
        "0.983 / 0e+00",
    ]
    assert "-0.206 / 2e-01" in rows["Softmax module inside the network · DeepLift"]
    assert "0.621" in rows["functional ReLU · DeepLift"]
    assert "0.578" in rows["one ReLU module called twice · shap.DeepExplainer"]
    assert rows["in-place ReLU after the last convolution · DeepLift"].split(" | ")[2] == "raises RuntimeError"


def test_a_failure_by_the_registration_s_api_is_no_catch_and_the_effect_is_read_from_the_failure(replay):
    """torchcam 0.3.2's ScoreCAM without a context manager (the adapter's `with` failed
    there before it learnt the old API) is an error of the replay, never a catch; a NaN map
    is not the raise grad-cam#183 reports; a wrong map is a silent bug's effect."""
    entries = {e.id: e for e in replay.load_corpus()}
    api = (
        "Failed: explainer 'torchcam-ScoreCAM' raised TypeError: 'ScoreCAM' object does not support the "
        "context manager protocol"
    )
    assert replay.registration_error(api)
    assert not replay.shows_effect(entries["torchcam-scorecam-inplace-normalize-nan"], api)
    nan = "explainer 'gradcam-GradCAM' returned 26460 non-finite value(s) (NaN/inf)"
    raises = (
        "explainer 'gradcam-GradCAM' raised RuntimeError: Output 0 of BackwardHookFunction is a view and is "
        "being modified inplace"
    )
    hooked = entries["gradcam-full-backward-hook-inplace-relu"]
    assert not replay.shows_effect(hooked, nan) and replay.shows_effect(hooked, raises)
    assert not replay.registration_error(raises)
    drift = "torchcam-ScoreCAM on RBFP: its maps moved from the baseline's: map_agreement 0.6829 < threshold 0.9860"
    assert replay.shows_effect(entries["torchcam-scorecam-inplace-normalize-nan"], drift)
