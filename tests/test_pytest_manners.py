"""The plugin as a good pytest citizen: markers, header, its own warning category,
--tb, pytest-timeout's timer, thread settings, node-id selection, no ``nan``."""

from __future__ import annotations

import signal
import time
import warnings
from collections import Counter

import pytest

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.results import Record
from pytest_chaosmining.explainers import CallTimeout, collect_explainers, time_limit
from pytest_chaosmining.reports.markdown import terminal_table
from pytest_chaosmining.suites import SUITES_DIR


def test_markers_are_listed_without_a_chaosmining_run(pytester):
    result = pytester.runpytest_subprocess("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.chaosmining: a shipped ChaosMining conformance test*",
                                 "@pytest.mark.vision: a test of the chaosmining vision suite*",
                                 "@pytest.mark.IG: a chaosmining test of the built-in explainer IG*"])


def test_the_report_header_says_what_the_run_judges(pytester, shared_cache):
    result = pytester.runpytest_subprocess("--chaosmining", "--chaosmining-suites", "symbolic", "--chaosmining-cache",
                                           str(shared_cache), "--collect-only", "-p", "no:randomly")
    result.stdout.fnmatch_lines([f"chaosmining: tier smoke, suites symbolic, device cpu, cache {shared_cache}"])


def test_the_plugins_warnings_have_their_own_category():
    with pytest.warns(ChaosminingWarning, match="explainer 'SA' from pytest_chaosmining_explainers hook replaces"):
        collect_explainers([{"SA": lambda model, inputs, target: inputs}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ChaosminingWarning)
        collect_explainers([{"SA": lambda model, inputs, target: inputs}])  # filterable as a category


def test_the_call_time_limit_keeps_an_outer_timer(monkeypatch):
    """pytest-timeout arms SIGALRM too: after an explainer call the outer timer is
    armed again with what it had left, and if it is due during the call its own
    handler runs (not the plugin's)."""
    fired = []

    class OuterTimeout(Exception):
        pass

    def outer(signum, frame):
        fired.append(time.monotonic())
        raise OuterTimeout

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
        assert fired
        signal.setitimer(signal.ITIMER_REAL, 0)
        with pytest.raises(CallTimeout), time_limit(0.1):
            time.sleep(2.0)
        assert signal.getsignal(signal.SIGALRM) is outer
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
    full.stdout.fnmatch_lines(["*raise ValueError(\"boom in the explainer\")*", "*ExplainerError*boom in the explainer*"])


def test_thread_settings_are_scoped_to_the_suites_and_one_node_id_runs_one_test(pytester, shared_cache):
    """A user's own test keeps its thread count in a chaosmining run; naming one
    shipped test by node id runs that test alone, not every suite."""
    pytester.makeconftest("""
import torch
THREADS = torch.get_num_threads()
""")
    pytester.makepyfile(test_mine="""
import torch
from conftest import THREADS

def test_threads_are_mine():
    assert torch.get_num_threads() == THREADS
""")
    node = f"{SUITES_DIR / 'symbolic' / 'test_chaosmining_symbolic.py'}::test_prediction_quality"
    result = pytester.runpytest_subprocess("--chaosmining", "--chaosmining-suites", "symbolic", "--chaosmining-cache",
                                           str(shared_cache), "-p", "no:randomly", "-p", "no:cacheprovider",
                                           "test_mine.py", node, "-k", "test_threads_are_mine or f08")
    result.assert_outcomes(passed=2)


def test_the_summary_says_dash_where_nothing_was_timed():
    records = [Record("iteroar", "m", "SA", 0, "drop_gain", 0.5, {})]
    lines = terminal_table(records, Counter({("iteroar", "SA", "passed"): 1}))
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
