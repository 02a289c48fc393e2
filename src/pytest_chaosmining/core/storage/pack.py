"""The shipped model pack: the models the smoke tier trains, trained once and
shipped with the package, so a fresh runner with an empty cache trains none.

An entry is keyed by the model's *spec* (the training config: data, model,
training settings, seed, device type), not by the code fingerprint or the torch
version, and carries the score it reached when it was trained (``check``: the
suite's own quality measure on data generated from the spec).  On load the
score is recomputed on data generated on this machine; where it differs by more
than :data:`TOLERANCE` (another numpy or torch draws other data, the generator
changed) the model is retrained with a warning.  Identical shipped models also
make baselines comparable across machines.

Beside the models, ``<suite>/entries/`` holds cache entries that the code which
made them marked shippable (results the plugin computes the same for every user:
the statistical RFE selections, the built-ins' RFEwNA selections, RFEwNA's
first-round networks), under keys of their config and the source of the code that
made them (:func:`~pytest_chaosmining.core.storage.keys.shipped_key`): used as they
are on the torch that made them, on another where the stack probe agrees.
``derived/`` holds the derived results of the run the pack was built from (the
built-ins', the control's and the references' scores; see
:mod:`~pytest_chaosmining.core.storage.derived`), gzipped, under keys of the code
alone, with the stack they were computed on and that stack's probe (``stack.json``):
another stack uses them as :mod:`~pytest_chaosmining.core.storage.shipped_check` allows.

Regenerate: run the smoke tier into an empty cache, then
``python -m pytest_chaosmining.tools.pack CACHE_DIR`` (writes the pack folder).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import shutil
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import torch

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.atomic import atomic_write
from pytest_chaosmining.core.storage.derived import SHIPPED_DERIVED, package_digest, shipped_entry
from pytest_chaosmining.core.storage.pack_location import SHIPPED
from pytest_chaosmining.core.storage.probe_values import probe
from pytest_chaosmining.core.storage.shipped_check import STACK_FILE, ShippedCheck
from pytest_chaosmining.core.storage.stack_probe import stack_versions

#: the pack's sub-folder of shipped cache entries, kept under their cache keys
ENTRIES = "entries"
#: largest accepted change of a shipped model's check score (accuracy, UScore) when re-measured here
TOLERANCE = 0.02


def _save(payload: dict[str, object], fh: IO[bytes]) -> None:
    torch.save(payload, fh)


def spec_key(config: dict[str, Any]) -> str:
    """The pack key of a training config: its content alone (no code or torch version)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:24]


class ModelPack:
    """A read-only folder of shipped models, ``<suite>/<spec key>.pt``."""

    def __init__(self, root: Path = SHIPPED):
        self.root = Path(root)

    @functools.cached_property
    def check(self) -> ShippedCheck:
        """Whether entries made on another torch hold on this stack (its probe, on the CPU
        their configs train on)."""
        return ShippedCheck("cpu", self.root / SHIPPED_DERIVED)

    def path(self, suite: str, config: dict[str, Any]) -> Path:
        """Where the entry of ``config`` would be."""
        return self.root / suite / f"{spec_key(config)}.pt"

    def entry(self, suite: str, key: str) -> Path | None:
        """The shipped cache entry under ``key`` (:func:`~pytest_chaosmining.core.storage.keys.shipped_key`:
        config and code), if any."""
        path = self.root / suite / ENTRIES / f"{key}.pt"
        return path if path.is_file() else None

    def load(
        self,
        suite: str,
        config: dict[str, Any],
        build: Callable[[], torch.nn.Module],
        device: torch.device,
        check: Callable[[torch.nn.Module], float],
    ) -> tuple[dict[str, torch.Tensor], dict[str, Any]] | None:
        """The shipped weights and metadata of ``config`` if the pack has them and
        they reproduce their check score here (within :data:`TOLERANCE`); else None."""
        path = self.path(suite, config)
        if not path.is_file():
            return None
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
            state, meta = payload["state_dict"], payload["meta"]
            if json.loads(meta["config"]) != json.loads(json.dumps(config)):
                return None
            model = build()
            model.load_state_dict(state)
        except Exception as exc:  # noqa: BLE001 - a broken pack entry costs a training, not the run
            warnings.warn(
                f"chaosmining: unusable shipped model {path.name} ({type(exc).__name__}: {exc}); training it",
                stacklevel=3,
                category=ChaosminingWarning,
            )
            return None
        score = check(model.to(device).eval())
        if abs(score - float(meta["check"])) > TOLERANCE:
            warnings.warn(
                f"chaosmining: shipped {suite} model {path.stem} scores {score:.4f} on the data generated "
                f"here against {float(meta['check']):.4f} when it was shipped (tolerance {TOLERANCE}); "
                "retraining it",
                stacklevel=3,
                category=ChaosminingWarning,
            )
            return None
        return state, {**meta, "check": score, "shipped": True}


def build_pack(cache_dir: Path, out: Path = SHIPPED, keep_models: bool = False) -> dict[str, int]:
    """Copy every CPU model entry of ``cache_dir`` that carries a check score, every
    shippable entry and every CPU derived result this code made on this stack (with the
    stack's probe: ``derived/stack.json``) into the pack folder ``out``
    (replacing it); the number of entries per suite.  ``keep_models``: the models
    ``out`` already ships stay as they are (another machine's retrained IteROAR
    models among them), and only models it lacks are added; the shippable entries
    and derived results, keyed by the code, are replaced."""
    counts: Counter[str] = Counter()
    staging = out.with_name(out.name + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    kept_models = sorted(Path(out).glob("*/*.pt")) if keep_models else []
    for model in kept_models:
        target = staging / model.parent.name / model.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(model, target)
    for entry in sorted(Path(cache_dir).glob("*/*.pt")):
        payload = torch.load(entry, map_location="cpu", weights_only=True)
        meta = payload.get("meta", {})
        made_here = "shipped_key" in meta and meta.get("torch") == str(torch.__version__)  # not another torch's
        if meta.get("shippable") and made_here and json.loads(meta["config"]).get("device") == "cpu":
            target = staging / entry.parent.name / ENTRIES / f"{meta['shipped_key']}.pt"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(entry, target)
            counts[f"{entry.parent.name}/{ENTRIES}"] += 1
            continue
        if "check" not in meta or json.loads(meta["config"]).get("device") != "cpu":
            continue
        suite = entry.parent.name
        config = json.loads(meta["config"])
        kept = {k: meta[k] for k in ("config", "check", "train_seconds", "final_loss") if k in meta}
        kept["torch"] = str(torch.__version__)
        target = staging / suite / f"{spec_key(config)}.pt"
        if target.exists():  # kept as shipped
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, functools.partial(_save, {"state_dict": payload["state_dict"], "meta": kept}))
        counts[suite] += 1
    stack = {**stack_versions(), "device": "cpu"}
    for entry in sorted((Path(cache_dir) / SHIPPED_DERIVED).glob("*/*.json")):
        shipped = shipped_entry(entry.parent.name, entry.read_text(), stack)
        if shipped is None:  # made by other code, on another stack or device
            continue
        target = staging / SHIPPED_DERIVED / entry.parent.name / f"{shipped[0]}.json.gz"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(gzip.compress(shipped[1].encode(), mtime=0))
        counts[SHIPPED_DERIVED] += 1
    if counts:
        (staging / SHIPPED_DERIVED).mkdir(parents=True, exist_ok=True)
        payload = {"stack": stack, "package": package_digest(), "probe": probe(torch.device("cpu"))}
        (staging / SHIPPED_DERIVED / STACK_FILE).write_text(json.dumps(payload))
    shutil.rmtree(out, ignore_errors=True)
    if staging.exists():
        staging.rename(out)
    return dict(counts)
