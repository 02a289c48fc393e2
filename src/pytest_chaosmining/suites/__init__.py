"""The suites: one folder each, behind one :class:`Suite` seam, and their registry.

A suite folder holds its data, models, tier settings, cases, evaluation, report
section and figures, thresholds (``thresholds.toml``) and its shipped tests
(``test_chaosmining_<name>.py``: the prefix keeps their node ids apart from a
user's own test files).  Adding a suite is one new folder plus one line in
:data:`REGISTRY`.  This module stays light: the entry module imports it.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, TypeVar

from pytest_chaosmining.attribution_context import AttributedShape
from pytest_chaosmining.core.metric_catalog import KeyOf, Metric, MetricCatalog
from pytest_chaosmining.reports.reported_suite import ReportedSuite

if TYPE_CHECKING:
    import pandas as pd
    import pytest

    from pytest_chaosmining.core.results import Record
    from pytest_chaosmining.core.thresholds import Thresholds
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.session import ChaosminingSession

#: name (the value of ``--chaosmining-suites``) → ``module:class`` of its :class:`Suite`, in report order
REGISTRY: dict[str, str] = {
    "symbolic": "pytest_chaosmining.suites.symbolic.suite:SymbolicSuite",
    "cost": "pytest_chaosmining.suites.cost.suite:CostSuite",
    "vision": "pytest_chaosmining.suites.vision.suite:VisionSuite",
    "audio": "pytest_chaosmining.suites.audio.suite:AudioSuite",
    "rfe": "pytest_chaosmining.suites.rfe.suite:RfeSuite",
    "saliency": "pytest_chaosmining.suites.saliency.suite:SaliencySuite",
    "iteroar": "pytest_chaosmining.suites.iteroar.suite:IteroarSuite",
    "bam": "pytest_chaosmining.suites.bam.suite:BamSuite",
}
SUITES_DIR = Path(__file__).parent

C = TypeVar("C")

#: a record's condition (its fields)
Condition = Mapping[str, object]


@dataclass(frozen=True)
class Calibration:
    """What the calibration tool judges in a suite.

    ``judged``: judged metric → the threshold key of a record's condition;
    ``optional``: metrics left out where the control reaches their bar (another
    metric judges there); ``steps``: metrics whose per-seed value moves in
    steps (the step size of a record), judged by an order-statistic rule."""

    judged: dict[str, KeyOf] = field(default_factory=dict)
    optional: frozenset[str] = frozenset()
    steps: dict[str, Callable[[Condition], float]] = field(default_factory=dict)


@dataclass(frozen=True)
class DomainPick:
    """What a composing suite (saliency) takes from one model suite: the threshold keys of
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


class Suite(ReportedSuite, Protocol):
    """The seam every suite implements; the session, the calibration tool and
    (through :class:`ReportedSuite`: name, headline metric, seeds, sections,
    figures) the report writers use suites only through it."""

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

    def plan(self, session: ChaosminingSession) -> Sequence[Case]:
        """The cases of this run (tier, seeds, data source and training modes from the session)."""
        ...

    def parametrize(self, metafunc: pytest.Metafunc, session: ChaosminingSession | None) -> None:
        """Parametrise one of the suite's test functions (usually :func:`parametrize_cases`)."""
        ...


class TrainedModel(Protocol):
    """A trained (or cached) model of a model suite, with its case and data."""

    @property
    def model(self) -> object: ...


class ModelSuite(Suite, Protocol):
    """A suite whose cases are trained models scored per explainer (symbolic,
    vision, audio); the saliency suite composes these through this seam."""

    @property
    def quality_metric(self) -> str:
        """The name of :meth:`quality`'s value in records (``uscore``, ``accuracy``)."""
        ...

    @property
    def compared(self) -> tuple[str, ...]:
        """The scores compared between models; the first is the primary one."""
        ...

    def model(self, session: ChaosminingSession, case: Case) -> TrainedModel:
        """The trained model of ``case`` (memoised, cached on disk)."""
        ...

    def quality(self, model: TrainedModel) -> float:
        """Prediction quality of ``model``."""
        ...

    def chance(self, model: TrainedModel) -> float:
        """The primary score of an explainer that knows nothing."""
        ...

    def where(self, case: Case) -> str:
        """The threshold key of ``case`` (its formula or condition)."""
        ...

    def score(self, session: ChaosminingSession, model: TrainedModel, explainer: Explainer) -> dict[str, object]:
        """Every score of ``explainer`` on ``model`` (the suite's evaluation)."""
        ...

    def model_checks(self, session: ChaosminingSession) -> tuple[str, ...]:
        """Scores judged on any model of the suite besides the primary one (with the suite's default bar)."""
        ...

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[Case]:
        """The seed-0 standard cases of ``tier`` that ``pick`` selects."""
        ...

    def train_together(self, session: ChaosminingSession, cases: Sequence[Case]) -> None:
        """Train those of ``cases`` that can share one batched ensemble together,
        where the run asks for ensembles (``--chaosmining-ensemble``); their models
        then load from the cache.  A suite without ensembles does nothing."""
        ...


class SuiteDefaults:
    """What most suites do the same way: the one parametrisation, and the report
    section and figures of the folder's ``report`` module."""

    report: ModuleType  # the suite's report module (``sections``, ``FIGURES``)

    def parametrize(self, metafunc: pytest.Metafunc, session: ChaosminingSession | None) -> None:
        parametrize_cases(metafunc, session, self)  # type: ignore[arg-type]

    def sections(self, frame: pd.DataFrame) -> list[str]:
        sections: Callable[[pd.DataFrame], list[str]] = self.report.sections
        return sections(frame)

    def figures(self, records: list[Record], out_dir: Path, session: ChaosminingSession | None) -> list[Path]:
        from pytest_chaosmining.reports.figures import drawn

        return drawn(records, out_dir, self.report.FIGURES)


def shipped_thresholds(user_file: Path | None = None, own_bars_only: frozenset[str] = frozenset()) -> Thresholds:
    """The registered suites' bars (each folder's ``thresholds.toml``; a suite without
    bars has none), with ``user_file`` (``--chaosmining-thresholds``) merged over them."""
    from pytest_chaosmining.core.thresholds import Thresholds

    files = [path for name in REGISTRY if (path := suite_folder(name) / "thresholds.toml").exists()]
    return Thresholds.load(files, user_file, own_bars_only)


def shapes_of(names: Iterable[str]) -> dict[str, tuple[AttributedShape, ...]]:
    """Suite name → the shapes it attributes, for the registered suites ``names``."""
    return {name: get_suite(name).shapes for name in names}


def metric_catalog() -> MetricCatalog:
    """The metrics every registered suite declares."""
    return MetricCatalog({suite.name: suite.metrics for suite in all_suites()})


def names() -> tuple[str, ...]:
    """The registered suites' names, in report order."""
    return tuple(REGISTRY)


@functools.cache
def get_suite(name: str) -> Suite:
    """The registered suite called ``name`` (imported on first use)."""
    module, _, cls = REGISTRY[name].partition(":")
    suite: Suite = getattr(importlib.import_module(module), cls)()
    return suite


def get_model_suite(name: str) -> ModelSuite:
    """The registered suite ``name`` as a :class:`ModelSuite` (TypeError if it is not one)."""
    suite = get_suite(name)
    if not all(hasattr(suite, attr) for attr in ("model", "quality", "score", "guided_cases")):
        raise TypeError(f"suite {name!r} does not train models per case")
    return suite  # type: ignore[return-value]


def all_suites() -> list[Suite]:
    """Every registered suite, in report order."""
    return [get_suite(name) for name in REGISTRY]


def suite_folder(name: str) -> Path:
    """The folder of suite ``name``: the package of its registry entry's module (found
    without importing it), wherever it is (the shipped suites: in :data:`SUITES_DIR`)."""
    return _module_folder(REGISTRY[name].partition(":")[0])


@functools.cache
def _module_folder(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"cannot find the suite module {module!r}")
    return Path(spec.origin).parent


def suite_test_file(name: str) -> Path:
    """The test module of suite ``name`` (``test_chaosmining_<name>.py`` in its folder)."""
    return suite_folder(name) / f"test_chaosmining_{name}.py"


def suite_of(path: Path) -> str | None:
    """The registered suite whose test module is ``path`` (None: not a suite test)."""
    path = Path(path)
    name = path.stem.removeprefix("test_chaosmining_")
    return name if name in REGISTRY and path == suite_test_file(name) else None


def folder_of_suite(path: Path) -> str | None:
    """The registered suite whose folder is ``path`` (None: none)."""
    return next((name for name in REGISTRY if Path(path) == suite_folder(name)), None)


def suite_roots() -> list[Path]:
    """The folders that hold the registered suites: :data:`SUITES_DIR` and the
    folder of any suite registered from elsewhere."""
    roots = [SUITES_DIR]
    for name in REGISTRY:
        folder = suite_folder(name)
        if SUITES_DIR not in folder.parents and folder not in roots:
            roots.append(folder)
    return roots


def in_shard(suite: str, case_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether the case ``case_id`` of ``suite`` belongs to ``shard`` (``(i, n)``: the
    i-th of n; None: every case does).  It follows from the ids alone, so every run,
    on any machine, splits the cases the same way."""
    if shard is None:
        return True
    index, count = shard
    return zlib.crc32(f"{suite}/{case_id}".encode()) % count == index - 1


def sharded(session: ChaosminingSession, suite: str, cases: Sequence[C]) -> list[C]:
    """Those of ``cases`` (of ``suite``) in this run's shard (``--chaosmining-shard``)."""
    return [case for case in cases if in_shard(suite, str(getattr(case, "id")), session.settings.shard)]


def planned(session: ChaosminingSession | None, suite: Suite) -> list[Case]:
    """The suite's cases in this run's shard (none without a session)."""
    return sharded(session, suite.name, suite.plan(session)) if session is not None else []


def parametrize_cases(metafunc: pytest.Metafunc, session: ChaosminingSession | None, suite: Suite) -> None:
    """The one parametrisation of suite tests: over the suite's cases (its
    ``case_arg``) in this run's shard and, where the test takes ``explainer_name``,
    over cases × registered explainers, with the case's ids, the control's
    strict-xfail mark and an ``xdist_group`` per case (with ``--dist loadgroup``
    a model's tests run on one worker).  Without a session (suites collected
    without ``--chaosmining``) every parameter set is empty."""
    import pytest

    cases = planned(session, suite)
    case_arg = suite.case_arg if suite.case_arg in metafunc.fixturenames else None

    def group(case: Case) -> pytest.MarkDecorator:
        return pytest.mark.xdist_group(group_name(suite, case))

    if "explainer_name" in metafunc.fixturenames:
        explainers = session.roster.explainers_in(suite.name) if session is not None else []
        if case_arg is not None:
            params = [
                pytest.param(
                    case, name, id=case.explainer_id(name), marks=[*session.judge.marks_for(name), group(case)]
                )
                for case in cases
                for name in explainers
                if session is not None
            ]
            metafunc.parametrize((case_arg, "explainer_name"), params)
        else:  # the tests of the suite's one case, measured, never judged: no control mark
            metafunc.parametrize(
                "explainer_name",
                [pytest.param(name, marks=[group(case) for case in cases[:1]]) for name in explainers] if cases else [],
            )
    elif case_arg is not None:
        metafunc.parametrize(case_arg, [pytest.param(c, id=c.id, marks=group(c)) for c in cases])


def group_name(suite: Suite, case: Case) -> str:
    """The xdist group of ``case``'s tests: every test of one model runs on one worker."""
    return f"{suite.name}:{case.id}"


def case_groups(session: ChaosminingSession) -> dict[tuple[str, str], str]:
    """(suite, test parameter id) → group, for every test :func:`parametrize_cases`
    gives a group in this run (the ids of a case's tests and of its explainer tests)."""
    groups: dict[tuple[str, str], str] = {}
    for name in session.settings.suites:
        suite = get_suite(name)
        cases = planned(session, suite)
        explainers = session.roster.explainers_in(suite.name)
        for case in cases:
            groups[(suite.name, case.id)] = group_name(suite, case)
            groups.update({(suite.name, case.explainer_id(e)): group_name(suite, case) for e in explainers})
        if cases:  # a suite of one case parametrised by explainer alone (cost)
            for e in explainers:
                groups.setdefault((suite.name, e), group_name(suite, cases[0]))
    return groups
