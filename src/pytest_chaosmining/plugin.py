"""The pytest11 entry point: options, hooks and fixtures only.

Nothing heavy is imported here; without ``--chaosmining`` the plugin adds its
options and does nothing else.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import Any

import pytest

from .settings import SUITE_FILES, Settings, add_options, resolve

SETTINGS_KEY = pytest.StashKey[Settings]()
CONTEXT_KEY = pytest.StashKey[Any]()
SUITES_DIR = Path(__file__).with_name("suites")


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    try:
        settings = resolve(config)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[SETTINGS_KEY] = settings
    if not settings.enabled:
        return
    import torch

    torch.set_num_threads(1)  # one intra-op thread per process: xdist-friendly and thread-count independent
    from .context import ChaosminingContext
    from .reporting import ResultCollector

    context = ChaosminingContext(config, settings)
    try:
        context.device
    except RuntimeError as exc:
        raise pytest.UsageError(f"--chaosmining-device: {exc}") from None
    config.stash[CONTEXT_KEY] = context
    _add_suite_paths(config, settings)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(ResultCollector(config, settings, context), "chaosmining-results")


def _add_suite_paths(config: pytest.Config, settings: Settings) -> None:
    """Add the shipped suites directory to the collection arguments (once);
    :func:`pytest_ignore_collect` drops the suites that were not selected."""
    present = {Path(str(a).split("::")[0]).resolve() for a in config.args}
    if SUITES_DIR.resolve() not in present:
        config.args.append(str(SUITES_DIR))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.parent != SUITES_DIR or not collection_path.name.startswith("test_"):
        return None
    settings = config.stash.get(SETTINGS_KEY, None)
    if settings is None or not settings.enabled:
        return True
    return collection_path.name not in {SUITE_FILES[s] for s in settings.suites} or None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    """Collect the shipped suite files even where ``python_files`` would not match them."""
    if file_path.parent != SUITES_DIR or file_path.name not in SUITE_FILES.values():
        return None
    patterns = parent.config.getini("python_files")
    if any(fnmatch.fnmatch(file_path.name, p) for p in patterns):
        return None  # the python plugin collects it
    return pytest.Module.from_parent(parent, path=file_path)


def get_context(config: pytest.Config) -> Any:
    """The session's :class:`~pytest_chaosmining.context.ChaosminingContext`."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None:
        pytest.skip("ChaosMining suites run only with --chaosmining")
    return context


@pytest.fixture(scope="session")
def chaosmining(request: pytest.FixtureRequest) -> Any:
    """The ChaosMining session context (models, explainers, thresholds, recording)."""
    return get_context(request.config)
