"""The pytest11 entry point: options, hooks and fixtures only.

Nothing heavy is imported here; without ``--chaosmining`` the plugin adds its
options and does nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .settings import SUITE_FILES, Settings, add_options, resolve

SETTINGS_KEY = pytest.StashKey[Settings]()
CONTEXT_KEY = pytest.StashKey[Any]()
COLLECTOR_KEY = pytest.StashKey[Any]()
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

    config.stash[CONTEXT_KEY] = ChaosminingContext(config, settings)
    _add_suite_paths(config, settings)
    if not hasattr(config, "workerinput"):
        collector = ResultCollector(config, settings)
        config.stash[COLLECTOR_KEY] = collector
        config.pluginmanager.register(collector, "chaosmining-results")


def _add_suite_paths(config: pytest.Config, settings: Settings) -> None:
    """Append the shipped suite files to the collection arguments (once)."""
    present = {Path(str(a).split("::")[0]).resolve() for a in config.args}
    for suite in settings.suites:
        path = (SUITES_DIR / SUITE_FILES[suite]).resolve()
        if path not in present:
            config.args.append(str(path))


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
