"""The report folder holds one run's files: a run removes what the run before it wrote
(listed in the folder's manifest) before it starts, and a run that stops before its
report says why in ``stopped.json``, so that nothing reads an earlier run's findings as
this run's.  Imports nothing heavy."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path

from pytest_chaosmining.core.storage.atomic import atomic_write_text

#: the folder's list of the files its last run wrote
MANIFEST = ".chaosmining-files"
#: why the last run stopped before its report
STOPPED = "stopped.json"
#: what a run wrote before runs kept a manifest
FIXED_NAMES = ("results.json", "results.csv", "report.md", "report.html")


def clear_previous(folder: Path, keep: Path | None = None) -> list[str]:
    """Remove the files the previous run wrote into ``folder`` (its manifest, or the fixed
    names where it kept none) and its ``stopped.json``; never ``keep`` (a baseline read
    from the folder).  Returns the names removed."""
    manifest = folder / MANIFEST
    try:
        names = [str(n) for n in json.loads(manifest.read_text())]
    except (OSError, ValueError, TypeError):
        names = list(FIXED_NAMES)
    removed = []
    for name in [*names, STOPPED, MANIFEST]:
        path = folder / Path(name).name  # a name, never a path out of the folder
        if keep is not None and path.resolve() == keep.resolve():
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError:  # pragma: no cover - a file another process holds: left as it is
            continue
        removed.append(path.name)
    return removed


def record_written(folder: Path, written: Iterable[str]) -> None:
    """List the files this run wrote into ``folder`` (the next run removes them)."""
    names = sorted({Path(p).name for p in written if Path(p).parent.resolve() == folder.resolve()})
    atomic_write_text(folder / MANIFEST, json.dumps(names, indent=1) + "\n")


def write_stopped(folder: Path, reason: str) -> None:
    """Say in ``folder`` why the run stopped before its report."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    atomic_write_text(folder / STOPPED, json.dumps({"reason": reason, "stopped": stamp}, indent=1) + "\n")
