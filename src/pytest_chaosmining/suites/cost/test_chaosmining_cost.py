"""ChaosMining cost suite (ChaosMining Figure 5): time, peak memory, consistency
and convergence of each explainer on one symbolic model.

The timing goes through pytest-benchmark's ``benchmark`` fixture, five rounds
after a warm-up (``--benchmark-only`` runs it, ``--benchmark-json`` /
``--benchmark-autosave`` carry it, with the suite, case, explainer and peak
memory in ``extra_info``).  Where the fixture is disabled or absent
(``--benchmark-disable``, ``--benchmark-skip``, ``-p no:benchmark``, or under
xdist with pytest-benchmark's own warning) the rounds are timed by hand.  Records, never asserts, these values; with
``--chaosmining-baseline`` the time and memory are gated against the baseline's.
"""

from __future__ import annotations

from pytest_chaosmining.core.metrics.attribution import consistency
from pytest_chaosmining.core.verdicts.records import Record
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.explainers.context import tabular_context
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suites.cost.suite import SUITE, CostSuite
from pytest_chaosmining.timing import timed

COST = CostSuite()
ROUNDS = 5


def test_attribution_cost(chaosmining, explainer_name, chaosmining_benchmark, request):
    """Time and memory of one attribution of the whole test set, and the
    consistency of its maps (recorded in the report, gated only against a baseline)."""
    import torch

    case = COST.case(chaosmining)
    trained = COST.model(chaosmining)
    explainer = chaosmining.explainers[explainer_name]
    inputs = torch.from_numpy(trained.data.x_test).to(chaosmining.device)
    context = tabular_context(SUITE, trained.data.x_train, chaosmining.device)
    with (
        chaosmining.timer(chaosmining_benchmark, SUITE, case.id, explainer_name, rounds=ROUNDS),
        explainer_failures(request.config),
    ):
        attr, cost = timed(lambda: attribute(explainer, trained.model, inputs, 0, context), chaosmining.device)
    fields = {**case.case_fields(), "rows": int(inputs.shape[0]), "features": int(inputs.shape[1])}
    node, judge = request.node, chaosmining.judge

    def record(metric: str, value: float) -> Record:
        return Record(SUITE, case.model_id, explainer_name, case.seed, metric, float(value), fields)

    judge.record(node, record("consistency", consistency(attr.cpu().numpy(), len(trained.data.truth))))
    judge.record_costs(node, cost, record)
    judge.raise_cost_regressions(node)


def test_convergence(chaosmining, explainer_name, request):
    """FPrec of the explainer on snapshots of the model over its training, and the
    area under that curve per epoch (recorded; the report normalises it to SA)."""
    case = COST.case(chaosmining)
    with explainer_failures(request.config):
        curve = COST.convergence(chaosmining, chaosmining.explainers[explainer_name])
    node = request.node

    def record(metric: str, value: float, **fields: int) -> Record:
        return Record(SUITE, case.model_id, explainer_name, case.seed, metric, value, {**case.case_fields(), **fields})

    for epoch, value in zip(curve.epochs, curve.fprec):
        chaosmining.judge.record(node, record("fprec_epoch", value, epoch=epoch))
    chaosmining.judge.record(node, record("convergence", curve.auc, epochs=curve.epochs[-1]))
