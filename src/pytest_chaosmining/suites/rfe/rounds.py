"""The networks of RFEwNA's rounds, each distinct one trained once.

A round's network is fixed by its :class:`RoundTraining` (task, outputs,
epochs, learning rate, batch size, seed, architecture, device) and the training
rows of the features the round keeps: the seed initialises it (``torch.manual_seed``
before it is built) and orders its batches.  Runs of RFEwNA that differ only in
their explainer therefore train the same first-round network, and the same
later ones wherever their explainers kept the same features.
:class:`RoundNetworks` trains each distinct network once and hands every run a
private copy (bit for bit what the run would have trained alone), charged with
the seconds its training took, so a run's cost does not depend on which run
trained first.  With ``ensemble``, the distinct networks of one request (the
rounds of runs side by side, :func:`~pytest_chaosmining.suites.rfe.rfewna.fit_side_by_side`)
that keep as many features train as one batched ensemble
(:func:`~pytest_chaosmining.core.training.ensemble.train_on_shared_batches`: to float
tolerance, not bit for bit).  With a model cache as its store, networks of the
default architecture are kept on disk under the same key (with the seconds their
training took): a warm run retrains none that an explainer's choices reproduce,
and the first round's, the same for every explainer, ships in the pack.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.training.ensemble import LOSSES, stackable, train_on_shared_batches

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache

#: the model-cache folder of the round networks
SUITE = "rfe"

#: a network factory: (number of features, number of outputs) → an initialised module
NetworkFactory = Callable[[int, int], "nn.Module"]


def default_network(n_features: int, n_outputs: int) -> nn.Module:
    """The ChaosMining MLP: 3 hidden layers of 100 GELU units."""

    layers: list[nn.Module] = []
    size = n_features
    for _ in range(3):
        layers += [nn.Linear(size, 100), nn.GELU()]
        size = 100
    layers.append(nn.Linear(size, n_outputs))
    return nn.Sequential(*layers)


@dataclass(frozen=True)
class RoundTraining:
    """Everything besides its data that fixes a round's trained network."""

    task: str  # "regression" (MSE on one output) or "classification" (cross-entropy)
    n_outputs: int
    epochs: int
    lr: float
    batch_size: int | None  # None: full batch
    seed: int
    device: str
    network: NetworkFactory | None = None  # None: default_network


@dataclass(frozen=True)
class RoundRequest:
    """One run's next round: train ``training``'s network on ``x[:, columns]`` → ``y``."""

    training: RoundTraining
    x: np.ndarray  # the run's training rows, every feature
    y: np.ndarray
    columns: np.ndarray  # the features the round keeps (indices into x's columns)


@dataclass
class TrainedRound:
    """A round's network (a private copy) and the seconds its training took."""

    network: nn.Module
    seconds: float


def initial_network(training: RoundTraining, n_features: int) -> nn.Module:
    """The round's network as initialised from ``training.seed``, on its device."""

    torch.manual_seed(training.seed)
    return (training.network or default_network)(n_features, training.n_outputs).to(training.device)


def _targets(training: RoundTraining, y: np.ndarray) -> tuple[object, str]:

    t = torch.from_numpy(y).to(training.device)
    return (t.reshape(-1, 1), "mse") if training.task == "regression" else (t, "cross_entropy")


def train_network(training: RoundTraining, x: np.ndarray, y: np.ndarray) -> nn.Module:
    """Train one round's network on ``x`` (the kept features) with Adam; eval mode."""

    net = initial_network(training, x.shape[1])
    optimizer = torch.optim.Adam(net.parameters(), lr=training.lr)
    inputs = torch.from_numpy(np.ascontiguousarray(x)).to(training.device)
    target, loss = _targets(training, y)
    loss_fn = LOSSES[loss]
    batch = training.batch_size or len(inputs)
    generator = torch.Generator().manual_seed(training.seed)
    net.train()
    for _ in range(training.epochs):
        batches = (
            [slice(None)] if batch >= len(inputs) else torch.randperm(len(inputs), generator=generator).split(batch)
        )
        for idx in batches:
            optimizer.zero_grad(set_to_none=True)
            loss_fn(net(inputs[idx]), target[idx]).backward()  # type: ignore[index]
            optimizer.step()
    return net.eval()


def _train_ensemble(
    training: RoundTraining, x: np.ndarray, y: np.ndarray, column_sets: Sequence[tuple[int, ...]]
) -> list[nn.Module] | None:
    """The networks of ``column_sets`` (as many columns each) trained as one ensemble;
    None where the architecture cannot be stacked."""

    nets = [initial_network(training, len(column_sets[0])) for _ in column_sets]
    if not stackable(nets):
        return None
    xs = torch.stack([torch.from_numpy(np.ascontiguousarray(x[:, list(cols)])) for cols in column_sets])
    target, loss = _targets(training, y)
    train_on_shared_batches(
        nets,
        xs.to(training.device),
        target,  # type: ignore[arg-type]
        loss,
        training.epochs,
        training.lr,
        training.batch_size,
        training.seed,
    )
    return nets


#: what identifies a trained round network: its training, a digest of its rows, its columns
NetworkKey = tuple[RoundTraining, str, tuple[int, ...]]


def rounds_code() -> Code:
    """The modules whose source enters the key of a round network on disk."""
    return (
        "pytest_chaosmining.suites.rfe.rounds",
        "pytest_chaosmining.core.training.ensemble",
    )


class RoundNetworks:
    """Trained round networks of one dataset, each distinct one trained once
    (keyed by its training, a digest of its rows and its columns).  ``ensemble``:
    the distinct networks of one :meth:`train` call that keep as many features
    train as one batched ensemble.  ``store``: a model cache that keeps the
    networks of the default architecture between runs (with the seconds their
    training took), so a warm run retrains none that an explainer's choices
    reproduce."""

    def __init__(self, ensemble: bool = False, store: ModelCache | None = None):
        self.ensemble = ensemble
        self.store = store
        self._trained: dict[NetworkKey, tuple[nn.Module, float]] = {}
        #: networks trained (not reused) so far
        self.trained_count = 0

    def train(self, requests: Sequence[RoundRequest]) -> list[TrainedRound]:
        """Each request's network: a private copy of the one trained for its key (trained now if new)."""
        digests: dict[int, str] = {}

        def key(request: RoundRequest) -> NetworkKey:
            if id(request.x) not in digests:
                digest = hashlib.blake2b(np.ascontiguousarray(request.x).tobytes(), digest_size=16)
                digest.update(np.ascontiguousarray(request.y).tobytes())
                digests[id(request.x)] = digest.hexdigest()
            return (request.training, digests[id(request.x)], tuple(int(c) for c in request.columns))

        keys = [key(r) for r in requests]
        todo: dict[NetworkKey, RoundRequest] = {}
        for k, request in zip(keys, requests):
            if k not in self._trained and not self._stored(k):
                todo.setdefault(k, request)
        groups: dict[tuple[object, ...], list[NetworkKey]] = defaultdict(list)
        for k in todo:
            groups[(k[0], k[1], len(k[2]) if self.ensemble else k[2])].append(k)
        for members in groups.values():
            first = todo[members[0]]
            start = time.perf_counter()
            nets = (
                _train_ensemble(first.training, first.x, first.y, [m[2] for m in members]) if len(members) > 1 else None
            )
            if nets is None:
                for m in members:
                    begun = time.perf_counter()
                    net = train_network(todo[m].training, todo[m].x[:, todo[m].columns], todo[m].y)
                    self._store(m, net, time.perf_counter() - begun, len(m[2]) == todo[m].x.shape[1])
            else:
                seconds = (time.perf_counter() - start) / len(members)
                for m, net in zip(members, nets):
                    self._store(m, net, seconds, len(m[2]) == todo[m].x.shape[1])
        return [self._copy(k) for k in keys]

    def _store(self, key: NetworkKey, net: nn.Module, seconds: float, first_round: bool) -> None:
        """Keep ``key``'s trained network (on disk too where there is a store; a
        first round's, on every feature, is the same whatever the explainer: shippable)."""
        self._trained[key] = (copy.deepcopy(net).eval(), seconds)
        self.trained_count += 1
        config = self._disk_config(key)
        if self.store is not None and config is not None:
            state = {name: t.detach().cpu() for name, t in net.state_dict().items()}
            record = (state, {"train_seconds": seconds})
            self.store.get_or_train(SUITE, config, lambda: record, rounds_code(), shippable=first_round)

    def _stored(self, key: NetworkKey) -> bool:
        """Whether ``key``'s network was loaded from :attr:`store` (then kept in memory)."""
        config = self._disk_config(key)
        found = self.store.get(SUITE, config, rounds_code()) if self.store is not None and config is not None else None
        if found is None:
            return False
        state, meta = found
        net = initial_network(key[0], len(key[2]))
        net.load_state_dict(state)
        self._trained[key] = (net.eval(), float(meta["train_seconds"]))
        return True

    def _disk_config(self, key: NetworkKey) -> dict[str, object] | None:
        """The model-cache config of ``key`` (None: a custom architecture, whose code is not keyed)."""
        training, rows, columns = key
        if training.network is not None:
            return None
        fields = {f.name: getattr(training, f.name) for f in dataclasses.fields(training) if f.name != "network"}
        return {
            "round": fields,
            "rows": rows,
            "columns": list(columns),
            "ensemble": self.ensemble,
            "device": fields["device"],
        }

    def _copy(self, key: NetworkKey) -> TrainedRound:
        net, seconds = self._trained[key]
        return TrainedRound(copy.deepcopy(net), seconds)
