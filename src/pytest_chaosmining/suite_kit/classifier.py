"""What the digits and audio testbeds and the vision and audio suites share: classifiers
trained per condition × model × seed, scored by validation accuracy, explained on their
first validation samples.  A testbed subclasses :class:`ClassifierTestbed` and
names its tiers, data source and case planning, and a heavy subclass binds its scoring
(:class:`ClassifierScoring`); a suite's spec subclasses the light testbed and
:class:`ClassifierSuite`, and its suite binds the scoring (its testbed's bound models) and
the example figure drawn from the run's trained models;
:mod:`.classifier_training` trains through the cache."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, Self, TypeVar

from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import (
    STANDARD_PRECISION,
    guided_model_id,
    training_key,
    uncalibrated_training,
)
from pytest_chaosmining.reports.failing_samples import failed_explainers
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import NamedCase

if TYPE_CHECKING:
    import numpy as np
    import torch

    from pytest_chaosmining.core.records import Record
    from pytest_chaosmining.core.training.modes import SaliencyGuided
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe
    from pytest_chaosmining.suite_kit.seam import DomainPick

ModelT = TypeVar("ModelT")


@dataclass(frozen=True)
class ExplainedSizes:
    """How much of a classifier's validation data its scoring explains: the first
    ``n_explain`` samples (IG in internal batches of ``internal_batch_size``), the first
    ``n_check`` of them also on the untrained model (None: all)."""

    n_explain: int
    internal_batch_size: int
    n_check: int | None = None


@dataclass(frozen=True, kw_only=True)
class ClassifierTier:
    """What every classifier suite's tier sets: data and training sizes, the models,
    seeds, explained and checked samples (a guided case replaces some)."""

    n_train: int
    n_val: int
    models: tuple[str, ...]
    epochs: int
    batch_size: int
    lr: float
    seeds: int
    n_explain: int
    internal_batch_size: int
    n_check: int = 32  # samples attributed on the untrained model (model-randomisation check)
    conditions: tuple[str, ...] = ("RBFP", "RBRP", "SBFP", "SBRP")
    #: conditions whose models need more data or epochs to learn: condition → (n_train, epochs)
    longer_training: Mapping[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def explained(self) -> ExplainedSizes:
        """What the scoring of the tier's classifiers explains."""
        return ExplainedSizes(self.n_explain, self.internal_batch_size, self.n_check)

    def training_size(self, condition: str) -> tuple[int, int]:
        """``(n_train, epochs)`` of ``condition``'s models."""
        return self.longer_training.get(condition, (self.n_train, self.epochs))

    def lr_for(self, model: str) -> float:
        """The learning rate ``model`` trains at."""
        return self.lr

    def resized(self, models: tuple[str, ...], conditions: tuple[str, ...], sizes: Mapping[str, int]) -> Self:
        """This tier on ``models`` and ``conditions`` with the fields ``sizes`` names changed
        (a composing suite's pick); a pick that sets ``n_train`` or ``epochs`` sets them
        for every condition (no :attr:`longer_training`)."""
        longer = {} if {"n_train", "epochs"} & set(sizes) else self.longer_training
        return dataclasses.replace(self, models=models, conditions=conditions, longer_training=longer, **sizes)


@dataclass(frozen=True, kw_only=True)
class ClassifierCase(NamedCase):
    """One trained classifier (condition × model × sizes × seed): the fields the vision
    and audio cases share (their cache key with the fields a subclass adds, taken from
    its tier: :attr:`from_tier`), their names and how one is planned from a tier.  A
    subclass says how its sizes read in an id (:attr:`layout_id`)."""

    #: the model cache's namespace of these classifiers
    cache_suite: ClassVar[str]
    #: the case's own fields, set from the tier's attributes of the same names
    from_tier: ClassVar[tuple[str, ...]] = ()
    condition: str
    model: str
    n_train: int
    n_val: int
    epochs: int
    batch_size: int
    lr: float
    seed: int
    source: str = "embedded"
    data_dir: str | None = None
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard
    precision: str = STANDARD_PRECISION  # training arithmetic (core.training.modes.PRECISIONS)

    @classmethod
    def planned(
        cls, tier: ClassifierTier, condition: str, model: str, seed: int, source: str, data_dir: str | None
    ) -> Self:
        """``model`` on ``condition`` at ``seed``, sized and trained as ``tier`` says."""
        n_train, epochs = tier.training_size(condition)
        return cls(
            condition=condition, model=model, n_train=n_train, n_val=tier.n_val, epochs=epochs,
            batch_size=tier.batch_size, lr=tier.lr_for(model), seed=seed, source=source, data_dir=data_dir,
            **{name: getattr(tier, name) for name in cls.from_tier},
        )  # fmt: skip

    @property
    def layout_id(self) -> str:
        """The case's sizes as its id names them (``42px``, ``4ch-4kHz``)."""
        raise NotImplementedError

    @property
    def model_id(self) -> str:
        return guided_model_id(f"{self.model}-e{self.epochs}", self.guide, self.precision)

    stem = formatted("{condition}-{layout_id}-{model_id}")

    def training_config(self, device_type: str) -> dict[str, Any]:
        """Everything that affects the trained weights (the cache key)."""
        return training_key(self.cache_suite, self, device_type)


CaseT = TypeVar("CaseT", bound=ClassifierCase)


@dataclass
class TrainedClassifier(Generic[CaseT]):
    """A trained (or cached) classifier of ``case`` with its validation data, its predictions
    on them, its accuracy and how long it trained."""

    case: CaseT
    model: Any
    val: Any
    predictions: np.ndarray
    accuracy: float
    train_seconds: float


def plan_classifier_cases(
    case: type[CaseT],
    tier: ClassifierTier,
    seeds: Seeds | None = None,
    source: str = "embedded",
    data_dir: str | None = None,
) -> list[CaseT]:
    """Every condition × model × seed of ``tier`` as a ``case``."""
    n_seeds = seed_range(tier.seeds, seeds)
    return [
        case.planned(tier, condition, model, seed, source, data_dir)
        for condition in tier.conditions
        for model in tier.models
        for seed in n_seeds
    ]


class ClassifierScoring(Protocol):
    """A classifier testbed's heavy half: a module that imports torch at its top, bound
    to the testbed by the heavy module that subclasses it (``testbeds/<name>/bound.py``)."""

    #: load a case's classifier from the cache or train it, scored on its validation data
    #: (its recipe's :meth:`~.classifier_training.ClassifierRecipe.trained_model`)
    trained_model: Callable[..., Any]

    def evaluate(
        self, trained: Any, explainer: Explainer, device: torch.device, sizes: ExplainedSizes
    ) -> dict[str, Any]:
        """The testbed's scores of ``explainer`` on ``trained``."""
        ...

    def probe(self, trained: Any, samples: int) -> Probe:
        """The first ``samples`` validation samples of ``trained`` for the own-merit checks."""
        ...


def data_source(disk_source: str, data_dir: str | None) -> tuple[str, str | None]:
    """Where a classifier suite's data comes from: its ``disk_source`` under
    ``--chaosmining-data`` (``data_dir``), else the embedded set."""
    return (disk_source, data_dir) if data_dir else ("embedded", None)


def classifier_model(run: RunView, suite: str, trained_model: Callable[..., ModelT], case: Any) -> ModelT:
    """The classifier of ``case`` (``suite``'s, trained by ``trained_model``), trained at most once
    per run and cached on disk; its predictions reused where the suite's results are."""
    return run.runtime.memo(
        case,
        lambda: trained_model(
            case,
            run.runtime.cache,
            run.runtime.device,
            run.runtime.progress(f"{suite} {case.id}"),
            lambda key, predict: run.results.reused(suite, key, predict),
        ),
    )


class ClassifierTestbed:
    """The shared half of the digits and audio testbeds (classifiers trained per condition
    × model × seed, scored on their validation samples): a testbed subclasses it
    and names its tiers, data source and case planning (light); a heavy subclass
    binds its scoring."""

    quality_metric = "accuracy"
    model_records = ("train_seconds", "params_m")
    #: the model suite's name (``Record.suite``, the cache namespace)
    name: str
    #: the testbed's tiers by name
    tiers: Mapping[str, ClassifierTier]
    #: the source name of data read from ``--chaosmining-data`` (``torchvision``, ``files``)
    disk_source: str
    #: plan the cases of a tier (light): ``(tier, seeds, source, data_dir)`` → cases
    plan_cases: Callable[..., list[Any]]
    #: train or load a case's model, evaluate an explainer, probe (the heavy half, bound by a subclass)
    scoring: ClassifierScoring

    def source(self, data_dir: str | None) -> tuple[str, str | None]:
        """Where data comes from: the testbed's disk source under ``--chaosmining-data``, else the embedded set."""
        return data_source(self.disk_source, data_dir)

    def model(self, run: RunView, case: Any) -> Any:
        """The trained classifier of ``case``, trained at most once (and cached on disk)."""
        return classifier_model(run, self.name, self.scoring.trained_model, case)

    def quality(self, model: Any) -> float:
        """Prediction quality: validation accuracy."""
        return float(model.accuracy)

    def bar_key_of(self, case: Any) -> str:
        """The bar key of ``case`` in the saliency suite: its condition (``SBFP``)."""
        return str(case.condition)

    def score(self, run: RunView, model: Any, explainer: Explainer) -> dict[str, Any]:
        """The testbed's scoring at the session's tier sizes (a built-in's from the derived cache)."""

        sizes = self.tiers[run.plan.tier].explained
        return run.results.evaluated(
            self.name,
            {
                "model": model.case.training_config(run.runtime.device.type),
                "weights": weights_digest(model.model),
                **dataclasses.asdict(sizes),
            },
            explainer,
            lambda: self.scoring.evaluate(model, explainer, run.runtime.device, sizes),
            (Cost,),
        )

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score."""
        return ("training_gain",)

    def probe(self, trained: Any, samples: int) -> Probe:
        """The first ``samples`` validation samples of ``trained``, their predicted
        classes and the runner-up classes, for the own-merit checks."""
        return self.scoring.probe(trained, samples)

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[Any]:
        """Seed-0 standard cases of the picked model and conditions, at the tier's sizes changed by the pick's."""
        models = (pick.model,) if pick.model else self.tiers[tier].models
        sized = self.tiers[tier].resized(models, pick.keys, pick.sizes)
        return self.plan_cases(sized, 1, *self.source(data_dir))

    def train_together(self, run: RunView, cases: Sequence[Any]) -> None:
        """Nothing: the classifiers train one at a time (their batch norm keeps running
        statistics per model, which one stacked ensemble would not reproduce)."""


class ClassifierSuite(ClassifierTestbed, SuiteDefaults):
    """The shared half of the vision and audio suites (see the module docstring)."""

    #: file name of the example figure in the report folder
    example_png: str
    #: the example figure needs the run (its cases' data; their models under ``--chaosmining-figures models``)
    figures_need_models = True

    def example_figure(self, run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record]) -> bool:
        """Draw the example figure of the ``planned`` cases the run's ``records`` hold, the
        samples they failed on among them (False: nothing drawn), from the records or, under
        ``--chaosmining-figures models``, from the cached models: the suite's heavy half,
        bound by the suite (the report writer of a run is handed it)."""
        raise NotImplementedError

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(self.tiers[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[Any]:
        cases = run.plan.per_training(
            self.plan_cases(self.tiers[run.plan.tier], run.plan.settings.seeds, *self.source(run.plan.data_dir))
        )
        precision = run.plan.settings.precision  # standard training only: saliency guided models stay fp32
        return [
            c if precision == STANDARD_PRECISION or c.guide is not None else dataclasses.replace(c, precision=precision)
            for c in cases
        ]

    def uncalibrated(self, run: RunView, case: Any) -> str | None:
        """A training mode other than standard fp32 (the bars were calibrated for that)."""
        return "; ".join(uncalibrated_training(case.guide, case.precision)) or None

    def figures(self, records: list[Record], out_dir: Path, run: RunView | None, every: bool) -> list[Path]:
        """The example figure: under ``every``, or where an explainer's test failed here."""
        path = out_dir / self.example_png
        own = [r for r in records if r.suite == self.name]
        if run is None or not own or not (every or failed_explainers(own)):
            return []  # the examples need the run's data; by default only a failure's
        return [path] if self.example_figure(run, path, self.plan(run), records) else []
