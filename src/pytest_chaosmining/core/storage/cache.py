"""The on-disk model cache.

Entries are keyed by a hash of everything that affects training (the caller's
config dict, the seed, the device type, a fingerprint of the code that builds
data, models and training, and the torch and numpy versions); the pack's shippable
entries are found by the same without the versions (:func:`~pytest_chaosmining.core.storage.keys.shipped_key`)
and used on another torch where the stack probe agrees.  :meth:`ModelCache.has`
counts a shipped entry without that check (a refused one is trained when asked for).
Writes are atomic (temporary file + ``os.replace``); a ``filelock`` per entry makes concurrent xdist workers train a
model once and share it; entries are read with ``torch.load(weights_only=True)``
and a corrupt or mismatching entry is discarded and rebuilt.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from filelock import FileLock

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.arrays import ArrayCache
from pytest_chaosmining.core.storage.atomic import atomic_write
from pytest_chaosmining.core.storage.cache_key import cache_key
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S, Code, shipped_key
from pytest_chaosmining.core.storage.pack import ModelPack
from pytest_chaosmining.core.training.determinism import reproducible
from pytest_chaosmining.core.training.modes import STANDARD_PRECISION


class CorruptEntry(Exception):
    """A cache file that cannot be read or does not match its key."""


class ModelCache:
    """Train-or-load store of model state dicts under ``root/<suite>/<key>.pt``."""

    def __init__(self, root: str | os.PathLike[str], pack: ModelPack | None = None):
        self.root = Path(root)
        self.pack = pack
        #: the generated datasets the models train and are scored on, beside them
        self.data = ArrayCache(self.root)
        #: the device types the models this process got trained on (``cpu``, ``cuda``)
        self.trained_on: set[str] = set()

    def path(self, suite: str, key: str) -> Path:
        return self.root / suite / f"{key}.pt"

    def has(self, suite: str, config: dict[str, Any], code: Code = ()) -> bool:
        """Whether an entry for ``config`` exists here or in the pack (it is not validated here)."""
        key = cache_key(config, code)
        shipped = self.pack is not None and self.pack.entry(suite, shipped_key(config, code)) is not None
        return self.path(suite, key).exists() or shipped

    def get_or_train(
        self,
        suite: str,
        config: dict[str, Any],
        train: Callable[[], tuple[dict[str, torch.Tensor], dict[str, Any]]],
        code: Code = (),
        shippable: bool = False,
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any], bool]:
        """Return ``(state_dict, meta, trained_now)``.

        ``train`` is called only when no valid entry exists, here or (under the
        same key) in the pack; it returns the state dict and JSON-like metadata
        (numbers, strings, lists) to store beside it.  ``code`` are the modules
        whose source enters the key; ``shippable``: the pack builder copies the
        entry (what the plugin computes the same for every user).
        """
        on_cpu = self.cpu_trained(suite, config, code)
        if on_cpu is not None:
            self.trained_on.add("cpu")
            return on_cpu[0], on_cpu[1], False
        self.trained_on.add(str(config.get("device", "cpu")))
        key = cache_key(config, code)
        path = self.path(suite, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            found = self._found(suite, key, path, shipped_key(config, code))
            if found is not None:
                return found[0], found[1], False
            device = torch.device(str(config.get("device", "cpu")))
            with reproducible(
                device, str(config.get("precision", STANDARD_PRECISION))
            ):  # on CUDA: the same weights every run
                state, meta = train()
            meta = {**meta, "key": key, "config": json.dumps(config, sort_keys=True)}
            if shippable:
                meta["shippable"] = True
                meta["shipped_key"] = shipped_key(config, code)
                meta["torch"] = str(torch.__version__)  # the pack ships only its builder's torch
            self._save(path, state, meta)
            return state, meta, True

    def cpu_trained(
        self, suite: str, config: dict[str, Any], code: Code = ()
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
        """For a ``config`` of another device (``cuda``), the entry trained on the CPU for
        the same config, here or in the pack: weights do not depend on where they are
        evaluated, so a CUDA run uses the models a CPU run uses (and agrees with it).
        None for a CPU config, or where no CPU-trained entry exists."""
        if config.get("device", "cpu") == "cpu":
            return None
        found = self.get(suite, {**config, "device": "cpu"}, code)
        return None if found is None else (found[0], {**found[1], "trained_on": "cpu"})

    def get(
        self, suite: str, config: dict[str, Any], code: Code = ()
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
        """``(state_dict, meta)`` of the valid entry for ``config``, here or in the pack
        (copied here); None where there is none (nothing is trained)."""
        key = cache_key(config, code)
        path = self.path(suite, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            return self._found(suite, key, path, shipped_key(config, code))

    def _found(
        self, suite: str, key: str, path: Path, shipped: str
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
        """The valid entry of ``key`` at ``path`` (a corrupt one is discarded with a
        warning), else the pack's under ``shipped``, copied to ``path``; None where
        neither has one.  The caller holds the entry's lock."""
        if path.exists():
            try:
                return self._load(path, key)
            except CorruptEntry as exc:
                warnings.warn(
                    f"chaosmining: discarding corrupt cache entry {path}: {exc}",
                    stacklevel=3,
                    category=ChaosminingWarning,
                )
                path.unlink(missing_ok=True)
        found = self._shipped(suite, key, shipped)
        if found is not None:
            self._save(path, *found)
        return found

    def _shipped(self, suite: str, key: str, shipped: str) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
        """The pack's entry under ``shipped`` (the config and code): as it is where it was
        made on this torch (its ``key`` is this one), else where the pack's stack probe
        agrees on this stack (:class:`~pytest_chaosmining.core.storage.shipped_check.ShippedCheck`)."""
        entry = self.pack.entry(suite, shipped) if self.pack is not None else None
        if entry is None or self.pack is None:
            return None
        try:
            state, meta = self._load(entry, key=None)
        except CorruptEntry as exc:  # a training, not the run
            warnings.warn(
                f"chaosmining: unusable shipped entry {entry}: {exc}", stacklevel=3, category=ChaosminingWarning
            )
            return None
        if meta.get("key") != key and self.pack.check.probe_differences():
            return None  # another stack that computes otherwise: trained here
        return state, {**meta, "key": key, "shipped": True}

    def model(
        self,
        suite: str,
        config: dict[str, Any],
        build: Callable[[], torch.nn.Module],
        fit: Callable[[torch.nn.Module], float],
        device: torch.device,
        code: Code = (),
        check: Callable[[torch.nn.Module], float] | None = None,
        shippable: bool = False,
    ) -> tuple[torch.nn.Module, dict[str, Any]]:
        """The model for ``config`` in eval mode on ``device``, with its metadata.

        ``build`` makes a freshly (and deterministically) initialised model;
        ``fit`` trains one in place and returns its final loss; ``check`` scores
        a model in eval mode (the suite's quality measure), stored as ``check``.
        Without a valid cache entry, the shipped pack's model is used where it
        reproduces its check score here; otherwise the model is trained.
        ``train_seconds`` and ``final_loss`` are stored beside the weights;
        ``shippable``: as in :meth:`get_or_train`.
        """

        def train() -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
            if check is not None and self.pack is not None:
                shipped = self.pack.load(suite, config, build, device, check)
                if shipped is None and config.get("device", "cpu") != "cpu":  # the CPU-trained weights ship
                    shipped = self.pack.load(suite, {**config, "device": "cpu"}, build, device, check)
                if shipped is not None:
                    return shipped
            fresh = build().to(device)
            start = time.perf_counter()
            loss = fit(fresh)
            meta: dict[str, Any] = {"train_seconds": time.perf_counter() - start, "final_loss": loss}
            if check is not None:
                meta["check"] = check(fresh.eval())
            return fresh.state_dict(), meta

        state, meta, _ = self.get_or_train(suite, config, train, code, shippable)
        model = build()
        model.load_state_dict(state)
        return model.to(device).eval(), meta

    @staticmethod
    def _load(path: Path, key: str | None) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
        """The entry at ``path``; its meta's key must be ``key`` (None: any)."""
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # truncated, garbage, or unpickling refused
            raise CorruptEntry(f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(payload, dict) or "state_dict" not in payload or "meta" not in payload:
            raise CorruptEntry("unexpected layout")
        if key is not None and payload["meta"].get("key") != key:
            raise CorruptEntry("key mismatch")
        return payload["state_dict"], payload["meta"]

    @staticmethod
    def _save(path: Path, state: dict[str, torch.Tensor], meta: dict[str, Any]) -> None:
        state = {k: v.detach().cpu() for k, v in state.items()}
        atomic_write(path, lambda fh: torch.save({"state_dict": state, "meta": meta}, fh))
