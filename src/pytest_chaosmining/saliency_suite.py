"""The saliency guided training suite: does saliency guided training (Ismail et
al., 2021) do on our ground-truth data what its paper claims?

A :class:`SaliencyComparison` pairs, seed by seed, a model of the symbolic,
vision or audio suite trained the standard way with the same model (same data,
initialisation and schedule) trained saliency-guided.  The standard models are
the other suites' own cases, so they come from the shared cache.  For each pair
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
from typing import Any

from .tiers import SaliencyTier, Seeds, seed_range
from .training_modes import SaliencyGuided

SUITE = "saliency"
#: the metrics compared per domain; the first is the one the claim is judged on
COMPARED = {"symbolic": ("fprec",), "vision": ("iou", "box_share"), "audio": ("channel_share", "top1_hit")}
QUALITY = {"symbolic": "uscore", "vision": "accuracy", "audio": "accuracy"}


@dataclass(frozen=True)
class SaliencyComparison:
    """Standard against saliency guided training of one domain case, over ``seeds`` seeds."""

    domain: str
    base: Any  # the domain suite's case (standard training, seed 0)
    seeds: range
    guide: SaliencyGuided

    @property
    def key(self) -> str:
        """Threshold key: ``symbolic-f02-signed``, ``vision-RBFP-absolute``, ... (the
        masking rule is part of it: the claim may hold for one rule and not the other)."""
        where = f"f{self.base.formula:02d}" if self.domain == "symbolic" else self.base.condition
        return f"{self.domain}-{where}-{'absolute' if self.guide.absolute else 'signed'}"

    @property
    def id(self) -> str:
        return f"{self.key.rsplit('-', 1)[0]}-{self.base.model_id}-{self.guide.id}"

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

    def condition_fields(self) -> dict[str, Any]:
        return {"domain": self.domain, "comparison": self.key, "training": self.guide.id}


def plan_cases(tier_name: str, tier: SaliencyTier, guide: SaliencyGuided, seeds: Seeds | None = None,
               vision_source: tuple[str, str | None] = ("embedded", None),
               audio_source: tuple[str, str | None] = ("embedded", None)) -> list[SaliencyComparison]:
    """The tier's comparisons of standard against ``guide``-d training, built on
    the same tier's symbolic, vision and audio cases (vision and audio resized
    where the saliency tier says so)."""
    from . import audio_suite, symbolic_suite, vision_suite
    from .tiers import AUDIO, SYMBOLIC, VISION

    n_seeds = seed_range(tier.seeds, seeds)
    if len(n_seeds) < 1:
        raise ValueError("the saliency suite needs at least one seed")
    symbolic = [c for c in symbolic_suite.plan_cases(SYMBOLIC[tier_name], 1) if c.formula in tier.formulas]
    vision_tier = dataclasses.replace(VISION[tier_name], models=(tier.vision_model,),
                                      conditions=tier.vision_conditions, **tier.vision_sizes)
    audio_tier = dataclasses.replace(AUDIO[tier_name], models=(tier.audio_model,), conditions=tier.audio_conditions,
                                     **tier.audio_sizes)
    vision = vision_suite.plan_cases(vision_tier, 1, *vision_source)
    audio = audio_suite.plan_cases(audio_tier, 1, *audio_source)
    return [SaliencyComparison(domain, case, n_seeds, guide)
            for domain, cases in (("symbolic", symbolic), ("vision", vision), ("audio", audio))
            for case in cases]


def trained(context: Any, domain: str, case: Any) -> Any:
    """The (cached) trained model of a domain case."""
    return {"symbolic": context.symbolic_model, "vision": context.vision_model,
            "audio": context.audio_model}[domain](case)


def quality(domain: str, model: Any) -> float:
    """Prediction quality: UScore (symbolic) or validation accuracy."""
    return float(model.uscore if domain == "symbolic" else model.accuracy)


def evaluate(context: Any, domain: str, model: Any, explainer: Any) -> dict[str, Any]:
    """The domain suite's measurement of ``explainer`` on ``model``."""
    from . import audio_suite, symbolic_suite, vision_suite

    if domain == "symbolic":
        return symbolic_suite.evaluate(model, explainer, context.device)
    module, tier = (vision_suite, context.vision_tier) if domain == "vision" else (audio_suite, context.audio_tier)
    return module.evaluate(model, explainer, context.device, tier.n_explain, tier.internal_batch_size, tier.n_check)


def chance(domain: str, model: Any) -> float:
    """The primary score of an explainer that knows nothing: FPrec k / features,
    the foreground's 1/49 of the canvas, the speech channel's 1 / channels."""
    if domain == "symbolic":
        return len(model.data.truth) / model.data.n_features
    if domain == "vision":
        return 1 / 49
    return 1 / model.case.channels


def guided_bars(context: Any, domain: str, model: Any) -> dict[str, float]:
    """The bars every guided model's explanations must clear (metric → threshold):
    the primary score at least ``min_above_chance`` above chance, and for vision
    and audio the domain suite's model-randomisation check.  A random or
    model-ignoring explainer fails them; a worse-than-standard one need not
    (that is the claim, judged separately where it holds)."""
    section = context.thresholds.section(SUITE, context.settings.tier)
    bars = {COMPARED[domain][0]: chance(domain, model) + float(section["min_above_chance"])}
    if domain != "symbolic":
        bars["training_gain"] = context.thresholds.default(domain, context.settings.tier, "training_gain")
    return bars
