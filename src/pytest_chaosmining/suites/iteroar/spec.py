"""The IteROAR suite's spec (light): remove what the explainer calls important, retrain, repeat
(Palacio et al., ``papers/iteroar.txt``), on the vision suite's data; its name and
reference chain, its cases and their plan, the code key and what a chain holds.

An :class:`IteroarCase` is one chain setting (vision condition, model, τ,
iterations, fill, retraining).  A chain for one explainer runs::

    f_0 = the vision suite's model (shared through the cache)
    for i in 0 .. I-1:
        m_i = top (1 - τ) of the explainer's maps of f_i on the train and test images of D_i
        D_{i+1} = D_i with m_i filled (zeros or the masked pixels' mean)
        f_{i+1} = f_i retrained on D_{i+1}   (cached, keyed by the masked data itself)
    m_I = the maps of f_I on the test images (a probe: nothing is removed with it)

and reports the test accuracy of f_0 … f_I, MMO and MAMO over m_0 … m_I, the
cumulative masked area of m_0 … m_{I-1}, the share of each removed mask that
fell on the true foreground box, and the mask-leakage check on m_0.

A reference chain removes uniformly random pixels (same sizes, same seeds).
The judged property: salient areas are removed, so accuracy falls faster
than under random removal.  Random-position conditions are used by default:
where the foreground sits in a fixed place, a map that ignores the model
(a centre prior) would remove it too.

Retraining: ``retrain_epochs`` epochs warm-started from ``f_i`` on the first
``n_retrain`` training images (smoke, ci), or from scratch on all of them
(paper, as IteROAR).  The model cache key holds a digest of the masked
training images, so it changes exactly when the explainer's masks change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported, retrained
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.explainers.context import IMAGE_CLASSIFICATION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suites.iteroar import report
from pytest_chaosmining.suites.iteroar.tiers import ITEROAR, IteroarTier
from pytest_chaosmining.testbeds.digits.cases import plan_cases as vision_cases
from pytest_chaosmining.testbeds.digits.cases import vision_source
from pytest_chaosmining.testbeds.digits.tiers import VISION

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView

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


def _explained(tier: str) -> int:
    """How many test images a chain explains at ``tier``: the leakage classifiers' decisions."""
    return ITEROAR[tier].n_explain


def _chain_key(fields: CaseFields) -> str:
    return f"{fields['condition']}-{fields['fill']}"


class IteroarSpec(SuiteDefaults):
    """IteROAR: remove what each explainer marks, retrain, and compare the accuracy
    drop with random removal; the first mask must land on the true box more with
    the trained model's maps than with the untrained model's."""

    report = report
    binding = "pytest_chaosmining.suites.iteroar.suite:IteroarSuite"
    name = SUITE
    shapes = (IMAGE_CLASSIFICATION,)
    case_arg = "iteroar_case"
    score_metric = "drop_gain"
    metrics = (
        *judged("drop_gain", "training_gain", bar_key=_chain_key),
        *judged("accuracy", "fresh_share"),
        *reported("accuracy_drop", "box_removed", "cma", "mamo", "mask_on_box", "mmo"),
        *retrained("leak_accuracy", "leak_random_accuracy", decisions=_explained),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("drop_gain", "{what}: accuracy {curve} against random removal {reference_curve}"),
        ScoreCheck(
            "training_gain",
            "{what}: first mask on the true box {first_on_box:.3f} with f_0's maps against "
            "{untrained_box_share:.3f} with the untrained model's",
        ),
    )

    #: the condition and fill (``SBFP-zero``): a case's bar key, from its record fields
    bar_key = staticmethod(_chain_key)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(ITEROAR[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[IteroarCase]:
        return plan_cases(
            ITEROAR[run.plan.tier],
            VISION[run.plan.tier],
            run.plan.settings.seeds,
            *vision_source(run.plan.data_dir),
        )
