"""The symbolic suite's MLPs trained as batched ensembles (``--chaosmining-ensemble``).

The models of a run that share a data shape and training settings (formulas
with as many inputs, and every seed of them; standard and saliency guided
training apart) train as one ensemble
(:mod:`pytest_chaosmining.core.training.ensemble`); each member is then stored in the
model cache under its own key, which records that it was ensemble-trained.  A
lock per group makes xdist workers train a group once."""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import torch
from filelock import FileLock

from pytest_chaosmining.core.storage.cache_key import cache_key
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S, Code
from pytest_chaosmining.core.training.ensemble import train_regressors_together
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.core.training.regression import RegressionTraining
from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache

SUITE = "symbolic"


class EnsembleCase(Protocol):
    """What the ensemble trainer reads of a symbolic case (a frozen dataclass: hashable)."""

    @property
    def formula(self) -> int: ...

    @property
    def noise_features(self) -> int: ...

    @property
    def label_noise(self) -> float: ...

    @property
    def n_samples(self) -> int: ...

    @property
    def width(self) -> int: ...

    @property
    def depth(self) -> int: ...

    @property
    def dropout(self) -> float: ...

    @property
    def optimizer(self) -> str: ...

    @property
    def lr(self) -> float: ...

    @property
    def epochs(self) -> int: ...

    @property
    def seed(self) -> int: ...

    @property
    def guide(self) -> SaliencyGuided | None: ...
    def __hash__(self) -> int: ...
    def training_config(self, device_type: str) -> dict[str, Any]: ...


Case = TypeVar("Case", bound=EnsembleCase)


def eligible(case: EnsembleCase) -> bool:
    """Whether ``case`` trains the same as one member of an ensemble as alone (no
    dropout; every symbolic case is full batch; saliency guided members mask with
    their own seeded generators)."""
    return case.dropout == 0


def ensemble_config(case: EnsembleCase, device_type: str) -> dict[str, Any]:
    """The cache config of ``case``'s model trained in an ensemble."""
    return {**case.training_config(device_type), "trainer": "ensemble"}


def _shape_key(case: EnsembleCase, n_features: int) -> tuple[object, ...]:
    return (n_features, case.n_samples, case.width, case.depth, case.epochs, case.lr, case.optimizer, case.guide)


def train_groups(
    cases: Sequence[Case],
    cache: ModelCache,
    device: torch.device,
    build: Callable[[Case, int], torch.nn.Module],
    code: Code,
    progress: Callable[[int, int, float, Any], None] | None = None,
) -> int:
    """Train every eligible case of ``cases`` without a cache entry, one ensemble per
    shape group, and store each member; the number of models trained.  ``build``
    makes a case's initialised model for a number of inputs; ``code``: the modules
    in the cache key."""

    todo = [c for c in cases if eligible(c) and not cache.has(SUITE, ensemble_config(c, device.type), code)]
    data = {
        c: generate(SymbolicDataSpec(c.formula, c.noise_features, c.label_noise, c.n_samples, c.seed)) for c in todo
    }
    groups: dict[tuple[object, ...], list[Case]] = defaultdict(list)
    for case in todo:
        groups[_shape_key(case, data[case].n_features)].append(case)
    trained = 0
    for members in groups.values():
        keys = sorted(cache_key(ensemble_config(c, device.type), code) for c in members)
        lock = cache.root / SUITE / f"ensemble-{hashlib.sha256(json.dumps(keys).encode()).hexdigest()[:16]}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(lock), timeout=LOCK_TIMEOUT_S):
            members = [c for c in members if not cache.has(SUITE, ensemble_config(c, device.type), code)]
            if not members:
                continue  # another worker trained them meanwhile
            models = [build(c, data[c].n_features).to(device) for c in members]
            xs = torch.stack([torch.from_numpy(data[c].x_train) for c in members]).to(device)
            ys = torch.stack([torch.from_numpy(data[c].y_train) for c in members]).to(device)
            first = members[0]
            settings = RegressionTraining(first.epochs, first.lr, first.optimizer)
            began = time.perf_counter()
            losses = train_regressors_together(
                models, xs, ys, settings, progress, first.guide, [c.seed for c in members]
            )
            seconds = (time.perf_counter() - began) / len(members)
            for case, model, loss in zip(members, models, losses):
                meta = {"train_seconds": seconds, "final_loss": loss, "ensemble_size": len(members)}
                cache.get_or_train(
                    SUITE,
                    ensemble_config(case, device.type),
                    lambda m=model, meta=meta: (m.state_dict(), meta),  # type: ignore[misc]
                    code,
                )
            trained += len(members)
    return trained
