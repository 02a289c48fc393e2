"""The cost suite's heavy half: the snapshots of the model while it trains, FPrec on each,
and timing one attribution of the test set."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import torch

from pytest_chaosmining.core.metrics.attribution import consistency, fprec
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.explainers.context import tabular_context
from pytest_chaosmining.suites.cost.spec import SUITE, Convergence, snapshot_epochs
from pytest_chaosmining.testbeds.formulas.cases import SymbolicCase, TrainedSymbolicModel, symbolic_code
from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate
from pytest_chaosmining.testbeds.formulas.training import untrained_model
from pytest_chaosmining.timing import timed
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    import pytest
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView


def convergence(
    trained: TrainedSymbolicModel,
    snapshots: list[tuple[int, torch.nn.Module]],
    explainer: Explainer,
    device: torch.device,
) -> Convergence:
    """FPrec of ``explainer`` on the test set of ``trained``'s data at every snapshot."""
    data = trained.data
    inputs = torch.from_numpy(data.x_test).to(device)
    context = tabular_context(SUITE, data.x_train, device)
    scores = [
        fprec(attribute(explainer, model, inputs, 0, context).cpu().numpy(), data.truth) for _, model in snapshots
    ]
    return Convergence(tuple(epoch for epoch, _ in snapshots), tuple(scores))


def snapshots(run: RunView, case: SymbolicCase) -> list[tuple[int, torch.nn.Module]]:
    """``case``'s model at each :func:`~.spec.snapshot_epochs` epoch of one training run
    (cached on disk as one entry), each in eval mode."""
    device = run.runtime.device
    data = generate(SymbolicDataSpec(case.formula, case.noise_features, case.label_noise, case.n_samples, case.seed))
    epochs = snapshot_epochs(case.epochs)

    def build() -> torch.nn.Module:
        return torch.nn.ModuleList(untrained_model(case, data.n_features) for _ in epochs)

    def fit(stack: torch.nn.Module) -> float:
        model = untrained_model(case, data.n_features).to(device)
        slots = dict(zip(epochs, stack))  # type: ignore[call-overload]

        def keep(epoch: int, trained: torch.nn.Module) -> None:
            if epoch in slots:
                slots[epoch].load_state_dict(copy.deepcopy(trained.state_dict()))

        x, y = torch.from_numpy(data.x_train).to(device), torch.from_numpy(data.y_train).to(device)
        settings = RegressionTraining(epochs[-1], case.lr, case.optimizer)
        return train_regressor(model, x, y, settings, seed=case.seed, guide=case.guide, on_epoch=keep)

    config = {**case.training_config(device.type), "snapshots": list(epochs)}
    stack, _ = run.runtime.cache.model(SUITE, config, build, fit, device, symbolic_code())
    return [(epoch, model.eval()) for epoch, model in zip(epochs, stack)]  # type: ignore[call-overload]


def judge_cost(
    run: RunView,
    case: SymbolicCase,
    trained: TrainedSymbolicModel,
    explainer: str,
    benchmark: BenchmarkFixture | None,
    node: pytest.Item,
    rounds: int,
) -> None:
    """Time and memory of one attribution of ``trained``'s whole test set (``rounds`` timed
    rounds after a warm-up) and the consistency of its maps: recorded, gated only
    against a baseline."""
    call = run.explainers[explainer]
    inputs = torch.from_numpy(trained.data.x_test).to(run.runtime.device)
    context = tabular_context(SUITE, trained.data.x_train, run.runtime.device)
    with (
        run.runtime.timer(benchmark, SUITE, case.id, explainer, rounds=rounds),
        explainer_failures(node.config),
    ):
        attr, cost = timed(lambda: attribute(call, trained.model, inputs, 0, context), run.runtime.device)
    fields = {**case.case_fields(), "rows": int(inputs.shape[0]), "features": int(inputs.shape[1])}

    def record(metric: str, value: float) -> Record:
        return Record(SUITE, case.model_id, explainer, case.seed, metric, float(value), fields)

    run.judge.record(node, record("consistency", consistency(attr.cpu().numpy(), len(trained.data.truth))))
    run.judge.record_costs(node, cost, record)
    run.judge.raise_cost_regressions(node)


def record_convergence(run: RunView, case: SymbolicCase, curve: Convergence, explainer: str, node: pytest.Item) -> None:
    """FPrec of the explainer on the snapshots, and the area under that curve per epoch (recorded)."""

    def record(metric: str, value: float, **fields: int) -> Record:
        return Record(SUITE, case.model_id, explainer, case.seed, metric, value, {**case.case_fields(), **fields})

    for epoch, value in zip(curve.epochs, curve.fprec):
        run.judge.record(node, record("fprec_epoch", value, epoch=epoch))
    run.judge.record(node, record("convergence", curve.auc, epochs=curve.epochs[-1]))
