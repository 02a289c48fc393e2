"""What the end-to-end tests of the plugin share: the built-ins a default run scores, conftests
that register cheats, and readers of a run's results."""

import json
from pathlib import Path

from conftest import load_results

from pytest_chaosmining.core import cross_cpu

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
    construction, ``NotApplicable('…')``) once the environment sets ``BROKEN``."""
    return f"""
import os
import pytest

from pytest_chaosmining.explainers import NotApplicable

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


def as_shipped(pytester, run_suite, *args, k, pack=None):
    """SA's judged values in the company run (report ``report``: computed here) against those
    the pack (``pack``, else the shipped one) holds for the same cases, computed in the default
    run's company (``fresh=False``: the shipped results are read, not computed again; from
    ``pack`` into a cache of its own, which holds no result of another pack).  The pack may
    come from another CPU kind: they agree as :mod:`~pytest_chaosmining.core.cross_cpu` states
    (1e-6; a few decisions more where a model trained in the run decides the value)."""
    where = ("--chaosmining-pack", str(pack)) if pack else ()
    cache = pytester.path / f"cache-of-{pack.name}" if pack else None
    run_suite(*args, *where, "--chaosmining-explainers", "SA", report="alone", k=k, fresh=False, cache=cache)
    company, alone = judged_values(pytester, "report", "SA"), judged_values(pytester, "alone", "SA")
    assert company and alone.keys() == company.keys(), sorted(set(alone) ^ set(company))[:5]
    differ = {k: (alone[k], v) for k, v in company.items() if not cross_cpu.agree(alone[k], v, decisions_of(k))}
    assert not differ, differ


def decisions_of(key, tier="smoke"):
    """The evaluation set's size where a model trained in the run decides the value of a
    :func:`judged_values` key at ``tier`` (its suite's declaration), else None."""
    from pytest_chaosmining.suites.registry import get_spec

    suite, metric = key[0], key[4]
    declared = next((m for m in get_spec(suite).metrics if m.name == metric), None)
    return declared.decisions(tier) if declared is not None and declared.decisions else None


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


def another_cpus_pack(pytester, suite, explainer="SA", report="report", tier="smoke"):
    """A copy of the shipped pack as a machine of another CPU kind would have built it from
    what this one computed (the run of report ``report``): each of ``explainer``'s shipped
    results of ``suite`` holds this machine's values, a value a model trained in the run
    decides as far as the project allows another CPU's training to move it (the stated share
    of its evaluation set's decisions falling on the other side of a near tie), every other
    float moved by float noise (1e-8 relative).
    Made on the machine that built the pack, it still differs from that machine's values as
    another CPU's would.  Returns the copy's folder."""
    import gzip
    import shutil

    from pytest_chaosmining.core.storage.pack_location import SHIPPED

    computed = [(k[4], v) for k, v in judged_values(pytester, report, explainer).items() if k[0] == suite]
    here, per_metric = dict(computed), [metric for metric, _ in computed]
    pack = pytester.path / "another-cpus-pack"
    shutil.copytree(SHIPPED, pack)

    def moved(name, value):
        if not isinstance(value, float):
            return value
        decisions = decisions_of((suite, None, None, None, name), tier)
        if decisions is None:
            return value * (1 + 1e-8)
        assert per_metric.count(name) == 1, f"{name}: one value of {explainer} expected, to move from"
        step = cross_cpu.decisions_moved(decisions) / decisions
        return here[name] + step if here[name] + step <= 1 else here[name] - step

    changed = 0
    for entry in (pack / "derived" / suite).glob("*.json.gz"):
        payload = json.loads(gzip.decompress(entry.read_bytes()))
        result = payload["result"]
        if payload["parts"].get("explainer") != explainer or not isinstance(result, dict):
            continue
        if "fields" in result:  # a dataclass (IteROAR's chain)
            result["fields"] = {name: moved(name, value) for name, value in result["fields"].items()}
        elif "__items__" in result:  # a dict (BAM's scores)
            result["__items__"] = [[name, moved(name, value)] for name, value in result["__items__"]]
        else:
            continue
        entry.write_bytes(gzip.compress(json.dumps(payload).encode()))
        changed += 1
    assert changed, f"the pack ships no result of {explainer} in {suite}"
    return pack
