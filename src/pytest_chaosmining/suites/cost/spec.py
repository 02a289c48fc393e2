"""The cost suite's spec (light): what it records, its name, the convergence curve's
snapshots and their score.

For every explainer: time and peak memory of one attribution of the test set;
*consistency* (each sample's top-k against the top-k of the dataset's mean
importance, :func:`~pytest_chaosmining.core.metrics.attribution.consistency`); and
*convergence*, the area under the FPrec-versus-epoch curve over snapshots of
the model taken while it trains (the first 300 epochs at most, as the paper),
as the mean FPrec over the curve.  The report normalises both to SA."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.catalog import reported
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration
from pytest_chaosmining.suites.cost import report
from pytest_chaosmining.testbeds.formulas.cases import SymbolicCase, cost_case
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

if TYPE_CHECKING:
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


class CostSpec(SuiteDefaults):
    """Times every explainer on the symbolic suite's formula-2 model; records, never judges."""

    report = report
    binding = "pytest_chaosmining.suites.cost.suite:CostSuite"
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
