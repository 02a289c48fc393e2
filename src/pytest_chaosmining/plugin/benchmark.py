"""pytest-benchmark as the plugin uses it, through its public interface (its options,
its ``benchmark`` fixture; :mod:`pytest_chaosmining.timing` times calls through it).

- :func:`benchmark_or_none`: the ``benchmark`` fixture where it times, else None;
- :func:`compact_table`: its table made compact in a chaosmining run;
- :class:`BenchmarkFolder`: its storage folder, left only where something was stored in
  it.  pytest-benchmark (a dependency) creates its default storage folder
  ``./.benchmarks`` when it configures, in every pytest run, even one that saves
  nothing.  With this plugin installed a plain ``pytest`` must leave nothing on disk,
  so a folder that did not exist before the run and is still empty after it is removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_benchmark.fixture import BenchmarkFixture

DEFAULT_STORAGE = "file://./.benchmarks"


@dataclass(frozen=True)
class BenchmarkFolder:
    """The default storage folder of one run, and whether it existed before the run."""

    path: Path
    existed: bool

    @classmethod
    def before_run(cls, config: pytest.Config) -> BenchmarkFolder | None:
        """The folder pytest-benchmark is about to create, or None if it uses another storage."""
        if config.getoption("benchmark_storage", None) != DEFAULT_STORAGE:
            return None
        path = Path.cwd() / DEFAULT_STORAGE.removeprefix("file://")
        return cls(path, path.exists())

    def tidy(self) -> None:
        """Remove the folder if this run created it and stored nothing in it."""
        if self.existed:
            return
        try:
            self.path.rmdir()  # only an empty folder
        except OSError:
            pass


def benchmark_or_none(request: pytest.FixtureRequest) -> BenchmarkFixture | None:
    """pytest-benchmark's ``benchmark`` fixture where it times; None where it is absent
    (``-p no:benchmark``) or told to skip (``--benchmark-skip``)."""
    config = request.config
    if not config.pluginmanager.hasplugin("benchmark") or config.getoption("benchmark_skip", False):
        return None
    return request.getfixturevalue("benchmark")


#: pytest-benchmark's table in a chaosmining run, where its options are not given: the
#: median and the rounds, the test's short name, one table per explainer
COMPACT_BENCHMARK = {"benchmark_columns": ["median", "rounds"], "benchmark_name": "short"}
COMPACT_GROUP_BY = "param:explainer_name"


def compact_table(config: pytest.Config) -> None:
    """Make pytest-benchmark's table compact where the run does not set its options
    (``--benchmark-columns``, ``--benchmark-name``, ``--benchmark-group-by``): two
    columns, short names, a table per explainer.  Runs before pytest-benchmark reads
    them (this hook is ``tryfirst``)."""
    option = config.option
    if not hasattr(option, "benchmark_columns"):
        return  # pytest-benchmark is not active
    for name, value in COMPACT_BENCHMARK.items():
        if getattr(option, name, None) in (None, [], "normal"):
            setattr(option, name, value)
    if getattr(option, "benchmark_group_by", None) == "group":
        option.benchmark_group_by = COMPACT_GROUP_BY
