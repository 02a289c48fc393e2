"""Tier settings of the symbolic suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass(frozen=True, kw_only=True)
class SymbolicCondition:
    """The data, network and training of a symbolic model (a case's condition; a tier's
    default one, where its bars were calibrated; a sweep varies one field)."""

    noise_features: int
    label_noise: float
    n_samples: int
    width: int
    depth: int
    dropout: float
    optimizer: str
    lr: float
    epochs: int


#: the fields of a condition, in order
CONDITION_FIELDS = tuple(f.name for f in fields(SymbolicCondition))


@dataclass(frozen=True, kw_only=True)
class SymbolicTier(SymbolicCondition):
    """Default condition, model and training of the symbolic suite in one tier."""

    seeds: int
    formulas: tuple[int, ...] = tuple(range(1, 16))
    #: one-factor variations of the default condition (ChaosMining Figure 4),
    #: run only when selected with ``--chaosmining-sweep``.
    sweeps: dict[str, tuple] = field(default_factory=dict)


FIGURE4_SWEEPS: dict[str, tuple] = {
    "noise_features": (0, 50, 100, 150, 200),
    "label_noise": (0.0, 0.01, 0.02, 0.04, 0.08, 0.16),
    "n_samples": (2000, 5000, 10000, 20000),
    "optimizer": ("adam", "adamw", "rmsprop", "adagrad", "sgd", "asgd"),
    "lr": (1e-4, 1e-3, 1e-2),
    "width": (50, 100, 200, 400),
    "depth": (1, 2, 3, 4, 5),
    "dropout": (0.0, 0.1, 0.2, 0.3),
}

# fmt: off
SYMBOLIC: dict[str, SymbolicTier] = {
    "smoke": SymbolicTier(
        n_samples=2000, noise_features=20, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=1e-2, epochs=150, seeds=1,
        sweeps={"noise_features": (0, 20, 50), "label_noise": (0.01, 0.16)},
    ),
    "ci": SymbolicTier(
        n_samples=6000, noise_features=100, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=3e-3, epochs=400, seeds=2,
        sweeps={"noise_features": (0, 50, 100, 200), "label_noise": (0.01, 0.04, 0.16)},
    ),
    "paper": SymbolicTier(
        n_samples=10000, noise_features=100, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=1e-3, epochs=1000, seeds=5, sweeps=FIGURE4_SWEEPS,
    ),
}
# fmt: on
