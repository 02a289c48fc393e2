"""Derived results cached on disk: what a built-in explainer scores on a model
does not change between runs, so a warm run pays only for the user's explainers.

An entry is one evaluation (the suite's scores of one built-in explainer on one
case), keyed by the suite, the case, the explainer (name and settings), the
evaluation sizes, the device type, the torch and numpy versions, a digest of
captum's installed source (its files, not its version: a pull request to captum
that breaks a method recomputes) and a fingerprint of the whole package's
source (any code change recomputes).
Entries are JSON, written atomically under a file lock.  Only built-in
explainers are cached: a user's explainer may change between runs under the
same name.  A pack may ship entries (``chaosmining-pack``): found under the same
key, they stand in for computing, as a cached entry does.  A cached entry
replays the time and memory of the run that computed it.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import importlib.util
import json
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from filelock import FileLock

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.atomic import atomic_write_text
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


#: the attribution libraries whose code the built-ins run: their installed source is hashed
#: (a pull request to captum changes its files, not its version string)
ATTRIBUTION_LIBRARIES = ("captum",)


def source_digest(root: Path) -> str:
    """Hash of every file under ``root`` (relative path and bytes; caches and
    compiled files left out): the code a package runs, whatever its version says."""
    h = hashlib.sha256()
    for path in sorted(p for p in Path(root).rglob("*") if p.is_file()):
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            continue
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def library_digest(package: str) -> str:
    """:func:`source_digest` of an importable package's folder (``absent`` when not installed)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "absent"
    return "+".join(source_digest(Path(location)) for location in spec.submodule_search_locations)


@functools.cache
def package_fingerprint() -> str:
    """Hash of the code a cached result ran: every module of this package, the
    installed source of the attribution libraries (:data:`ATTRIBUTION_LIBRARIES`)
    and the torch and numpy versions (any change recomputes)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    for library in ATTRIBUTION_LIBRARIES:
        h.update(f"{library}:{library_digest(library)}".encode())
    for package in ("torch", "numpy"):
        try:
            h.update(f"{package}={metadata.version(package)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{package}=absent".encode())
    return h.hexdigest()[:16]


def weights_digest(*models: torch.nn.Module) -> str:
    """Hash of the models' parameters and buffers (a derived result belongs to these weights)."""
    h = hashlib.sha256()
    for model in models:
        for name, tensor in model.state_dict().items():
            h.update(name.encode())
            h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def encode(value: object) -> object:
    """JSON for evaluation results: dicts (any scalar keys), lists, numbers, dataclasses."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "__dataclass__": type(value).__qualname__,
            "fields": {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, dict):
        return {"__items__": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):  # numpy / torch scalars
        return value.item()
    return value


def decode(value: object, types: dict[str, type]) -> object:
    """The inverse of :func:`encode`; ``types`` names the dataclasses that may occur."""
    if isinstance(value, dict) and "__dataclass__" in value:
        cls = types[str(value["__dataclass__"])]
        fields = value["fields"]
        assert isinstance(fields, dict)
        return cls(**{k: decode(v, types) for k, v in fields.items()})
    if isinstance(value, dict) and "__items__" in value:
        items = value["__items__"]
        assert isinstance(items, list)
        return {decode(k, types): decode(v, types) for k, v in items}
    if isinstance(value, list):
        return [decode(v, types) for v in value]
    return value


#: the folder of shipped derived results in a pack (``<suite>/<key>.json.gz``)
SHIPPED_DERIVED = "derived"


class DerivedCache:
    """Evaluation results of built-in explainers under ``root/derived/<suite>/<key>.json``;
    ``pack``: a model pack folder whose ``derived/`` holds shipped entries under the
    same keys (the package fingerprint is in every key: an entry is used only by
    the code and captum that computed it)."""

    def __init__(self, root: Path, pack: Path | None = None):
        self.root = Path(root) / "derived"
        self.shipped = Path(pack) / SHIPPED_DERIVED if pack is not None else None

    def key(self, suite: str, parts: dict[str, object]) -> str:
        """The entry key of ``parts`` (JSON-serialisable) in ``suite``."""
        payload = json.dumps(
            {"suite": suite, "parts": parts, "code": package_fingerprint()}, sort_keys=True, default=str
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:24]

    def get_or_compute(
        self, suite: str, parts: dict[str, object], compute: Callable[[], T], types: tuple[type, ...] = ()
    ) -> T:
        """The cached result of ``parts``, or ``compute()`` stored for next time."""
        key = self.key(suite, parts)
        path = self.root / suite / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        names = {cls.__qualname__: cls for cls in types}
        shipped = self.shipped / suite / f"{key}.json.gz" if self.shipped is not None else None
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            for source in (path, shipped):
                if source is None or not source.exists():
                    continue
                try:
                    text = (
                        gzip.decompress(source.read_bytes()).decode() if source.suffix == ".gz" else source.read_text()
                    )
                    entry = json.loads(text)
                    if entry["key"] != key:
                        raise ValueError("key mismatch")
                    result = decode(entry["result"], names)
                except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
                    warnings.warn(
                        f"chaosmining: discarding corrupt derived result {source}: {exc}",
                        stacklevel=2,
                        category=ChaosminingWarning,
                    )
                    continue
                if source is not path:
                    atomic_write_text(path, text)
                return result  # type: ignore[return-value]
            result = compute()
            atomic_write_text(path, json.dumps({"key": key, "parts": parts, "result": encode(result)}, default=str))
            return result
