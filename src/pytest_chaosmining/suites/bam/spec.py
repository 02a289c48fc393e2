"""The BAM suite's declarations: its name, its cases and their plan, a model's cache key and what
a case's models hold."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.seam import NamedCase
from pytest_chaosmining.suites.bam.data import BamSpec
from pytest_chaosmining.suites.bam.tiers import BamTier, BamTraining

if TYPE_CHECKING:
    pass

SUITE = "bam"

#: training images a shipped model is re-scored on before use
CHECK_IMAGES = 500


def bam_code() -> Code:
    """The modules whose source enters the cache key of a BAM model."""
    return (
        "pytest_chaosmining.suites.bam.data",
        "pytest_chaosmining.testbeds.digits.data",
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

    def spec(self, kind: str, split: str, k: float = 1.0, scene_class: int | None = None) -> Any:
        n = self.n_train if split == "train" else self.n_val
        return BamSpec(kind, self.canvas, n, split, self.seed, k, self.source, self.data_dir, scene_class)


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
