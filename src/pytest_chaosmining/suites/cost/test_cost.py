"""ChaosMining cost suite: time and peak memory of each explainer on one
symbolic model (ChaosMining Figure 5), through pytest-benchmark's ``benchmark``
fixture: ``--benchmark-only`` runs these tests alone, ``--benchmark-skip`` skips
them, ``--benchmark-json`` / ``--benchmark-autosave`` carry every explainer's
timings with the suite, case, explainer and peak memory in ``extra_info``.
Where the fixture is disabled (``--benchmark-disable``, or under xdist, with
pytest-benchmark's own warning) the call is timed by hand.  Records, never
asserts, timings."""

from __future__ import annotations

import statistics

import pytest

from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.core.cost import measure
from pytest_chaosmining.attribution_context import tabular_context
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.core.results import Record
from pytest_chaosmining.suites.cost.suite import CostSuite

SUITE = "cost"
COST = CostSuite()
ROUNDS = 5




def test_attribution_cost(chaosmining, explainer_name, benchmark, request):
    """Time and memory of one attribution of the whole test set (recorded in the report)."""
    import torch

    case = COST.case(chaosmining)
    trained = COST.model(chaosmining)
    explainer = chaosmining.explainers[explainer_name]
    inputs = torch.from_numpy(trained.data.x_test).to(chaosmining.device)
    context = tabular_context("cost", trained.data.x_train, chaosmining.device)

    def run():
        return attribute(explainer, trained.model, inputs, 0, context)

    with explainer_failures():
        _, cost = measure(run, chaosmining.device)  # warm-up, memory and validation
        benchmark.group = "chaosmining cost"
        benchmark.extra_info.update(suite=SUITE, case=case.id, explainer=explainer_name, device=str(chaosmining.device),
                                    peak_mem_mb=cost.peak_mem_mb)
        if not benchmark.disabled:
            benchmark.pedantic(run, rounds=ROUNDS, warmup_rounds=0)
            times = [t * 1000 for t in benchmark.stats.stats.data]
        else:  # disabled (--benchmark-disable, xdist): it runs the call once; time by hand
            benchmark(run)
            times = [measure(run, chaosmining.device)[1].time_ms for _ in range(ROUNDS)]
    condition = {**case.condition(), "rows": int(inputs.shape[0]), "features": int(inputs.shape[1])}
    for metric, value in (("time_ms", statistics.median(times)), ("peak_mem_mb", cost.peak_mem_mb)):
        chaosmining.judge.record(request.node, Record(SUITE, case.model_id, explainer_name, case.seed, metric, value, condition))
