"""What the end-to-end tests of the plugin share: the built-ins a default run scores, conftests
that register cheats, and readers of a run's results."""

import json
import math
from pathlib import Path

from conftest import load_results

#: the installed package's sources (the results.json schema ships there)
SRC = Path(__file__).resolve().parents[1] / "src" / "pytest_chaosmining"

#: the built-ins a default run scores on the symbolic MLPs (GradCAM: no 2-D convolution, skipped; KS: on request)
EXPLAINERS = ("SA", "DL", "IG", "FA", "IxG", "GBP", "SG", "GS", "OCC")

#: a conftest registering the shipped cheats and misbehaving explainers
CHEATS_CONFTEST = """
from pytest_chaosmining.explainers.cheats import CHEATS, MISBEHAVING

def pytest_chaosmining_explainers(config):
    return {**CHEATS, **MISBEHAVING}
"""


def breaking_conftest(error: str) -> str:
    """A conftest registering ``mine``, a saliency that raises ``error`` (an exception's
    construction, ``NotImplementedError('…')``) once the environment sets ``BROKEN``."""
    return f"""
import os
import pytest

def saliency(model, inputs, target):
    if os.environ.get("BROKEN"):
        raise {error}
    inputs = inputs.clone().requires_grad_(True)
    model(inputs).sum().backward()
    return inputs.grad.abs()

@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {{"mine": saliency}}
"""


#: conftest lines that run the collected tests in reversed order
REVERSED_ORDER = """

def pytest_collection_modifyitems(items):
    items.reverse()
"""

CHEATS = ("input_magnitude", "edges", "fixed_gradient", "centre", "first", "constant")

MISBEHAVING = ("zero_weights", "leave_hook", "train_mode")


def drift_checks_of(pytester, report="report"):
    """How many map agreements with a baseline's fingerprints a run judged (new against that baseline)."""
    return sum(
        r["metric"] == "map_agreement" and r["passed"] is not None for r in load_results(pytester, report)["records"]
    )


def failed_tests_of(result, explainer):
    """The FAILED summary lines (``-rf``) of one explainer's tests."""
    return [line for line in result.stdout.lines if line.startswith("FAILED") and f"-{explainer}-" in line]


def as_shipped(pytester, run_suite, *args, k):
    """SA's judged values in the company run (report ``report``) against those the pack ships for
    the same cases, computed in the default run's company (``fresh=False``: the shipped results
    are read, not computed again; within 1e-6: the pack may come from another CPU)."""
    run_suite(*args, "--chaosmining-explainers", "SA", report="alone", k=k, fresh=False)
    company, alone = judged_values(pytester, "report", "SA"), judged_values(pytester, "alone", "SA")
    assert company and alone.keys() == company.keys(), sorted(set(alone) ^ set(company))[:5]
    differ = {k: (alone[k], v) for k, v in company.items() if not _close(alone[k], v)}
    assert not differ, differ


def _close(a, b):
    """Equal, or floats within 1e-6 (NaN equal to NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    return a == b


def judged_values(pytester, report, explainer=None):
    """Every non-cost value recorded (for ``explainer``, or all), keyed by what it measured."""
    return {
        (r["suite"], r["model"], r["explainer"], r["seed"], r["metric"], json.dumps(r["case"], sort_keys=True)): r[
            "value"
        ]
        for r in load_results(pytester, report)["records"]
        if explainer in (None, r["explainer"])
        and r["metric"] not in ("time_ms", "cpu_ms", "peak_mem_mb", "train_seconds")
    }
