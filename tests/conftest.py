import os
import sys
from pathlib import Path

import _pytest.pytester
import pytest

from pytest_chaosmining.core.results_file import read_results

# Two formulas with one predictive feature and one with several keep the
# end-to-end runs short while still exercising every explainer.
SUBSET = "f01 or f08"


def pytest_configure(config):
    """Under ``pytest -n``, each worker's torch gets its share of the cores.

    torch starts as many intra-op threads as the machine has cores, so two
    workers on two cores ran four spinning OpenMP threads: the tests that train
    in-process (RFEwNA, ensembles, IteROAR chains) took 10-25x their time alone."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers:
        import torch

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        torch.set_num_threads(max(1, cores // int(workers)))


@pytest.fixture(scope="session", autouse=True)
def keep_installed_modules(tmp_path_factory):
    """pytester drops every module a test imported, so that the next in-process
    run imports its own ``conftest`` and test files afresh; dropping numpy, torch
    or matplotlib as well breaks their next import ('cannot load module more than
    once').  Here it drops only the modules loaded from the tests' temporary
    directories: what the runs wrote."""
    written = tmp_path_factory.getbasetemp().resolve()  # every pytester folder lies under it

    def from_a_test_directory(name):
        file = getattr(sys.modules.get(name), "__file__", None)
        return file is not None and Path(file).resolve().is_relative_to(written)

    snapshot = _pytest.pytester.SysModulesSnapshot

    def keeping(preserve=None):
        return snapshot(preserve=lambda name: not from_a_test_directory(name) or bool(preserve and preserve(name)))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_pytest.pytester, "SysModulesSnapshot", keeping)
        yield


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One model cache for the end-to-end tests that do not test the cache itself, shared
    by the xdist workers (the cache is safe between processes: a model trains once)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "model-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def run_suite(pytester, shared_cache, monkeypatch):
    """Run ``pytest --chaosmining`` at the smoke tier on a formula subset, in this
    process (``subprocess=True``: in a fresh interpreter, for what a process reads
    once: entry points, ``PYTHONPATH``, xdist workers' output).  In process saves
    each run the interpreter's start and torch's import (about 3 s), and checks
    that nothing of a run's state outlives it.

    By default every model is trained and every result computed (no shipped pack,
    no reuse of cached built-in results), so the tests see what a cold run does;
    ``shipped=True`` loads the shipped models instead of training them (every result
    still computed: what a user's first run does); ``fresh=False`` runs as a user's
    default run does (shipped models, cached built-in results reused).  The run does not
    inherit this run's xdist worker identity (under ``pytest -n``), which would make
    it act as a worker (pytest-benchmark disables itself, devices map per worker)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)

    def run(*args, cache=None, k=SUBSET, report="report", fresh=True, shipped=False, subprocess=False):
        argv = [
            "--chaosmining",
            "--chaosmining-tier",
            "smoke",
            "--chaosmining-cache",
            str(cache or shared_cache),
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
        ]
        if fresh:
            argv += ["--chaosmining-builtin-results", "recompute"]
            argv += [] if shipped else ["--chaosmining-pack", "none"]
        if report:
            argv += ["--chaosmining-report", report]
        if k:
            argv += ["-k", k]
        if subprocess:
            return pytester.runpytest_subprocess(*argv, *args)
        return pytester.runpytest_inprocess(*argv, *args, f"--basetemp={pytester.path / 'basetemp'}")

    return run


def load_results(pytester, report="report"):
    return read_results(pytester.path / report / "results.json", samples=True)
