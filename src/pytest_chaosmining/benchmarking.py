"""pytest-benchmark as the plugin uses it, in one module, through its public interface
(its options, its ``benchmark`` fixture, its markers and warning):

- :func:`benchmark_or_none`: the ``benchmark`` fixture where it times, else None;
  :func:`times_calls`: whether it times them itself; :func:`timed_rounds`: one call
  timed over rounds through it; :func:`label`: a timing's group and extra info;
- :func:`results_asked`: whether the run asks for its results (``--benchmark-json``…);
- :func:`unskip` and :data:`UNUSED_FILTER`: a shipped test keeps judging where it
  would skip it or warn that it timed nothing;
- :func:`compact_table`: its table made compact in a chaosmining run;
- :class:`BenchmarkFolder`: its storage folder, left only where something was stored in
  it.  pytest-benchmark (a dependency) creates its default storage folder
  ``./.benchmarks`` when it configures, in every pytest run, even one that saves
  nothing.  With this plugin installed a plain ``pytest`` must leave nothing on disk,
  so a folder that did not exist before the run and is still empty after it is removed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, TypeVar

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


#: pytest-benchmark's warning for a test that timed nothing (its built-in result was reused)
UNUSED_FILTER = "ignore:Benchmark fixture was not used at all in this test"
#: the reason pytest-benchmark gives the tests it skips (``--benchmark-skip``, ``--benchmark-only``)
SKIP_REASONS = ("Skipping benchmark", "Skipping non-benchmark")
#: the options asking for pytest-benchmark's results
RESULT_OPTIONS = ("benchmark_only", "benchmark_json", "benchmark_save", "benchmark_autosave", "benchmark_compare")

T = TypeVar("T")


def unskip(item: pytest.Item) -> None:
    """Take back the skip pytest-benchmark put on a shipped test (``--benchmark-only``
    skips tests without ``benchmark``): a conformance test always judges, timed by
    hand where pytest-benchmark does not time it."""

    def benchmark_skip(mark: pytest.Mark) -> bool:
        reason = str(mark.kwargs.get("reason", mark.args[0] if mark.args else ""))
        return mark.name == "skip" and reason.startswith(SKIP_REASONS)

    if any(benchmark_skip(m) for m in item.own_markers):
        item.own_markers[:] = [m for m in item.own_markers if not benchmark_skip(m)]


def results_asked(config: pytest.Config) -> bool:
    """Whether pytest-benchmark's results are asked for (``--benchmark-only``, ``-json``,
    ``-save``, ``-autosave``, ``-compare``) and not disabled or skipped."""
    options = config.option
    if getattr(options, "benchmark_disable", False) or getattr(options, "benchmark_skip", False):
        return False
    return any(bool(getattr(options, name, None)) for name in RESULT_OPTIONS)


def times_calls(benchmark: BenchmarkFixture | None) -> TypeGuard[BenchmarkFixture]:
    """Whether ``benchmark`` times the calls it is given (not absent, skipped, disabled
    with ``--benchmark-disable``, nor under xdist, where it only calls them once)."""
    return benchmark is not None and not benchmark.disabled


def label(benchmark: BenchmarkFixture | None, group: str) -> dict[str, object]:
    """Put ``benchmark``'s timing in ``group``; its ``extra_info`` (saved with its results),
    or a plain dict where there is no fixture."""
    if benchmark is None:
        return {}
    benchmark.group = group
    return benchmark.extra_info


def call_through(benchmark: BenchmarkFixture | None, call: Callable[[], T]) -> T:
    """``call()``, through ``benchmark`` where there is one (a fixture that does not time
    still wants its one call, or it warns)."""
    return benchmark(call) if benchmark is not None else call()


def timed_rounds(
    benchmark: BenchmarkFixture, call: Callable[[], T], rounds: int, warmup: bool
) -> tuple[T, list[float]]:
    """``call`` timed by ``benchmark`` over ``rounds`` rounds of one iteration (after one
    warm-up round where ``warmup``): its result and each round's wall time in ms."""
    result = benchmark.pedantic(call, rounds=rounds, iterations=1, warmup_rounds=1 if warmup else 0)
    return result, [t * 1000 for t in benchmark.stats.stats.data]
