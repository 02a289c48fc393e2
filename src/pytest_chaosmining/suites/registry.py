"""The registered suites (the shipped ones and those of entry points): name →
``module:Class`` of the suite's spec, each suite's folder (its module's package,
wherever it is), and what is looked up through them.

A spec (:class:`SuiteSpec`) declares a suite and imports nothing heavy: the tools,
the report writers and the registry's own lookups read it.  Its ``binding`` names
the class that binds it to its heavy half (``module:Class``, a subclass of the
spec, torch at its module's top), which only a run loads (:func:`get_suite`); a
spec without one is its own suite."""

from __future__ import annotations

import functools
import importlib.util
import warnings
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from types import MappingProxyType

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.metrics.catalog import MetricCatalog
from pytest_chaosmining.explainers.context import AttributedShape
from pytest_chaosmining.suite_kit.seam import ModelSuite, Suite, SuiteSpec
from pytest_chaosmining.verdict.thresholds import Thresholds

#: the shipped suites: name (the value of ``--chaosmining-suites``) → ``module:class`` of its
#: :class:`SuiteSpec`, in report order
BUILTIN_SUITES: Mapping[str, str] = MappingProxyType(
    {
        "symbolic": "pytest_chaosmining.suites.symbolic.spec:SymbolicSpec",
        "cost": "pytest_chaosmining.suites.cost.spec:CostSpec",
        "vision": "pytest_chaosmining.suites.vision.spec:VisionSpec",
        "audio": "pytest_chaosmining.suites.audio.spec:AudioSpec",
        "rfe": "pytest_chaosmining.suites.rfe.spec:RfeSpec",
        "saliency": "pytest_chaosmining.suites.saliency.spec:SaliencySpec",
        "iteroar": "pytest_chaosmining.suites.iteroar.spec:IteroarSpec",
        "bam": "pytest_chaosmining.suites.bam.spec:BamSpec",
    }
)
#: the entry-point group a package registers its own suites in (``name = "module:Class"``)
ENTRY_POINT_GROUP = "pytest_chaosmining.suites"


@functools.cache
def registered_suites() -> Mapping[str, str]:
    """Every registered suite, name → ``module:class``: the shipped ones, then those of
    installed packages' entry points (group :data:`ENTRY_POINT_GROUP`), in that order.
    Reading an entry point imports nothing; one that reuses a taken name is left out
    with a warning."""
    found = dict(BUILTIN_SUITES)
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        if entry.name in found:
            warnings.warn(
                f"chaosmining: the suite entry point {entry.name} = {entry.value!r} is left out: "
                f"a suite of that name is registered ({found[entry.name]})",
                stacklevel=2,
                category=ChaosminingWarning,
            )
            continue
        found[entry.name] = entry.value
    return MappingProxyType(found)


SUITES_DIR = Path(__file__).parent  # the shipped suites' folders


def shipped_thresholds(user_file: Path | None = None, own_bars_only: frozenset[str] = frozenset()) -> Thresholds:
    """The registered suites' bars (each folder's ``thresholds.toml``; a suite without
    bars has none), with ``user_file`` (``--chaosmining-thresholds``) merged over them."""
    return Thresholds.load(thresholds_files(), user_file, own_bars_only)


def thresholds_files() -> list[Path]:
    """The registered suites' ``thresholds.toml`` files (a suite without bars has none)."""
    return [path for name in registered_suites() if (path := suite_folder(name) / "thresholds.toml").exists()]


def shapes_of(names: Iterable[str]) -> dict[str, tuple[AttributedShape, ...]]:
    """Suite name → the shapes it attributes, for the registered suites ``names``."""
    return {name: get_spec(name).shapes for name in names}


def metric_catalog() -> MetricCatalog:
    """The metrics every registered suite declares."""
    return MetricCatalog({spec.name: spec.metrics for spec in all_specs()})


def _loaded(entry: str) -> object:
    """An instance of the class ``entry`` (``module:Class``) names, as an entry point loads it."""
    return metadata.EntryPoint(name=entry, value=entry, group=ENTRY_POINT_GROUP).load()()


@functools.cache
def get_spec(name: str) -> SuiteSpec:
    """The spec of the registered suite called ``name``: its declarations, nothing heavy."""
    spec: SuiteSpec = _loaded(registered_suites()[name])  # type: ignore[assignment]
    return spec


@functools.cache
def get_suite(name: str) -> Suite:
    """The registered suite called ``name``, bound to its heavy half (its spec's
    ``binding``, a subclass of the spec; a spec without one is its own suite)."""
    spec = get_spec(name)
    binding = getattr(spec, "binding", None)  # a suite written before specs had bindings is its own
    if binding is None:
        return spec
    suite = _loaded(binding)
    if not isinstance(suite, type(spec)):
        raise TypeError(f"suite {name!r}: its binding {binding} does not subclass its spec {type(spec).__name__}")
    return suite


def get_model_suite(name: str) -> ModelSuite:
    """The registered suite ``name`` as a :class:`ModelSuite` (TypeError if it is not one)."""
    suite = get_suite(name)
    if not all(hasattr(suite, attr) for attr in ("model", "quality", "score", "guided_cases")):
        raise TypeError(f"suite {name!r} does not train models per case")
    return suite  # type: ignore[return-value]


def all_specs() -> list[SuiteSpec]:
    """Every registered suite's spec, in report order."""
    return [get_spec(name) for name in registered_suites()]


def all_suites() -> list[Suite]:
    """Every registered suite bound to its heavy half, in report order (a run's)."""
    return [get_suite(name) for name in registered_suites()]


def suite_folder(name: str) -> Path:
    """The folder of suite ``name``: the package of its registry entry's module (found
    without importing it), wherever it is (the shipped suites: in :data:`SUITES_DIR`)."""
    return _module_folder(registered_suites()[name].partition(":")[0])


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
    """The registered suite whose test module is ``path`` (None: not a suite test): an
    absolute path, or a node id's relative one (whatever it is relative to: its folder
    and file name are the suite's)."""
    path = Path(path)
    name = path.stem.removeprefix("test_chaosmining_")
    if name not in registered_suites():
        return None
    module = suite_test_file(name)
    return name if (path == module if path.is_absolute() else path.parts[-2:] == module.parts[-2:]) else None


def folder_of_suite(path: Path) -> str | None:
    """The registered suite whose folder is ``path`` (None: none)."""
    return next((name for name in registered_suites() if Path(path) == suite_folder(name)), None)


def suite_roots() -> tuple[Path, ...]:
    """The folders that hold the registered suites: :data:`SUITES_DIR` and the
    folder of any suite registered from elsewhere (asked for every path a pytest
    run collects: worked out once per registry content)."""
    return _roots(tuple(registered_suites().values()))


@functools.cache
def _roots(entries: tuple[str, ...]) -> tuple[Path, ...]:
    roots = [SUITES_DIR]
    for entry in entries:
        folder = _module_folder(entry.partition(":")[0])
        if SUITES_DIR not in folder.parents and folder not in roots:
            roots.append(folder)
    return tuple(roots)
