"""Atomic file writes: a temporary file in the target's directory, fsync, then
``os.replace``; readers see the old file or the new one, never a torn one."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Create or replace ``path`` with what ``write`` puts into a binary file object."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; honour the umask like open() does
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write` for UTF-8 text."""
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
