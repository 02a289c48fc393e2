"""The seam every suite implements (:class:`SuiteSpec` what it declares, light;
:class:`Suite` the spec bound to its heavy half; :class:`CheckedSuite` for a suite
whose explainer test runs on the verdict path; :class:`ModelSuite` for the suites that
train models per case, :class:`ModelTestbed` their models as another suite composes
them) and what crosses it (cases, declared checks, scores)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Protocol, SupportsFloat, TypeVar

from pytest_chaosmining.core.metrics.catalog import BarKeyOf, Metric
from pytest_chaosmining.core.records import Record, Recorder
from pytest_chaosmining.explainers.context import AttributedShape
from pytest_chaosmining.reports.reported_suite import ReportedSuite

if TYPE_CHECKING:
    import pytest
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.records import CaseValue
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe
    from pytest_chaosmining.verdict.judge import Check

C = TypeVar("C")

#: a record's case fields
CaseFields = Mapping[str, object]


@dataclass(frozen=True)
class Calibration:
    """What the calibration tool judges in a suite.

    ``judged``: judged metric → the bar key of a record's case fields;
    ``optional``: metrics left out where the control reaches their bar (another
    metric judges there); ``steps``: metrics whose per-seed value moves in
    steps (the step size of a record), judged by an order-statistic rule."""

    judged: dict[str, BarKeyOf] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()
    steps: dict[str, Callable[[CaseFields], float]] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoreCheck:
    """One judged check of a model suite's explainer test, declared once.

    ``metric``: the score's key, the record's metric and the bar's (looked up under
    the suite's :meth:`ModelSuite.bar_key` of the case; declared judged in the
    suite's ``metrics``); ``message``: what a failure says (``{what}`` is the
    explainer on the case, and the score's values fill in by name);
    ``when_present``: judged only where the score holds the metric (a property the
    explainer declares, such as completeness).  Where no bar applies (calibration found
    it too close to chance) the value is recorded and, against a baseline, compared with
    the baseline's where its drop is calibrated."""

    metric: str
    message: str = "{what}"
    when_present: bool = False
    value: str | None = None  # the score's key where it is not the metric's name
    bar: str = "metric"  # "metric": the metric's bar; "quality_gate": the suite's quality gate

    @property
    def source(self) -> str:
        """The score's key the value comes from."""
        return self.value or self.metric


def training_gain_check(score: str, untrained: str) -> ScoreCheck:
    """The check that an explainer depends on the model: its ``training_gain`` (the score on
    the trained model less the score ``untrained`` on an untrained one), named ``score``."""
    return ScoreCheck(
        "training_gain",
        f"{{what}} ({score} on the untrained model {{{untrained}:.3f}}: does the explainer depend on the model?)",
    )


@dataclass(frozen=True)
class DomainPick:
    """What a composing suite (saliency) takes from one model suite: the bar keys of
    its cases (formulas ``f02`` or conditions ``SBFP``), the architecture (None:
    the domain's only one) and fields of that tier's settings to override (guided
    training costs about 3× standard; where ``sizes`` is empty, the standard
    models are shared with that suite through the cache)."""

    keys: tuple[str, ...]
    model: str | None = None
    sizes: dict[str, int] = field(default_factory=dict)


class Case(Protocol):
    """One parameter set of a suite's tests (a model, a chain, a comparison)."""

    @property
    def id(self) -> str: ...
    def explainer_id(self, explainer: str) -> str: ...
    def case_fields(self) -> CaseFields:
        """The fields its records carry (and its bars are looked up by)."""
        ...


class NamedCase:
    """A case's names, for a frozen dataclass case to mix in: its test ids from its
    :attr:`stem` and seed (``<stem>-s<seed>``; an explainer's test ``<stem>-<explainer>-s<seed>``)
    and the fields its records carry, the attributes :attr:`reported` names."""

    seed: int
    #: the attributes (fields or properties) a record of the case carries, in order
    reported: ClassVar[tuple[str, ...]] = ()

    def case_fields(self) -> dict[str, CaseValue]:
        """The fields its records carry (and its bars are looked up by)."""
        return {name: getattr(self, name) for name in self.reported}

    @property
    def stem(self) -> str:
        """What names the case apart from its seed (``f03-nf10-ln0-n10000-mlp3x100-lr0.001-e200``)."""
        raise NotImplementedError

    @property
    def id(self) -> str:
        return f"{self.stem}-s{self.seed}"

    def explainer_id(self, explainer: str) -> str:
        """Test id of ``explainer`` on this case."""
        return f"{self.stem}-{explainer}-s{self.seed}"


class RecordedCase(Case, Protocol):
    """A case as its records name it: a model and a seed."""

    @property
    def model_id(self) -> str: ...

    @property
    def seed(self) -> int: ...
    def case_fields(self) -> Mapping[str, CaseValue]: ...


class SuiteSpec(ReportedSuite, Protocol):
    """What a suite must declare, read without loading anything heavy: the registry, the
    tools and (through :class:`ReportedSuite`: name, headline metric, seeds, sections,
    figures) the report writers use it."""

    @property
    def shapes(self) -> tuple[AttributedShape, ...]:
        """What the suite attributes (domain, task, model kind, input rank): an explainer
        declared for none of them does not run there."""
        ...

    @property
    def case_arg(self) -> str | None:
        """Fixture name of the case in the suite's tests (None: the tests take no case)."""
        ...

    @property
    def metrics(self) -> tuple[Metric, ...]:
        """Every metric the suite records beyond the costs, declared once (direction,
        judged, bar key): the judge, the baseline and the calibration tool read it."""
        ...

    @property
    def calibration(self) -> Calibration:
        """What the calibration tool judges."""
        ...

    @property
    def binding(self) -> str | None:
        """``module:Class`` of the :class:`Suite` that binds this spec to its heavy half
        (a subclass of the spec, loaded only by a run); None: the spec is its own suite."""
        ...

    @property
    def figures_need_models(self) -> bool:
        """Whether :meth:`figures` draws from the run's trained models (the report writer of a
        run is then handed the bound suite; a spec draws only what its records show)."""
        ...

    def sweeps(self, tier: str) -> tuple[str, ...]:
        """The factors ``--chaosmining-sweep`` may vary at ``tier`` (empty: none)."""
        ...

    def plan(self, run: RunView) -> Sequence[Case]:
        """The cases of this run (tier, seeds, data source and training modes from the session)."""
        ...

    def parametrize(self, metafunc: pytest.Metafunc, run: RunView | None) -> None:
        """Parametrise one of the suite's test functions (usually :func:`parametrize_cases`)."""
        ...


class Suite(SuiteSpec, Protocol):
    """A suite as a run uses it: its spec, bound to its heavy half (the spec's
    ``binding``); what its tests score with is :class:`CheckedSuite` and :class:`ModelSuite`."""


@dataclass
class Scored:
    """What an explainer test measured: the scores by metric (the declared checks and
    recorded scores read them; messages fill in from them), records the suite made
    itself (per iteration, per epoch), recorded as they are, and the checks it judges
    beside the declared ones (``further(what)``, ``what`` naming the explainer on the
    case: a model suite's own merit and drift, a comparison's own checks)."""

    values: Mapping[str, object]
    records: list[Record] = field(default_factory=list)
    further: Callable[[str], list[Check]] | None = None


#: what a scoring returns beside its scores, by key: the cost of its first attribution call
#: (a :class:`~pytest_chaosmining.core.metrics.cost.Cost`), the fingerprint of its maps
#: (:data:`~pytest_chaosmining.core.records.FINGERPRINT`, a list per sample) and a
#: score's per-sample values (:func:`samples_of`, which a baseline pairs)
COST = "cost"


def samples_of(metric: str) -> str:
    """The key of a scoring's per-sample values of ``metric``."""
    return f"{metric}_samples"


def number(values: Mapping[str, object], key: str) -> float:
    """The score ``key`` of ``values`` as a float (anything ``float()`` takes: a numpy
    scalar, a one-element tensor; TypeError where it is not a number)."""
    value = values[key]
    if not isinstance(value, SupportsFloat):
        raise TypeError(f"score {key!r} is {type(value).__name__}, not a number")
    return float(value)


def case_record(suite: str, case: RecordedCase, explainer: str, metric: str, value: float) -> Record:
    """A record of ``case`` in ``suite``: its model, seed and reported fields."""
    return Record(suite, case.model_id, explainer, case.seed, metric, float(value), dict(case.case_fields()))


class CheckedSuite(Suite, Protocol):
    """A suite whose explainer test runs on the one path
    (:func:`~pytest_chaosmining.suite_kit.judging.judge_explainer`): it scores, the path
    records and judges what it declares."""

    @property
    def checks(self) -> tuple[ScoreCheck, ...]:
        """The judged checks of the suite's explainer test, in order."""
        ...

    @property
    def recorded(self) -> tuple[str, ...]:
        """The scores its explainer test records beside the checks, where the score holds them."""
        ...

    def bar_key(self, fields: CaseFields) -> str:
        """The key a case's explainer bars are looked up under, from its record fields."""
        ...

    def uncalibrated(self, run: RunView, case: RecordedCase) -> str | None:
        """Why ``case``'s bars were not calibrated for it (a sweep's condition, a training
        mode): its tests record and do not judge; None where they were."""
        ...

    def records(self, case: RecordedCase, explainer: str) -> Recorder:
        """How the explainer test makes a record of a metric on ``case``."""
        ...

    def scored(
        self,
        run: RunView,
        case: RecordedCase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """Skip the test where the case cannot judge, and score the explainer (timed:
        :func:`~pytest_chaosmining.suite_kit.judging.timed_score`; ``record`` makes the
        test's records of a metric).  A model suite plugs in
        :func:`~pytest_chaosmining.suite_kit.judging.model_scored`."""
        ...


class TrainedModel(Protocol):
    """A trained (or cached) model of a model suite, with its case and data."""

    @property
    def model(self) -> torch.nn.Module: ...


#: a model suite's case and trained model
CaseT = TypeVar("CaseT", bound=RecordedCase)
ModelT = TypeVar("ModelT", bound=TrainedModel)


class DeclaredTestbed(Protocol[CaseT]):
    """A testbed as its declarations give it (light): the saliency suite's spec plans its
    comparisons from it."""

    @property
    def name(self) -> str:
        """The model suite's name (its records, its cache namespace, its bars)."""
        ...

    def bar_key_of(self, case: CaseT) -> str:
        """The bar key of ``case`` (its formula or condition)."""
        ...

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[CaseT]:
        """The seed-0 standard cases of ``tier`` that ``pick`` selects."""
        ...


class ModelTestbed(DeclaredTestbed[CaseT], Protocol[CaseT, ModelT]):
    """A testbed's trained models as another suite composes them (the saliency suite its
    three domains; a model suite is one): cases (``CaseT``) are trained models
    (``ModelT``), each scored per explainer."""

    @property
    def quality_metric(self) -> str:
        """The name of :meth:`quality`'s value in records (``uscore``, ``accuracy``)."""
        ...

    @property
    def compared(self) -> tuple[str, ...]:
        """The scores compared between models; the first is the primary one."""
        ...

    def model(self, run: RunView, case: CaseT) -> ModelT:
        """The trained model of ``case`` (memoised, cached on disk)."""
        ...

    def quality(self, model: ModelT) -> float:
        """Prediction quality of ``model``."""
        ...

    def chance(self, model: ModelT) -> float:
        """The primary score of an explainer that knows nothing."""
        ...

    def score(self, run: RunView, model: ModelT, explainer: Explainer) -> dict[str, object]:
        """Every score of ``explainer`` on ``model`` (the testbed's scoring)."""
        ...

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Scores judged on any model of the testbed besides the primary one (with its suite's default bar)."""
        ...

    def train_together(self, run: RunView, cases: Sequence[CaseT]) -> None:
        """Train those of ``cases`` that can share one batched ensemble together,
        where the run asks for ensembles (``--chaosmining-ensemble``); their models
        then load from the cache.  A testbed without ensembles does nothing."""
        ...


class ModelSuite(CheckedSuite, ModelTestbed[CaseT, ModelT], Protocol[CaseT, ModelT]):
    """A suite whose cases are its testbed's trained models scored per explainer
    (symbolic, vision, audio)."""

    @property
    def model_records(self) -> tuple[str, ...]:
        """What its model test records beside the quality: ``train_seconds``, ``params_m``."""
        ...

    @property
    def module_patterns(self) -> bool:
        """Whether its explainers are also checked on the module-pattern networks
        (:mod:`pytest_chaosmining.suite_kit.module_rules`; they take images)."""
        ...

    def unlearned_keys(self, case: CaseT) -> tuple[str, ...]:
        """The keys under which the bars may declare ``case``'s model not expected to
        learn (its test then expects failure below the gate); empty: none."""
        ...

    def probe(self, trained: ModelT, samples: int) -> Probe:
        """The first ``samples`` explained samples of ``trained`` for the own-merit checks
        (:mod:`pytest_chaosmining.suite_kit.merit`)."""
        ...
