"""The key of an entry in the user's cache: its config, the fingerprint of its code and the
torch and numpy versions it was computed with (torch's own, which names its build: an
entry is this stack's)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import torch

from pytest_chaosmining.core.storage.keys import Code, code_fingerprint
from pytest_chaosmining.core.storage.stack_probe import stack_versions


def cache_key(config: dict[str, Any], code: Code = ()) -> str:
    """Stable hash of a JSON-serialisable training config plus the fingerprint of ``code``
    and the torch and numpy versions (an entry of the user's cache is this stack's)."""
    stack = {"torch": torch.__version__, "numpy": stack_versions()["numpy"]}
    payload = json.dumps({"config": config, "code": code_fingerprint(code), **stack}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]
