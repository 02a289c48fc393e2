"""The saliency guided training suite's spec (light): does saliency guided training (Ismail et
al., 2021) do on our ground-truth data what its paper claims?

A :class:`SaliencyComparison` pairs, seed by seed, a model of the symbolic,
vision or audio suite trained the standard way with the same model (same data,
initialisation and schedule) trained saliency-guided.  The standard models are
those suites' own cases, reached through their testbeds (formulas, digits,
audio), so they come from the shared cache.  For each pair
the suite measures prediction quality, training time and every explainer's
score (FPrec, IoU, channel share and top-1 channel hits), and reports the
paired differences (guided − standard) with their spread over seeds.

What the tests assert: the guided model's explanations clear chance by a
margin and (vision, audio) depend on the training (so a random or
model-ignoring explainer fails here too), and, where our measurements show the
paper's claim holds, that the claim holds — prediction quality within
``quality_margin`` of the standard model's, and the listed explainers' scores
not dropping by more than ``claim_tolerance`` on average.
Where the claim does not hold on our data, nothing is asserted about it and the
report says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.metrics.catalog import judged, reported
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.explainers.context import AUDIO_CLASSIFICATION, IMAGE_CLASSIFICATION, TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, DeclaredTestbed
from pytest_chaosmining.suites.saliency import report
from pytest_chaosmining.suites.saliency.tiers import SALIENCY, SaliencyTier
from pytest_chaosmining.testbeds.audio.testbed import AudioTestbed
from pytest_chaosmining.testbeds.digits.testbed import DigitTestbed
from pytest_chaosmining.testbeds.formulas.testbed import FormulaTestbed

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView

SUITE = "saliency"
#: seed of records that summarise all seeds (mean of the paired differences)
ALL_SEEDS = -1


#: the domains compared, each a testbed's declarations by its model suite's name, in report order
#: (the suite scores with the same testbeds bound: its ``TESTBEDS``)
DECLARED_TESTBEDS: dict[str, DeclaredTestbed[Any]] = {
    t.name: t for t in (FormulaTestbed(), DigitTestbed(), AudioTestbed())
}


@dataclass(frozen=True)
class SaliencyComparison:
    """Standard against saliency guided training of one domain case, over ``seeds`` seeds."""

    domain: str  # the domain suite's name
    base: Any  # the domain suite's case (standard training, seed 0)
    seeds: range
    guide: SaliencyGuided
    domain_bar_key: str  # the base case's bar key in its domain (``f02``, ``SBFP``)

    @property
    def bar_key(self) -> str:
        """Bar key: ``symbolic-f02-signed``, ``vision-RBFP-absolute``, ... (the
        masking rule is part of it: the claim may hold for one rule and not the other)."""
        return f"{self.domain}-{self.domain_bar_key}-{'absolute' if self.guide.absolute else 'signed'}"

    @property
    def id(self) -> str:
        return f"{self.bar_key.rsplit('-', 1)[0]}-{self.base.model_id}-{self.guide.id}"

    def explainer_id(self, explainer: str) -> str:
        """Test id of ``explainer`` on this comparison."""
        return f"{self.id}-{explainer}"

    def pairs(self) -> list[tuple[Any, Any]]:
        """(standard case, guided case) per seed."""
        out = []
        for seed in self.seeds:
            standard = dataclasses.replace(self.base, seed=seed, guide=None)
            out.append((standard, dataclasses.replace(standard, guide=self.guide)))
        return out

    @property
    def model_id(self) -> str:
        """The domain case's model."""
        return str(self.base.model_id)

    @property
    def seed(self) -> int:
        """Every seed of the comparison (:data:`ALL_SEEDS`)."""
        return ALL_SEEDS

    def case_fields(self) -> dict[str, Any]:
        return {"domain": self.domain, "comparison": self.bar_key, "training": self.guide.id}


def plan_cases(
    tier_name: str, tier: SaliencyTier, guide: SaliencyGuided, seeds: Seeds | None = None, data_dir: str | None = None
) -> list[SaliencyComparison]:
    """The tier's comparisons of standard against ``guide``-d training, built on
    the same tier's cases of each domain suite (resized where the saliency tier says so)."""
    n_seeds = seed_range(tier.seeds, seeds)
    if len(n_seeds) < 1:
        raise ValueError("the saliency suite needs at least one seed")
    comparisons = []
    for domain, suite in DECLARED_TESTBEDS.items():
        for case in suite.guided_cases(tier_name, tier.picks[domain], data_dir):
            comparisons.append(SaliencyComparison(domain, case, n_seeds, guide, suite.bar_key_of(case)))
    return comparisons


class SaliencySpec(SuiteDefaults):
    """Saliency guided training (Ismail et al., 2021) against standard training of
    the symbolic, vision and audio suites' models, seed by seed."""

    report = report
    binding = "pytest_chaosmining.suites.saliency.suite:SaliencySuite"
    name = SUITE
    shapes = (TABULAR_REGRESSION, IMAGE_CLASSIFICATION, AUDIO_CLASSIFICATION)
    case_arg = "comparison"
    #: no declared checks: its scoring hands the path its own (per pair, and the claim)
    checks = ()
    score_metric = "fprec"  # the symbolic comparisons' FPrec, in the terminal summary
    #: the scores of the three domains, each judged per model and as a mean change over seeds
    metrics = (
        *judged(
            "fprec",
            "iou",
            "channel_share",
            "training_gain",
            "fprec_change_mean",
            "iou_change_mean",
            "channel_share_change_mean",
            "uscore_change_mean",
            "accuracy_change_mean",
        ),
        *reported(
            "uscore",
            "accuracy",
            "box_share",
            "top1_hit",
            "fprec_change",
            "iou_change",
            "box_share_change",
            "channel_share_change",
            "top1_hit_change",
            "uscore_change",
            "accuracy_change",
        ),
    )
    calibration = Calibration()

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(SALIENCY[tier].seeds, seeds)

    def bar_key(self, fields: CaseFields) -> str:
        """The comparison (``symbolic-f02-signed``)."""
        return str(fields["comparison"])

    def plan(self, run: RunView) -> list[SaliencyComparison]:
        return plan_cases(
            run.plan.tier,
            SALIENCY[run.plan.tier],
            run.plan.settings.guide(),
            run.plan.settings.seeds,
            run.plan.data_dir,
        )
