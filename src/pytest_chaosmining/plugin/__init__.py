"""The pytest11 entry point: options, hooks and collection only.

Nothing heavy is imported here; without ``--chaosmining`` the plugin adds its
options and does nothing else.  The public fixtures live in
:mod:`pytest_chaosmining.plugin.fixtures`.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Generator
from pathlib import Path

import pytest

import pytest_chaosmining.plugin.hookspecs as hookspecs
from pytest_chaosmining.benchmarking import UNUSED_FILTER, BenchmarkFolder, compact_table, unskip
from pytest_chaosmining.core.records import SHIPPED_TEST_PROPERTY
from pytest_chaosmining.plugin import fixtures
from pytest_chaosmining.plugin.collector import ResultCollector, send_trained_on
from pytest_chaosmining.plugin.fixtures import SESSION_KEY
from pytest_chaosmining.plugin.scheduling import CaseGroupScheduling, case_groups
from pytest_chaosmining.reports.report_folder import clear_previous, write_stopped
from pytest_chaosmining.run.quick_exit import freeze_heap_at_exit
from pytest_chaosmining.run.session import ChaosminingSession
from pytest_chaosmining.run.threads import one_intra_op_thread
from pytest_chaosmining.settings import Settings, add_options, option_label, resolve
from pytest_chaosmining.suites import (
    all_specs,
    folder_of_suite,
    get_spec,
    registered_suites,
    suite_of,
    suite_roots,
    thresholds_files,
)
from pytest_chaosmining.verdict.baseline_check import BaselineCheck

SETTINGS_KEY = pytest.StashKey[Settings]()
BENCHMARK_FOLDER_KEY = pytest.StashKey[BenchmarkFolder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser, tuple(registered_suites()))


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        _configure(config)
    except pytest.UsageError as exc:
        _stopped(config, str(exc))
        raise


def _stopped(config: pytest.Config, reason: str) -> None:
    """A chaosmining run that stops with a usage error: its report folder keeps none of
    the previous run's findings, and says why in ``stopped.json``."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if hasattr(config, "workerinput") or not (settings.enabled if settings else config.getoption("chaosmining")):
        return
    folder = settings.report if settings is not None else None
    if folder is None and (raw := config.getoption("chaosmining_report", None)):
        folder = Path(config.invocation_params.dir, str(raw))
    if folder is not None and not folder.is_file():
        clear_previous(folder, settings.baseline if settings is not None else None)
        write_stopped(folder, reason)


def _configure(config: pytest.Config) -> None:
    settings = resolve(config, tuple(registered_suites()), thresholds_files())
    config.stash[SETTINGS_KEY] = settings
    folder = BenchmarkFolder.before_run(config)
    if folder is not None:
        config.stash[BENCHMARK_FOLDER_KEY] = folder
    config.pluginmanager.register(fixtures, "chaosmining-fixtures")
    _register_markers(config)
    if not settings.enabled:
        return
    compact_table(config)

    freeze_heap_at_exit()

    session = ChaosminingSession(config, settings)
    try:
        _ = session.runtime.device
    except RuntimeError as exc:
        raise pytest.UsageError(f"{option_label(config, 'device')}: {exc}") from None
    config.stash[SESSION_KEY] = session
    _add_suite_paths(config)
    if not hasattr(config, "workerinput"):
        collector = ResultCollector(config, settings, session, all_specs)
        config.pluginmanager.register(collector, "chaosmining-results")
        if settings.baseline is not None:
            try:
                baseline = session.baseline
            except ValueError as exc:
                raise pytest.UsageError(f"{option_label(config, 'baseline')}: {exc}") from None
            assert baseline is not None
            collector.baseline_check = BaselineCheck(baseline, session.baseline_scope())
        if settings.report is not None and not settings.report.is_file():
            clear_previous(settings.report, settings.baseline)  # the baseline is read by now


def pytest_sessionstart(session: pytest.Session) -> None:
    """On the controller, before anything runs: the explainers and sweeps a chaosmining
    run names must exist (the conftests are loaded by now), else a usage error."""
    try:
        _check_named(session)
    except pytest.UsageError as exc:
        _stopped(session.config, str(exc))
        raise


def _check_named(session: pytest.Session) -> None:
    config = session.config
    chaosmining = config.stash.get(SESSION_KEY, None)
    if chaosmining is None or hasattr(config, "workerinput"):
        return
    settings = chaosmining.settings
    chaosmining.roster.check_named(option_label(config, "explainers"))
    swept = {factor for name in settings.suites for factor in get_spec(name).sweeps(settings.tier)}
    if unknown := [factor for factor in settings.sweep if factor not in swept]:
        allowed = f"choose from {', '.join(sorted(swept))}" if swept else "none of the selected suites sweeps"
        label = option_label(config, "sweep")
        raise pytest.UsageError(f"{label}: unknown factor(s) {', '.join(unknown)} at tier {settings.tier}; {allowed}")


#: the prefix of the suites' markers (``chaosmining_vision``)
MARKER_PREFIX = "chaosmining_"
#: the marker naming a test's explainer: ``chaosmining_explainer(name="SA")``
EXPLAINER_MARKER = "chaosmining_explainer"


def _register_markers(config: pytest.Config) -> None:
    """The plugin's markers, all in its namespace, listed by ``pytest --markers``
    whether or not the suites run: ``chaosmining``, ``chaosmining_<suite>`` and
    ``chaosmining_explainer(name)``."""
    config.addinivalue_line("markers", "chaosmining: a shipped ChaosMining conformance test (set by the plugin)")
    for name in registered_suites():
        config.addinivalue_line(
            "markers", f"{MARKER_PREFIX}{name}: a test of the chaosmining {name} suite (set by the plugin)"
        )
    config.addinivalue_line(
        "markers",
        f"{EXPLAINER_MARKER}(name): a chaosmining test of the explainer name; select with "
        f"-m \"{EXPLAINER_MARKER}(name='SA')\" (set by the plugin)",
    )


def _add_suite_paths(config: pytest.Config) -> None:
    """Add the folders of the registered suites to the collection arguments (once
    each), unless the arguments already name something inside one (one suite
    file, one test's node id: that test alone runs); :func:`pytest_ignore_collect`
    drops the suites that were not selected."""
    present = [Path(str(a).split("::")[0]).resolve() for a in config.args]
    roots = suite_roots()
    resolved = [root.resolve() for root in roots]
    if any(p == root or root in p.parents for p in present for root in resolved):
        return
    config.args.extend(str(root) for root in roots)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """One line on what a chaosmining run judges: tier, suites, device, cache, baseline."""
    session = config.stash.get(SESSION_KEY, None)
    if session is None:
        return None
    settings = session.settings
    cache = settings.cache or "the user cache directory"
    baseline = f", baseline {settings.baseline}" if settings.baseline else ""
    return [
        f"chaosmining: tier {settings.tier}, suites {','.join(settings.suites)}, device {session.runtime.device}, "
        f"cache {cache}{baseline}"
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """A shipped suite test runs with one intra-op thread (xdist-friendly, results
    independent of the thread count); the user's own tests keep their setting
    (the models they ask for through ``chaosmining_model`` train with one thread too)."""
    if SESSION_KEY not in item.config.stash or suite_of(Path(str(item.path))) is None:
        return (yield)

    with one_intra_op_thread():
        return (yield)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Inside the suites' folders: only the selected suites' test modules, and only
    with ``--chaosmining``."""
    if not any(root == collection_path or root in collection_path.parents for root in suite_roots()):
        return None
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.enabled:
        return True
    if collection_path.is_dir():
        suite = folder_of_suite(collection_path)
        return suite is not None and suite not in settings.suites or None
    suite = suite_of(collection_path)
    return suite is None or suite not in settings.suites or None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect the shipped suite files even where ``python_files`` would not match them."""
    if suite_of(file_path) is None:
        return None
    patterns = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return None  # the python plugin collects it
    return pytest.Module.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise the shipped suites' tests through their :class:`~pytest_chaosmining.suites.Suite`."""
    name = suite_of(Path(metafunc.definition.path))
    if name is None:
        return

    get_spec(name).parametrize(metafunc, metafunc.config.stash.get(SESSION_KEY, None))


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Generator[None, None, None]:
    """Mark each shipped suite test with ``chaosmining``, ``chaosmining_<suite>``
    and ``chaosmining_explainer(name=...)``, so that
    ``-m "chaosmining_vision and chaosmining_explainer(name='SA')"`` or
    ``-m "not chaosmining_explainer(name='random')"`` selects exactly those (``-k``
    matches substrings of ids: ``-k SA`` also matches ``saliency``); no marker
    outside the plugin's namespace, so a library's own ``vision`` marker keeps its
    meaning.  A test whose built-in result was reused from the cache makes no call
    to time: pytest-benchmark's "fixture was not used" warning is silenced for the
    shipped tests.  Marks before the other plugins' hooks (``-m`` deselects by
    them), and takes back, after pytest-benchmark's hook, the skips it gives the
    shipped tests."""
    if SESSION_KEY not in config.stash:
        return (yield)
    for item in items:
        suite = suite_of(Path(str(item.path)))
        if suite is None:
            continue
        item.add_marker("chaosmining")
        item.add_marker(f"{MARKER_PREFIX}{suite}")
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "explainer_name" in callspec.params:
            name = callspec.params["explainer_name"]
            item.add_marker(getattr(pytest.mark, EXPLAINER_MARKER)(name=str(name)))
            if isinstance(name, str):  # not the placeholder of an empty parameter set (a shard without cases)
                item.user_properties.append((SHIPPED_TEST_PROPERTY, json.dumps({"suite": suite, "explainer": name})))
        item.add_marker(pytest.mark.filterwarnings(UNUSED_FILTER))
    result = yield
    for item in items:
        if suite_of(Path(str(item.path))) is not None:
            unskip(item)
    return result


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """With ``--dist loadgroup``, schedule a chaosmining run by model from the plan
    (:mod:`pytest_chaosmining.plugin.scheduling`: xdist's own grouping is silently lost
    on pytest ≥ 9.2); anything else is xdist's."""
    chaosmining = config.stash.get(SESSION_KEY, None)
    if chaosmining is None or config.getvalue("dist") != "loadgroup":
        return None

    return CaseGroupScheduling(config, log, case_groups(chaosmining))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Tell the suites which of their cases the run selected (after ``-k`` / ``-m``),
    so that work done for a group of cases (ensembles) is done for those alone."""
    chaosmining = session.config.stash.get(SESSION_KEY, None)
    if chaosmining is None:
        return
    chaosmining.selection.collection_done = True
    for item in session.items:
        suite = suite_of(Path(str(item.path)))
        callspec = getattr(item, "callspec", None)
        if suite is not None and callspec is not None:
            chaosmining.selection.note(suite, callspec.params)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker of a chaosmining run: hand the controller its models' training devices."""
    chaosmining = session.config.stash.get(SESSION_KEY, None)
    if chaosmining is not None:
        send_trained_on(session.config, chaosmining)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(BENCHMARK_FOLDER_KEY, None)
    if folder is not None:
        folder.tidy()
