"""Generated datasets cached on disk: the embedded images and clips a warm run
would otherwise draw again (seconds per split).

An entry is one dataset (a dataclass of numpy arrays, plus JSON-able fields such
as class names) made from one spec (a frozen dataclass), keyed by the spec's
fields, the source of the modules that generate it, the package and torch versions
(:func:`~pytest_chaosmining.core.storage.cache_key.cache_key`) and those of numpy,
scikit-learn and scipy.  Files
are ``.npz`` written atomically under a file lock and read with
``allow_pickle=False``; an unreadable or mismatching entry is made again.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import IO, TypeVar

import numpy as np
from filelock import FileLock

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.atomic import atomic_write
from pytest_chaosmining.core.storage.cache_key import cache_key
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S, Code

D = TypeVar("D")
_FIELDS = "__fields__"  # the entry's non-array fields, as JSON


def _save(data: object, key: str, fh: IO[bytes]) -> None:
    assert dataclasses.is_dataclass(data)
    values = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)}
    arrays = {k: v for k, v in values.items() if isinstance(v, np.ndarray)}
    rest = {k: v for k, v in values.items() if k not in arrays}
    np.savez(fh, **{**arrays, _FIELDS: np.array(json.dumps({"key": key, "fields": rest}))})  # type: ignore[arg-type]


def _load(path: Path, key: str, cls: type[D]) -> D:
    with np.load(path, allow_pickle=False) as npz:
        meta = json.loads(str(npz[_FIELDS]))
        if meta["key"] != key:
            raise ValueError("key mismatch")
        arrays = {k: npz[k] for k in npz.files if k != _FIELDS}
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    rest = {k: tuple(v) if isinstance(v, list) else v for k, v in meta["fields"].items()}
    if set(arrays) | set(rest) != names:
        raise ValueError("fields differ")
    return cls(**arrays, **rest)


def _versions() -> dict[str, str]:
    """The libraries whose draws and bundled data the generators use (torch is in every key)."""
    found = {}
    for package in ("numpy", "scikit-learn", "scipy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "absent"
    return found


class ArrayCache:
    """Generated datasets under ``root/data/<kind>/<key>.npz``."""

    def __init__(self, root: Path):
        self.root = Path(root) / "data"

    def get_or_make(self, kind: str, spec: object, make: Callable[[], D], cls: type[D], code: Code) -> D:
        """The dataset of ``spec`` (a dataclass), or ``make()`` stored for next time;
        ``code``: the modules whose source decides what ``make`` returns."""
        assert dataclasses.is_dataclass(spec) and not isinstance(spec, type)
        config = {"spec": type(spec).__qualname__, "fields": dataclasses.asdict(spec), "stack": _versions()}
        key = cache_key(config, code)
        path = self.root / kind / f"{key}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            if path.exists():
                try:
                    return _load(path, key, cls)
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    warnings.warn(
                        f"chaosmining: discarding unreadable cached data {path}: {exc}",
                        stacklevel=2,
                        category=ChaosminingWarning,
                    )
            data = make()
            atomic_write(path, lambda fh: _save(data, key, fh))
            return data
