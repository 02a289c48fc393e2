"""The IteROAR suite's declarations: its name and reference chain, its cases and their plan, the
code key and what a chain holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds
from pytest_chaosmining.suites.iteroar.tiers import IteroarTier
from pytest_chaosmining.testbeds.digits.cases import plan_cases as vision_cases

if TYPE_CHECKING:
    pass

SUITE = "iteroar"

REFERENCE = "random-pixels"  # name of the reference chain (uniformly random removal)


def iteroar_code() -> Code:
    """The modules whose source enters the cache key of a retrained IteROAR model."""
    return (
        "pytest_chaosmining.testbeds.digits.data",
        "pytest_chaosmining.testbeds.digits.models",
        "pytest_chaosmining.core.training.classification",
        "pytest_chaosmining.suites.iteroar.masks",
    )


@dataclass(frozen=True)
class IteroarCase:
    """One IteROAR setting on one vision case."""

    base: Any  # VisionCase: f_0, the data and the training settings
    iterations: int
    tau: float
    fill: str
    n_retrain: int
    retrain_epochs: int | None  # None: retrain from scratch with the base epochs
    n_explain: int
    batch: int = 500

    @property
    def fraction(self) -> float:
        """Share of the canvas each mask removes (1 − τ)."""
        return round(1.0 - self.tau, 6)

    @property
    def rho(self) -> float:
        """Bound on the cumulative masked area: iterations × (1 − τ)."""
        return round(self.iterations * self.fraction, 6)

    @property
    def model_id(self) -> str:
        """The model the chains start from (f_0's)."""
        return str(self.base.model_id)

    @property
    def seed(self) -> int:
        return int(self.base.seed)

    @property
    def id(self) -> str:
        b = self.base
        return f"{b.condition}-{b.canvas}px-{b.model}-{self.fill}-I{self.iterations}-s{b.seed}"

    def explainer_id(self, explainer: str) -> str:
        return f"{self.id}-{explainer}"

    def case_fields(self) -> dict[str, Any]:
        return {
            "condition": self.base.condition,
            "canvas": self.base.canvas,
            "fill": self.fill,
            "tau": self.tau,
            "rho": self.rho,
        }


def plan_cases(
    tier: IteroarTier,
    vision_tier: Any,
    seeds: Seeds | None = None,
    source: str = "embedded",
    data_dir: str | None = None,
) -> list[IteroarCase]:
    """The tier's chains: each condition × fill × seed on the vision tier's model
    (resized where the IteROAR tier says so)."""
    sized = vision_tier.resized((tier.model,), tier.conditions, tier.vision_sizes)
    return [
        IteroarCase(base, tier.iterations, tier.tau, fill, tier.n_retrain, tier.retrain_epochs, tier.n_explain)
        for base in vision_cases(sized, seeds, source, data_dir)
        for fill in tier.fills
    ]


@dataclass
class ChainResult:
    """What one chain measured (test-set quantities over the first ``n_explain`` images)."""

    accuracy: list[float]
    mmo: float
    mamo: float
    cma: float
    box_share: list[float]  # per removed mask: share of it on the true box
    box_covered: list[float]  # per removed mask: share of the box it covers
    leak_accuracy: float
    leak_random_accuracy: float
    train_seconds: list[float] = field(default_factory=list)
    untrained_box_share: float = float("nan")  # first mask's share on the box, maps of the untrained f_0

    @property
    def training_gain(self) -> float:
        """How much more of the first mask falls on the true box with f_0's maps
        than with the untrained model's: a map that ignores the model gains 0."""
        return self.box_share[0] - self.untrained_box_share
