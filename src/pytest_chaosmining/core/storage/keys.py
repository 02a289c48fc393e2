"""Cache keys: a config, the source of the code that acts on it, the package and
torch versions; and how long a cache waits for another worker's lock."""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from pytest_chaosmining import __version__

LOCK_TIMEOUT_S = 3600.0
#: the modules whose source decides what a cached entry looks like (data, model, training code)
Code = Sequence[ModuleType]


def code_fingerprint(modules: Code = ()) -> str:
    """Hash of the package version and the source of ``modules`` (module objects,
    so moving or renaming a file changes nothing unless its source changes)."""
    h = hashlib.sha256(__version__.encode())
    for module in modules:
        source = inspect.getsourcefile(module)
        if source is None:
            raise ValueError(f"no source file for module {module.__name__}")
        h.update(Path(source).read_bytes())
    return h.hexdigest()[:16]


def cache_key(config: dict[str, Any], code: Code = ()) -> str:
    """Stable hash of a JSON-serialisable training config plus the fingerprint of ``code``."""
    payload = json.dumps({"config": config, "code": code_fingerprint(code), "torch": torch.__version__}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]
