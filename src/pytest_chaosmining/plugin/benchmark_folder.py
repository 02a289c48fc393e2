"""pytest-benchmark's storage folder, left only where something was stored in it.

pytest-benchmark (a dependency) creates its default storage folder ``./.benchmarks``
when it configures, in every pytest run, even one that saves nothing.  With this
plugin installed a plain ``pytest`` must leave nothing on disk, so a folder that
did not exist before the run and is still empty after it is removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

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
