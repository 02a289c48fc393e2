"""The BAM suite's spec (light): relative feature importance between models and inputs
(Yang & Kim, ``papers/bam.txt``), on BAM-style data built from the vision
sources (:mod:`pytest_chaosmining.suites.bam.data`); its cases, the models they train and
their code key.

A :class:`BamCase` (sizes, model, seed, source) trains, through the model
cache: the object model f_o (object labels) and the scene model f_s (scene
labels) on X_{o,s}, and a scene model f_k on each commonality set X^k.

Before anything is scored, the premise is checked on validation data
(:func:`.suite.relative_importance`): removing the object hurts f_o and not f_s,
removing the scene hurts f_s and not f_o.  Then for each explainer:

- MCS = G_obj(f_o) − G_obj(f_s) on X_{o,s}; baseline: the same with each object
  region moved to a random place (the paper's random I_c);
- IDR on f_s over pairs (X_{o,s}, X_{∅,s}); baseline: random regions (≈ 50%);
- IIR on f_s with a functionally neutral patch δ (:func:`bam.neutral_patch`,
  initialised from the object's pixels, t = 10%) — reported, never asserted:
  an explainer that ignores its input is perfectly input-independent;
- MCS_k = G_CF(f_k) − G_CF(f_1.0) on scene-0 images with the CF, beside the
  accuracy each f_k loses when the CF is removed, and their Pearson correlation.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported, retrained
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.explainers.context import IMAGE_CLASSIFICATION
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.classifier import data_source
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, NamedCase, ScoreCheck
from pytest_chaosmining.suites.bam import report
from pytest_chaosmining.suites.bam.data_spec import BamDataSpec
from pytest_chaosmining.suites.bam.tiers import BAM, BamTier, BamTraining

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView

SUITE = "bam"

#: training images a shipped model is re-scored on before use
CHECK_IMAGES = 500


#: the modules whose source enters the cache key of BAM's data
BAM_DATA_CODE: Code = (
    "pytest_chaosmining.suites.bam.data_spec",
    "pytest_chaosmining.suites.bam.data",
    "pytest_chaosmining.testbeds.digits.data",
)


def bam_code() -> Code:
    """The modules whose source enters the cache key of a BAM model."""
    return (
        *BAM_DATA_CODE,
        "pytest_chaosmining.testbeds.digits.models",
        "pytest_chaosmining.core.training.classification",
    )


@dataclass(frozen=True, kw_only=True)
class BamCase(BamTraining, NamedCase):
    """One set of BAM models (sizes × model × seed × source)."""

    reported = ("canvas", "n_train", "source")

    seed: int
    source: str = "embedded"
    data_dir: str | None = None

    model_id = formatted("{model}-e{epochs}")
    stem = formatted("{canvas}px-{model_id}")

    def data_spec(self, kind: str, split: str, k: float = 1.0, scene_class: int | None = None) -> BamDataSpec:
        n = self.n_train if split == "train" else self.n_val
        return BamDataSpec(kind, self.canvas, n, split, self.seed, k, self.source, self.data_dir, scene_class)


def plan_cases(
    tier: BamTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[BamCase]:
    training = {f.name: getattr(tier, f.name) for f in dataclasses.fields(BamTraining)}
    return [BamCase(**training, seed=seed, source=source, data_dir=data_dir) for seed in seed_range(tier.seeds, seeds)]


def model_config(case: BamCase, role: str, device_type: str) -> dict[str, Any]:
    """Everything that affects the weights of ``case``'s ``role`` model (its cache and pack key)."""
    fields = dataclasses.asdict(case)
    fields.pop("ks")
    return {"suite": SUITE, **fields, "role": role, "device": device_type}


@dataclass
class BamModels:
    """The trained models of a case with their validation data and predictions."""

    case: BamCase
    f_o: Any
    f_s: Any
    f_k: dict[float, Any]
    val: Any  # BamData, kind objects
    cf_val: Any  # BamData, kind common, scene class 0, every image with the CF
    accuracy: dict[str, float]  # "<model>/<version>" -> accuracy
    cf_drop: dict[float, float]  # accuracy f_k loses on scene-0 images when the CF is removed
    train_seconds: dict[str, float] = field(default_factory=dict)
    delta: Any = None  # ((n, steps), x + δ, neutral) of the first n no-object images (computed lazily)


def _canvas_key(fields: CaseFields) -> str:
    return f"{fields['canvas']}px"


def _explained(tier: str) -> int:
    """How many validation images BAM explains at ``tier``: the input-independence rate's decisions."""
    return BAM[tier].n_explain


class BamSpec(SuiteDefaults):
    """BAM (Benchmarking Attribution Methods): model contrast (MCS), input
    dependence (IDR) and input independence (IIR) on images with a known common
    feature, each against its random-region baseline."""

    report = report
    binding = "pytest_chaosmining.suites.bam.suite:BamSuite"
    name = SUITE
    shapes = (IMAGE_CLASSIFICATION,)
    case_arg = "bam_case"
    score_metric = "mcs"
    metrics = (
        *judged("mcs_gain", "idr_gain", bar_key=_canvas_key),
        *reported(
            "accuracy",
            "cf_drop",
            "idr",
            "idr_baseline",
            "iir_pairs",
            "mcs",
            "mcs_baseline",
            "mcs_k",
            "mcs_k_corr",
            "premise_holds",
        ),
        *retrained("iir", decisions=_explained),  # its neutral patches: 100 optimiser steps in the run
    )
    calibration = Calibration(judged=calibrated(metrics), optional=frozenset({"idr_gain"}))
    checks = (
        ScoreCheck("mcs_gain", "{what}: MCS {mcs:.3f} against the random-region baseline {mcs_baseline:.3f}"),
        ScoreCheck(
            "idr_gain",
            "{what}: IDR {idr:.3f} against the random-region baseline {idr_baseline:.3f}",
        ),
    )
    recorded = ("mcs", "mcs_baseline", "idr", "idr_baseline", "iir", "iir_pairs", "mcs_k_corr")

    #: the canvas (``32px``): a case's bar key, from its record fields
    bar_key = staticmethod(_canvas_key)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(BAM[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[BamCase]:
        return plan_cases(BAM[run.plan.tier], run.plan.settings.seeds, *data_source("torchvision", run.plan.data_dir))
