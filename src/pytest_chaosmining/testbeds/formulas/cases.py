"""The symbolic suite's cases and their models, shared by the suites that build on them.

A :class:`SymbolicCase` is one trained model (formula × condition × model config
× seed); :func:`.training.trained_model` loads it from the cache or trains it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided, guided_model_id, training_key
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.seam import NamedCase
from pytest_chaosmining.testbeds.formulas.tiers import CONDITION_FIELDS, SYMBOLIC, SymbolicCondition, SymbolicTier

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView

#: the cache namespace of these models: the symbolic suite's (the cost suite's model is one of them)
SUITE = "symbolic"


def symbolic_code(together: bool = False) -> Code:
    """The modules whose source enters the cache key of a symbolic model
    (``together``: one trained in a batched ensemble, whose trainer enters it too)."""
    modules = (
        "pytest_chaosmining.testbeds.formulas.formulas",
        "pytest_chaosmining.testbeds.formulas.data",
        "pytest_chaosmining.testbeds.formulas.models",
        "pytest_chaosmining.core.training.regression",
    )
    return modules + (("pytest_chaosmining.core.training.ensemble",) if together else ())


@dataclass(frozen=True, kw_only=True)
class SymbolicCase(SymbolicCondition, NamedCase):
    """One model of the symbolic suite: a formula in a condition (data, network and
    training), at a seed."""

    reported = (
        "formula", "noise_features", "label_noise", "n_samples", "width", "depth", "dropout", "optimizer", "lr",
        "epochs",
    )  # fmt: skip

    formula: int
    seed: int
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard

    @property
    def model_id(self) -> str:
        """Readable model name, e.g. ``mlp3x100-lr0.001-e1000`` or
        ``mlp3x100-sgd-lr0.01-do0.1-e1000-sg`` (saliency guided)."""
        parts = [f"mlp{self.depth}x{self.width}"]
        if self.optimizer != "adam":
            parts.append(self.optimizer)
        parts.append(f"lr{self.lr:g}")
        if self.dropout:
            parts.append(f"do{self.dropout:g}")
        parts.append(f"e{self.epochs}")
        return guided_model_id("-".join(parts), self.guide)

    condition_id = formatted("f{formula:02d}-nf{noise_features}-ln{label_noise:g}-n{n_samples}")
    stem = formatted("{condition_id}-{model_id}")

    def training_config(self, device_type: str) -> dict[str, Any]:
        """Everything that affects the trained weights (the cache key)."""
        return training_key(SUITE, self, device_type)


def default_condition(tier: SymbolicTier) -> dict[str, Any]:
    """The tier's default condition (the one its bars were calibrated in), by :data:`CONDITION_FIELDS`."""
    return {name: getattr(tier, name) for name in CONDITION_FIELDS}


def swept_fields(tier: SymbolicTier, case: SymbolicCase) -> list[str]:
    """Where ``case``'s condition differs from the tier's default (``noise_features = 0``)."""
    return [
        f"{name} = {getattr(case, name)}"
        for name, value in default_condition(tier).items()
        if getattr(case, name) != value
    ]


def plan_cases(tier: SymbolicTier, seeds: Seeds | None = None, sweeps: list[str] | None = None) -> list[SymbolicCase]:
    """Default condition for every formula and seed, plus the selected one-factor sweeps."""
    base = default_condition(tier)
    variants = [base]
    for factor in sweeps or []:
        if factor not in tier.sweeps:
            raise KeyError(f"no sweep {factor!r} in this tier; available: {sorted(tier.sweeps)}")
        for value in tier.sweeps[factor]:
            variant = {**base, factor: value}
            if variant not in variants:
                variants.append(variant)
    n_seeds = seed_range(tier.seeds, seeds)
    return [SymbolicCase(formula=f, seed=s, **v) for v in variants for f in tier.formulas for s in n_seeds]


@dataclass
class TrainedSymbolicModel:
    """A trained (or cached) model with its data and prediction quality."""

    case: SymbolicCase
    model: Any
    data: Any
    uscore: float
    train_seconds: float


def cost_case(tier: SymbolicTier) -> SymbolicCase:
    """The model the cost suite times explainers on: formula 2 (one predictive
    feature) at the tier's default condition, seed 0 — at the paper tier a
    2,000 × 101 test set, as in ChaosMining Figure 5."""
    return plan_cases(dataclasses.replace(tier, formulas=(2,)), seeds=1)[0]


def planned_cases(run: RunView) -> list[SymbolicCase]:
    """The symbolic cases of the run's tier, seeds and sweeps, one per training mode."""
    return run.plan.per_training(
        plan_cases(SYMBOLIC[run.plan.tier], run.plan.settings.seeds, list(run.plan.settings.sweep))
    )
