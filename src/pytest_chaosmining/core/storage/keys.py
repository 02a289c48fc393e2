"""What cache keys are made of: a config and the source of the code that acts on it (with
the package's version); a pack's key (:func:`shipped_key`, without the stack's versions;
the user's cache adds them: :mod:`.cache_key`); and how long a cache waits for another
worker's lock.  Nothing heavy: a suite's spec names its code here."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_chaosmining import __version__

LOCK_TIMEOUT_S = 3600.0
#: the modules whose source decides what a cached entry looks like (data, model, training
#: code), by dotted name
Code = Sequence[str]


def code_fingerprint(modules: Code = ()) -> str:
    """Hash of the package version and the source of ``modules`` (dotted names, found
    without importing them: moving or renaming a file changes nothing unless its source
    changes)."""
    h = hashlib.sha256(__version__.encode())
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise ValueError(f"no source file for module {name}")
        h.update(Path(spec.origin).read_bytes())
    return h.hexdigest()[:16]


def shipped_key(config: dict[str, Any], code: Code = ()) -> str:
    """The key a pack ships an entry under: the config and the fingerprint of ``code``,
    without the torch version (another stack uses it where the stack probe agrees)."""
    payload = json.dumps({"config": config, "code": code_fingerprint(code)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]
