"""The plugin as a good pytest citizen: markers, header, its own warning category,
--tb, pytest-timeout's timer, thread settings, node-id selection, no ``nan``."""

from __future__ import annotations

import signal
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.explainers import CallTimeout, ExplainerError, collect_explainers, time_limit
from pytest_chaosmining.reports.markdown import terminal_table
from pytest_chaosmining.suites import SUITES_DIR, all_suites


def test_markers_are_listed_without_a_chaosmining_run_all_in_the_plugins_namespace(pytester):
    """A library that installs the plugin keeps its own ``vision`` or ``IG`` marker:
    every marker the plugin registers starts with ``chaosmining``."""
    from pytest_chaosmining.suites import registered_suites

    result = pytester.runpytest_subprocess("--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.chaosmining: a shipped ChaosMining conformance test*",
            "@pytest.mark.chaosmining_vision: a test of the chaosmining vision suite*",
            "@pytest.mark.chaosmining_explainer(name): a chaosmining test of the explainer name*",
        ]
    )
    listed = {line.split(":")[0].split("(")[0] for line in result.stdout.lines if line.startswith("@pytest.mark.")}
    ours = {m for m in listed if "chaosmining" in m}
    assert ours == {"@pytest.mark.chaosmining", "@pytest.mark.chaosmining_explainer"} | {
        f"@pytest.mark.chaosmining_{name}" for name in registered_suites()
    }
    assert not listed & {f"@pytest.mark.{name}" for name in (*registered_suites(), "IG", "SA", "random")}


def test_the_report_header_says_what_the_run_judges(pytester, shared_cache):
    result = pytester.runpytest_subprocess(
        "--chaosmining",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-cache",
        str(shared_cache),
        "--collect-only",
        "-p",
        "no:randomly",
    )
    result.stdout.fnmatch_lines([f"chaosmining: tier smoke, suites symbolic, device cpu, cache {shared_cache}"])


def test_the_working_tree_is_light():
    """A library's checkout of the plugin (a submodule, a vendored copy) stays light:
    the tracked files weigh at most 52 MB (0.2 MB for the module-pattern networks' calibration
    runs and the replay's outcomes on them; the calibration runs are compressed, the
    figures quantised; 25 MB before the benign changes behind the baseline's calibration,
    0.9 MB of xz, and the per-sample values in the shipped derived results; 27 MB before
    the benign runs kept every explained sample's fingerprint where they calibrate the
    drift (the bases and the calibration half; the held-out runs keep a digest): 3.7 MB;
    29.5 MB before the CPU reference reports/smoke was regenerated with every explained
    sample's fingerprint and the per-sample values a baseline pairs: 1.9 -> 4.9 MB; 33.9 MB
    before the real-bug corpus with its replay's runs, 0.11 MB, and the records' ``expected``
    field of a known library defect, 0.07 MB in reports/smoke/results.json; 34.45 MB before
    the outline of every explained sample and the samplers' recorded noise, in the pack and
    the CPU reference, 0.7 MB after results.json wrote its arrays of numbers on one line;
    35.2 MB before the benign set's fourth held-out batch, 72 changes in 9 more chunks, and
    the rerun's outlines and recorded noise in every chunk: about 1.5 MB when complete;
    36.75 MB after the rerun on today's code, with the bases kept per machine and the
    earlier machine's bases dropped; 50.9 MB after the fingerprints kept the signed sums
    of every explained sample, float16, the symbolic suite's 400 rows where 32 were kept:
    the CPU reference 5.4 -> 8.0 MB, the pack's derived results 3.2 -> 6.4 MB, the benign
    bases and calibration half 5 -> 11 MB; 52.6 MB before the own-merit calibration runs
    of every case were compressed, 2.1 -> 0.1 MB; issue 81 weighs the report's size)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    files = [root / name for name in listed.stdout.decode().split("\0") if name]
    total = sum(f.stat().st_size for f in files if f.is_file())
    assert total <= 52_000_000, f"{total / 1e6:.2f} MB tracked"


def test_the_plugins_warnings_have_their_own_category():
    assert issubclass(ChaosminingWarning, pytest.PytestWarning)  # -W error::pytest.PytestWarning covers them
    with pytest.warns(ChaosminingWarning, match="explainer 'SA' from pytest_chaosmining_explainers hook replaces"):
        collect_explainers([{"SA": lambda model, inputs, target: inputs}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ChaosminingWarning)
        collect_explainers([{"SA": lambda model, inputs, target: inputs}])  # filterable as a category


def test_the_call_time_limit_keeps_an_outer_timer(monkeypatch):
    """pytest-timeout arms SIGALRM too: after an explainer call the outer timer is
    armed again with what it had left, and if it is due during the call its own
    handler runs, once (and the plugin's limit goes on if that handler returns)."""
    fired = []

    class OuterTimeout(Exception):
        pass

    def outer(signum, frame):
        fired.append(time.monotonic())
        raise OuterTimeout

    def quiet(signum, frame):
        fired.append(time.monotonic())

    previous = signal.signal(signal.SIGALRM, outer)
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        with time_limit(30.0):
            time.sleep(0.05)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 4.0 < left < 5.0 and signal.getsignal(signal.SIGALRM) is outer
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(OuterTimeout), time_limit(30.0):
            time.sleep(2.0)
        time.sleep(0.3)  # nothing fires again after the block
        assert len(fired) == 1 and signal.getitimer(signal.ITIMER_REAL)[0] == 0
        signal.setitimer(signal.ITIMER_REAL, 0)
        with pytest.raises(CallTimeout), time_limit(0.1):
            time.sleep(2.0)
        assert signal.getsignal(signal.SIGALRM) is outer
        fired.clear()
        signal.signal(signal.SIGALRM, quiet)  # an outer handler that returns: the plugin's limit still holds
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(CallTimeout), time_limit(0.4):
            time.sleep(3.0)
        assert len(fired) == 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_tb_long_shows_the_explainers_traceback(pytester, run_suite):
    pytester.makeconftest("""
import pytest

def broken_helper(inputs):
    raise ValueError("boom in the explainer")

def broken(model, inputs, target):
    return broken_helper(inputs)

@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {"broken": broken}
""")
    args = ("--chaosmining-explainers", "broken", "--chaosmining-suites", "symbolic")
    short = run_suite(*args, k="f08 and test_fprec", fresh=False, report=None)
    short.assert_outcomes(failed=1)
    short.stdout.no_fnmatch_line("*raise ExplainerError*")
    full = run_suite(*args, "--tb=long", k="f08 and test_fprec", fresh=False, report=None)
    full.assert_outcomes(failed=1)
    full.stdout.fnmatch_lines(['*raise ValueError("boom in the explainer")*', "*ExplainerError*boom in the explainer*"])


def test_thread_settings_are_scoped_to_the_suites_and_one_node_id_runs_one_test(pytester, shared_cache):
    """A user's own test keeps its thread count in a chaosmining run while the
    shipped tests run with one; naming one shipped test by node id runs that test
    alone, not every suite."""
    pytester.makepyfile(
        record_threads="""
import json
from pathlib import Path

import pytest
import torch

torch.set_num_threads(3)

@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with open(Path.cwd() / "threads.txt", "a") as fh:
        fh.write(json.dumps([item.name, torch.get_num_threads()]) + "\\n")
    return (yield)
"""
    )
    pytester.makepyfile(
        test_mine="""
import torch

def test_threads_are_mine():
    assert torch.get_num_threads() == 3
"""
    )
    node = f"{SUITES_DIR / 'symbolic' / 'test_chaosmining_symbolic.py'}::test_prediction_quality"
    result = pytester.runpytest_subprocess(
        "--chaosmining",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-cache",
        str(shared_cache),
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-p",
        "record_threads",
        "test_mine.py",
        node,
        "-k",
        "test_threads_are_mine or f08",
    )
    result.assert_outcomes(passed=2)
    import json

    seen = dict(json.loads(line) for line in (pytester.path / "threads.txt").read_text().splitlines())
    assert seen.pop("test_threads_are_mine") == 3 and list(seen.values()) == [1], seen


def test_a_partial_that_binds_the_layer_keeps_it():
    import functools

    import torch
    from captum.attr import LayerGradCam

    from pytest_chaosmining.explainers import as_explainer, attribute

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(2, 2, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(2, 2),
    )
    seen = []

    class Recording(LayerGradCam):
        def __init__(self, forward_func, layer, **kwargs):
            seen.append(layer)
            super().__init__(forward_func, layer, **kwargs)

    suggested = as_explainer("cam", Recording, "user")
    attribute(suggested, model, torch.randn(2, 1, 6, 6), 0)
    assert isinstance(seen[-1], torch.nn.Conv2d)
    bound = as_explainer("cam-first", functools.partial(Recording, layer=model[0]), "user")
    try:
        attribute(bound, model, torch.randn(2, 1, 6, 6), 0)
    except ExplainerError:
        pass  # model[0] belongs to the original model, not to the explainer's private copy
    assert seen[-1] is model[0]  # the bound layer was kept, not replaced by the suggested one


def test_the_summary_says_dash_where_nothing_was_timed():
    records = [Record("iteroar", "m", "SA", 0, "drop_gain", 0.5, {})]
    lines = terminal_table(records, Counter({("iteroar", "SA", "passed"): 1}), all_suites())
    assert "nan" not in "\n".join(lines) and lines[1].rstrip().endswith("-")


def test_numpy_maps_and_captum_classes_with_constructor_arguments_are_explainers():
    """shap, pytorch-grad-cam and Quantus return numpy: converted (same shape check);
    ``functools.partial`` binds a captum class's constructor arguments."""
    import functools

    import numpy as np
    import torch
    from captum.attr import DeepLift, IntegratedGradients

    from pytest_chaosmining.explainers import ExplainerError, as_explainer, attribute

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).eval()
    inputs = torch.randn(5, 4)
    as_numpy = as_explainer("np", lambda m, x, t: np.ones(tuple(x.shape), dtype=np.float32), "user")
    assert torch.equal(attribute(as_numpy, model, inputs, None), torch.ones(5, 4))
    wrong = as_explainer("np", lambda m, x, t: np.ones((5,), dtype=np.float32), "user")
    with pytest.raises(ExplainerError, match="returned shape"):
        attribute(wrong, model, inputs, None)
    plain = attribute(as_explainer("IG", IntegratedGradients, "user"), model, inputs, None)
    global_ig = as_explainer("IG-global", functools.partial(IntegratedGradients, multiply_by_inputs=False), "user")
    assert global_ig.is_captum
    assert torch.allclose(attribute(global_ig, model, inputs, None) * inputs, plain, atol=1e-5)
    eps = as_explainer("DL-eps", functools.partial(DeepLift, eps=1e-6), "user")
    assert attribute(eps, model, inputs, None).shape == inputs.shape
