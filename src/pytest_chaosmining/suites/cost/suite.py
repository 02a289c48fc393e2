"""The cost suite bound to its heavy half (:mod:`.evaluation`): ChaosMining Figure 5 on one
symbolic model, the formulas testbed's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.suites.cost import evaluation
from pytest_chaosmining.suites.cost.spec import SUITE, Convergence, CostSpec
from pytest_chaosmining.testbeds.formulas import run_models
from pytest_chaosmining.testbeds.formulas.cases import TrainedSymbolicModel
from pytest_chaosmining.verdict.judge import explainer_failures

if TYPE_CHECKING:
    import pytest
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView


class CostSuite(CostSpec):
    """The cost suite as a run uses it: its spec, the symbolic model it times, its evaluation."""

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
