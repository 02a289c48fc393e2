"""Progress lines of long trainings, on the terminal or (on an xdist worker) on
the stderr the worker shares with the controller."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import pytest

from pytest_chaosmining.run.placement import worker_id

#: seconds between progress lines of one model on an xdist worker
WORKER_EVERY_S = 10.0
#: a training callback: (epoch, epochs, elapsed seconds, loss)
Progress = Callable[[int, int, float, float], None]


class ProgressLines:
    """``progress(label, every_s)``: a training callback printing ``label``, epoch and
    elapsed time, at most every ``every_s`` seconds (:data:`WORKER_EVERY_S` on an
    xdist worker) and once at the end; None (silent) under ``-q``.  On a worker the
    line is prefixed with its id, so a ``-n 2`` run shows what trains."""

    def __init__(self, config: pytest.Config):
        self.config = config

    def __call__(self, label: str, every_s: float = 2.0) -> Progress | None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        worker = worker_id(self.config)
        if self.config.get_verbosity() < 0 or (reporter is None and worker is None):
            return None
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        every = WORKER_EVERY_S if worker else every_s
        last = [time.monotonic()]

        def write(line: str) -> None:
            if worker is not None:
                sys.stderr.write(f"[{worker}] {line}\n")
                sys.stderr.flush()
            elif reporter is not None:
                reporter.write_line(line)

        def report(epoch: int, epochs: int, elapsed: float, loss: float) -> None:
            now = time.monotonic()
            if epoch != epochs and now - last[0] < every:
                return
            last[0] = now
            line = f"chaosmining: training {label}: epoch {epoch}/{epochs}, loss {float(loss):.4g}, {elapsed:.1f} s"
            if capture is not None:
                with capture.global_and_fixture_disabled():
                    write(line)
            else:
                write(line)

        return report
