"""The cost suite: ChaosMining Figure 5 on one symbolic model.

For every explainer: time and peak memory of one attribution of the test set;
*consistency* (each sample's top-k against the top-k of the dataset's mean
importance, :func:`~pytest_chaosmining.core.metrics.attribution.consistency`); and
*convergence*, the area under the FPrec-versus-epoch curve over snapshots of
the model taken while it trains (the first 300 epochs at most, as the paper),
as the mean FPrec over the curve.  The report normalises both to SA."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.attribution import consistency, fprec
from pytest_chaosmining.core.metrics.catalog import reported
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.core.verdicts.records import Record
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION, tabular_context
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration
from pytest_chaosmining.suites.cost import report
from pytest_chaosmining.suites.registry import get_model_suite
from pytest_chaosmining.testbeds.formulas.cases import (
    SymbolicCase,
    TrainedSymbolicModel,
    cost_case,
    symbolic_code,
    untrained_model,
)
from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.timing import timed

# torch and the package's modules that load it are imported where used: heavy, they wait for --chaosmining.


if TYPE_CHECKING:
    import pytest
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView

SUITE = "cost"
#: the paper's convergence curve spans 300 training epochs; fewer where the tier trains fewer
CONVERGENCE_EPOCHS = 300
#: model snapshots on the convergence curve besides the untrained one
SNAPSHOTS = 10


@dataclass(frozen=True)
class Convergence:
    """FPrec of one explainer at each snapshot epoch, and the area under that curve
    divided by the epochs it spans (the curve's mean FPrec)."""

    epochs: tuple[int, ...]
    fprec: tuple[float, ...]

    @property
    def auc(self) -> float:
        """Trapezoidal area under FPrec over epochs, per epoch."""
        pairs = list(zip(self.epochs, self.fprec))
        area = sum((e1 - e0) * (f0 + f1) / 2 for (e0, f0), (e1, f1) in zip(pairs, pairs[1:]))
        return area / (self.epochs[-1] - self.epochs[0])


def snapshot_epochs(epochs: int) -> tuple[int, ...]:
    """Epoch 0 and :data:`SNAPSHOTS` evenly spaced epochs up to ``min(epochs, 300)``."""
    span = min(epochs, CONVERGENCE_EPOCHS)
    return tuple(sorted({0, *(round(span * (i + 1) / SNAPSHOTS) for i in range(SNAPSHOTS))}))


class CostSuite(SuiteDefaults):
    """Times every explainer on the symbolic suite's formula-2 model; records, never judges."""

    report = report
    name = SUITE
    shapes = (TABULAR_REGRESSION,)
    case_arg = None
    score_metric = None
    metrics = reported("consistency", "convergence", "fprec_epoch")
    calibration = Calibration()

    def seeds(self, tier: str, seeds: Seeds | None) -> range | None:
        return None

    def plan(self, run: RunView) -> list[SymbolicCase]:
        return [self.case(run)]

    def case(self, run: RunView) -> SymbolicCase:
        """The symbolic model the explainers are timed on."""
        return cost_case(SYMBOLIC[run.plan.tier])

    def model(self, run: RunView) -> TrainedSymbolicModel:
        """The trained (cached) model of :meth:`case`."""
        trained = get_model_suite("symbolic").model(run, self.case(run))  # the symbolic suite's model
        assert isinstance(trained, TrainedSymbolicModel)
        return trained

    def snapshots(self, run: RunView) -> list[tuple[int, torch.nn.Module]]:
        """:meth:`case`'s model at each :func:`snapshot_epochs` epoch of its training
        (one training run, cached on disk as one entry), each in eval mode."""
        return run.runtime.memo(("cost-snapshots", self.case(run)), lambda: _snapshots(run, self.case(run)))

    def convergence(self, run: RunView, explainer: Explainer) -> Convergence:
        """FPrec of ``explainer`` on every snapshot (a built-in's reused from the derived cache)."""

        snapshots = self.snapshots(run)
        trained = self.model(run)

        def compute() -> Convergence:
            import torch

            data = trained.data
            inputs = torch.from_numpy(data.x_test).to(run.runtime.device)
            context = tabular_context(SUITE, data.x_train, run.runtime.device)
            scores = [
                fprec(attribute(explainer, model, inputs, 0, context).cpu().numpy(), data.truth)
                for _, model in snapshots
            ]
            return Convergence(tuple(epoch for epoch, _ in snapshots), tuple(scores))

        parts: dict[str, object] = {
            "case": self.case(run).id,
            "weights": weights_digest(*(m for _, m in snapshots)),
        }
        return run.results.evaluated(SUITE, parts, explainer, compute, (Convergence,))


def _snapshots(run: RunView, case: SymbolicCase) -> list[tuple[int, torch.nn.Module]]:
    import torch

    from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor

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
    run: RunView, suite: CostSuite, explainer: str, benchmark: BenchmarkFixture | None, node: pytest.Item, rounds: int
) -> None:
    """Time and memory of one attribution of the whole test set (``rounds`` timed
    rounds after a warm-up) and the consistency of its maps: recorded, gated only
    against a baseline."""
    import torch

    case, trained, call = suite.case(run), suite.model(run), run.explainers[explainer]
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


def record_convergence(run: RunView, suite: CostSuite, explainer: str, node: pytest.Item) -> None:
    """FPrec of the explainer on the snapshots, and the area under that curve per epoch (recorded)."""
    case = suite.case(run)
    with explainer_failures(node.config):
        curve = suite.convergence(run, run.explainers[explainer])

    def record(metric: str, value: float, **fields: int) -> Record:
        return Record(SUITE, case.model_id, explainer, case.seed, metric, value, {**case.case_fields(), **fields})

    for epoch, value in zip(curve.epochs, curve.fprec):
        run.judge.record(node, record("fprec_epoch", value, epoch=epoch))
    run.judge.record(node, record("convergence", curve.auc, epochs=curve.epochs[-1]))
