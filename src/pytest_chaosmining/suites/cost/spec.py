"""The cost suite's declarations: its name, the convergence curve's snapshots and their score."""

from __future__ import annotations

from dataclasses import dataclass

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
