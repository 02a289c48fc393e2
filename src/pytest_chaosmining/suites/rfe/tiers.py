"""Tier settings of the rfe suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RFETier:
    """Datasets and training of the RFEwNA suite in one tier (ChaosMining §4, A.5).

    Regression: formulas with ``noise_features`` noise columns (the reference:
    10–14 with 150).  Classification: a generated set (``clf_*``) and, when its
    CSV is on disk, Santander (balanced rows capped at ``santander_rows``,
    ``santander_select`` features kept).  Every round trains with Adam at ``lr``.
    """

    formulas: tuple[int, ...]
    n_samples: int
    noise_features: int
    epochs: int
    lr: float
    seeds: int
    clf_samples: int
    clf_features: int
    clf_informative: int
    clf_epochs: int
    clf_batch_size: int | None
    santander_rows: int = 6016
    santander_select: int = 23
    step: float = 0.5


# fmt: off
RFE_TIERS: dict[str, RFETier] = {
    "smoke": RFETier(formulas=(10, 12), n_samples=1500, noise_features=150, epochs=150, lr=1e-2, seeds=1,
                     clf_samples=1000, clf_features=100, clf_informative=5, clf_epochs=150, clf_batch_size=None,
                     santander_rows=2000),
    "ci": RFETier(formulas=(10, 11, 12, 13, 14), n_samples=3000, noise_features=150, epochs=300, lr=3e-3, seeds=1,
                  clf_samples=2000, clf_features=100, clf_informative=6, clf_epochs=300, clf_batch_size=None,
                  santander_rows=6016),
    "paper": RFETier(formulas=(10, 11, 12, 13, 14), n_samples=10000, noise_features=150, epochs=1000, lr=1e-3,
                     seeds=5, clf_samples=6016, clf_features=369, clf_informative=10, clf_epochs=500,
                     clf_batch_size=1000, santander_rows=6016),
}
# fmt: on
