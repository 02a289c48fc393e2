import json

import pytest

# Two formulas with one predictive feature and one with several keep the
# end-to-end runs short while still exercising every explainer.
SUBSET = "f01 or f08"


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One model cache for the end-to-end tests that do not test the cache itself."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture
def run_suite(pytester, shared_cache, monkeypatch):
    """Run ``pytest --chaosmining`` in a subprocess at the smoke tier on a formula subset.

    By default every model is trained and every result computed (no shipped pack,
    no reuse of cached built-in results), so the tests see what a cold run does;
    ``shipped=True`` loads the shipped models instead of training them (every result
    still computed: what a user's first run does); ``fresh=False`` runs as a user's
    default run does (shipped models, cached built-in results reused).  The subprocess does not
    inherit this run's xdist worker identity (under ``pytest -n``), which would make
    it act as a worker (pytest-benchmark disables itself, devices map per worker)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)

    def run(*args, cache=None, k=SUBSET, report="report", fresh=True, shipped=False):
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
        return pytester.runpytest_subprocess(*argv, *args)

    return run


def load_results(pytester, report="report"):
    return json.loads((pytester.path / report / "results.json").read_text())
