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
same name.  A pack may ship entries (``chaosmining-pack``), keyed by what decides
them alone (the case, the weights, the explainer and its settings, the package's
and captum's source: :meth:`DerivedCache.shipped_key`) and carrying the stack they
were computed on: on that stack they stand in for computing, on another as
:mod:`~pytest_chaosmining.core.storage.shipped_check` allows (the stack probe, a
recomputed sample).  A cached entry replays the time and memory of the run that
computed it.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import importlib.util
import json
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from filelock import FileLock

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.atomic import atomic_write_text
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S
from pytest_chaosmining.core.storage.shipped_check import ShippedCheck, result_differences
from pytest_chaosmining.core.storage.stack_probe import stack_versions

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
def package_digest() -> str:
    """Hash of every module of this package (the pack and the reference record the one
    that made them: ``tests`` check that they are the code's own)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def source_fingerprint() -> str:
    """Hash of the code a result ran: :func:`package_digest` and the installed source of
    the attribution libraries (:data:`ATTRIBUTION_LIBRARIES`)."""
    h = hashlib.sha256(package_digest().encode())
    for library in ATTRIBUTION_LIBRARIES:
        h.update(f"{library}:{library_digest(library)}".encode())
    return h.hexdigest()[:16]


def package_fingerprint() -> str:
    """Hash of the code and the stack a cached result ran: :func:`source_fingerprint`
    and :func:`stack_versions` (any change recomputes a result of the user's cache)."""
    h = hashlib.sha256(source_fingerprint().encode())
    for package, version in sorted(stack_versions().items()):
        h.update(f"{package}={version}".encode())
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
    """Evaluation results of built-in explainers under ``root/derived/<suite>/<key>.json``
    (keyed by the code and the stack: :func:`package_fingerprint`); ``pack``: a model
    pack folder whose ``derived/`` ships results under :meth:`shipped_key` (the code
    alone), each with the stack it was computed on, used on another stack as
    :class:`~pytest_chaosmining.core.storage.shipped_check.ShippedCheck` allows."""

    def __init__(self, root: Path, pack: Path | None = None, device_type: str = "cpu"):
        self.root = Path(root) / "derived"
        self.shipped = Path(pack) / SHIPPED_DERIVED if pack is not None else None
        self.check = ShippedCheck(device_type, self.shipped)

    def key(self, suite: str, parts: dict[str, object]) -> str:
        """The entry key of ``parts`` (JSON-serialisable) in ``suite`` on this code and stack."""
        payload = json.dumps(
            {"suite": suite, "parts": parts, "code": package_fingerprint()}, sort_keys=True, default=str
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:24]

    @staticmethod
    def shipped_key(suite: str, parts: dict[str, object], source: str) -> str:
        """The key a pack ships the result of ``parts`` under: the suite, the parts without
        any device type (the run's, a model config's: the weights' digest names the model),
        and the ``source`` fingerprint of the code that computed it."""
        payload = json.dumps(
            {"suite": suite, "parts": _without_device(parts), "source": source}, sort_keys=True, default=str
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:24]

    def get_or_compute(
        self, suite: str, parts: dict[str, object], compute: Callable[[], T], types: tuple[type, ...] = ()
    ) -> T:
        """The cached result of ``parts``, else the shipped one where it holds here, else
        ``compute()``; stored for next time (a shipped result of another stack is not
        copied: the user's cache keeps what this stack computed)."""
        key = self.key(suite, parts)
        path = self.root / suite / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        names = {cls.__qualname__: cls for cls in types}
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            found = _decoded(path, key, names) if path.exists() else None
            if found is not None:
                return cast("T", found[0])
            shipped_key = self.shipped_key(suite, parts, source_fingerprint())
            shipped = self._shipped(suite, shipped_key, names)
            if shipped is not None and self.check.same_stack(shipped[1].get("stack")):
                atomic_write_text(path, json.dumps({**shipped[1], "key": key, "parts": parts}, default=str))
                return cast("T", shipped[0])
            if shipped is not None and self.check.usable(self.root, suite):
                group = parts.get("explainer")
                if not self.check.to_check(suite, group if isinstance(group, str) else None, shipped_key):
                    return cast("T", shipped[0])
                result = compute()
                differs = result_differences(shipped[1]["result"], encode(result))
                if differs:
                    what = f"{parts.get('explainer', '')} ({shipped_key})"
                    self.check.refuse(self.root, suite, what, differs, shipped[1].get("stack"))
                self._write(path, key, parts, result)
                return result
            result = compute()
            self._write(path, key, parts, result)
            return result

    def _shipped(self, suite: str, shipped_key: str, names: dict[str, type]) -> tuple[object, dict] | None:
        """The pack's result under ``shipped_key`` and its entry, if any and readable."""
        if self.shipped is None:
            return None
        source = self.shipped / suite / f"{shipped_key}.json.gz"
        return _decoded(source, shipped_key, names) if source.exists() else None

    def _write(self, path: Path, key: str, parts: dict[str, object], result: object) -> None:
        made = {"source": source_fingerprint(), "stack": self.check.stack()}  # the pack ships it by them
        payload = {"key": key, "parts": parts, "result": encode(result), **made}
        atomic_write_text(path, json.dumps(payload, default=str))


def _without_device(value: object) -> object:
    """``value`` with every ``device`` entry of its dicts left out."""
    if isinstance(value, dict):
        return {k: _without_device(v) for k, v in value.items() if k != "device"}
    if isinstance(value, list | tuple):
        return [_without_device(v) for v in value]
    return value


def shipped_entry(suite: str, text: str, stack: dict[str, str]) -> tuple[str, str] | None:
    """A user-cache entry of ``suite`` (its JSON ``text``) as the pack ships it:
    ``(shipped key, JSON)``, or None where it was not made by this code on ``stack``
    (an older entry of the cache, another device's)."""
    entry = json.loads(text)
    if entry.get("source") != source_fingerprint() or entry.get("stack") != stack:
        return None
    shipped_key = DerivedCache.shipped_key(suite, entry["parts"], entry["source"])
    return shipped_key, json.dumps({**entry, "key": shipped_key})


def _decoded(path: Path, key: str, names: dict[str, type]) -> tuple[object, dict] | None:
    """The result of the entry at ``path`` (gzipped where it ends so) and the entry, or
    None with a warning where it is unreadable, of another key or names an unknown type."""
    try:
        raw = path.read_bytes()
        entry = json.loads(gzip.decompress(raw).decode() if path.suffix == ".gz" else raw.decode())
        if entry["key"] != key:
            raise ValueError("key mismatch")
        return decode(entry["result"], names), entry
    except (OSError, ValueError, KeyError, TypeError, AssertionError, EOFError, zlib.error) as exc:
        warnings.warn(
            f"chaosmining: discarding corrupt derived result {path}: {type(exc).__name__}: {exc}",
            stacklevel=3,
            category=ChaosminingWarning,
        )
        return None
