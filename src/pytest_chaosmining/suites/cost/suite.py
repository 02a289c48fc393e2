"""The cost suite: ChaosMining Figure 5 on one symbolic model.

For every explainer: time and peak memory of one attribution of the test set;
*consistency* (each sample's top-k against the top-k of the dataset's mean
importance, :func:`~pytest_chaosmining.core.metrics.attribution.consistency`); and
*convergence*, the area under the FPrec-versus-epoch curve over snapshots of
the model taken while it trains (the first 300 epochs at most, as the paper),
as the mean FPrec over the curve.  The report normalises both to SA."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.catalog import reported
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration
from pytest_chaosmining.suites.cost import report
from pytest_chaosmining.suites.cost.spec import SUITE, Convergence
from pytest_chaosmining.testbeds.formulas.cases import (
    SymbolicCase,
    TrainedSymbolicModel,
    cost_case,
)
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    import pytest
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suites.cost import evaluation
    from pytest_chaosmining.testbeds.formulas import run_models
else:  # the heavy halves, loaded on first use
    evaluation = lazy_module("pytest_chaosmining.suites.cost.evaluation")
    run_models = lazy_module("pytest_chaosmining.testbeds.formulas.run_models")


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
        return run_models.run_model(run, self.case(run))  # trained once for the symbolic suite and this one

    def snapshots(self, run: RunView) -> list[tuple[int, torch.nn.Module]]:
        """:meth:`case`'s model at each :func:`~.spec.snapshot_epochs` epoch of its training
        (one training run, cached on disk as one entry), each in eval mode."""
        return run.runtime.memo(("cost-snapshots", self.case(run)), lambda: evaluation.snapshots(run, self.case(run)))

    def convergence(self, run: RunView, explainer: Explainer) -> Convergence:
        """FPrec of ``explainer`` on every snapshot (a built-in's reused from the derived cache)."""

        snapshots = self.snapshots(run)
        trained = self.model(run)

        def compute() -> Convergence:
            return evaluation.convergence(trained, snapshots, explainer, run.runtime.device)

        parts: dict[str, object] = {
            "case": self.case(run).id,
            "weights": weights_digest(*(m for _, m in snapshots)),
        }
        return run.results.evaluated(SUITE, parts, explainer, compute, (Convergence,))

    def judge_cost(
        self, run: RunView, explainer: str, benchmark: BenchmarkFixture | None, node: pytest.Item, rounds: int
    ) -> None:
        """Time and memory of one attribution of :meth:`model`'s test set and the consistency
        of its maps (:func:`~pytest_chaosmining.suites.cost.evaluation.judge_cost`)."""
        evaluation.judge_cost(run, self.case(run), self.model(run), explainer, benchmark, node, rounds)

    def record_convergence(self, run: RunView, explainer: str, node: pytest.Item) -> None:
        """FPrec of ``explainer`` on the snapshots and the area under that curve per epoch (recorded)."""
        with explainer_failures(node.config):
            curve = self.convergence(run, run.explainers[explainer])
        evaluation.record_convergence(run, self.case(run), curve, explainer, node)
