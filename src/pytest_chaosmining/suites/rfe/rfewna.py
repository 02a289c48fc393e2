"""RFEwNA: recursive feature elimination with a neural network and a post-hoc
attribution method (ChaosMining §4, Algorithm 1), as a scikit-learn selector.

While more than ``n_features_to_select`` features remain: train a fresh
network on the remaining features, score it on a held-out validation split,
rank the features by their mean |attribution| on that split, and drop the
least important ``step`` (a fraction of the remaining features, or a count).

Unlike the reference script, every step is recorded in ``history_`` (features,
validation score, importances), so the best step is known (``best_support_``)
instead of whatever the last iteration left behind.

>>> selector = RFEwNA(explainer="SA", task="regression", n_features_to_select=5)
>>> selector.fit(X, y).transform(X).shape[1]          # doctest: +SKIP
5
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils.validation import check_is_fitted, check_X_y

from pytest_chaosmining.explainers import Explainer, as_explainer, attribute, builtin_explainers
from pytest_chaosmining.explainers.context import tabular_context
from pytest_chaosmining.suites.rfe.rounds import RoundNetworks, RoundRequest, RoundTraining, TrainedRound
from pytest_chaosmining.timing import timed

TASKS = ("regression", "classification")


def validation_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded ``(train, validation)`` row indices, validation = ``fraction`` of ``n``."""
    if not 0 < fraction < 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction}")
    order = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(round(n * fraction)))
    if n - n_val < 2:
        raise ValueError(f"too few samples ({n}) for a validation split of {fraction}")
    return order[n_val:], order[:n_val]


def resolve_explainer(explainer: Explainer | str | Callable[..., object]) -> Explainer:
    """A built-in explainer name, an :class:`~pytest_chaosmining.explainers.Explainer`,
    a captum attribution class or a callable ``(model, inputs, target) -> tensor``."""

    if isinstance(explainer, Explainer):
        return explainer
    if isinstance(explainer, str):
        builtins = builtin_explainers()
        if explainer not in builtins:
            raise ValueError(
                f"unknown explainer {explainer!r}; built-ins: {sorted(builtins)} "
                "(or pass an Explainer, a captum class or a callable)"
            )
        return builtins[explainer]
    return as_explainer(getattr(explainer, "__name__", type(explainer).__name__), explainer, "argument")


class RFEwNA(SelectorMixin, BaseEstimator):
    """Recursive feature elimination driven by a network's attributions.

    Parameters
    ----------
    explainer: a built-in name (``"SA"``, ``"IG"``, ... ``"random"``: see
        :func:`~pytest_chaosmining.explainers.builtin_explainers`), an ``Explainer``,
        a captum class or a callable.
    task: ``"regression"`` (MSE, one output) or ``"classification"`` (cross-entropy).
    n_features_to_select: int, fraction in (0, 1), or None (half).
    step: fraction in (0, 1) of the remaining features to drop per round, or a count ≥ 1.
    network: ``(n_features, n_outputs) -> nn.Module``; default: MLP 3×100 GELU.
    epochs, lr, batch_size: Adam training per round (``batch_size=None``: full batch).
    validation_fraction: held-out share used for scores and importances.
    random_state: seed of the split, the initialisation and the batches.
    device: torch device for training and attribution.

    Attributes
    ----------
    support_, ranking_, n_features_, n_features_in_: as scikit-learn's ``RFE``.
    estimator_: the network trained on the selected features.
    history_: one dict per round: ``n_features``, ``support``, ``score``,
        ``importances``, ``seconds``.
    best_index_, best_support_: the round with the best validation score.
    classes_: class labels (classification).
    """

    def __init__(
        self,
        explainer: Explainer | str | Callable[..., object] = "SA",
        task: str = "regression",
        n_features_to_select: int | float | None = None,
        step: int | float = 0.5,
        network: Callable[[int, int], Any] | None = None,
        epochs: int = 300,
        lr: float = 3e-3,
        batch_size: int | None = None,
        validation_fraction: float = 0.2,
        random_state: int = 0,
        device: str = "cpu",
    ):
        self.explainer = explainer
        self.task = task
        self.n_features_to_select = n_features_to_select
        self.step = step
        self.network = network
        self.epochs = epochs
        self.lr = lr
        self.batch_size = batch_size
        self.validation_fraction = validation_fraction
        self.random_state = random_state
        self.device = device

    # -- validation ---------------------------------------------------------------
    def _target_count(self, n_features: int) -> int:
        k = self.n_features_to_select
        if k is None:
            k = max(1, n_features // 2)
        elif isinstance(k, numbers.Integral):
            k = int(k)
        elif isinstance(k, numbers.Real) and 0 < k < 1:
            k = max(1, int(k * n_features))
        else:
            raise ValueError(f"n_features_to_select must be an integer, a fraction in (0, 1) or None, got {k!r}")
        if k < 1:
            raise ValueError(f"n_features_to_select must be at least 1, got {self.n_features_to_select}")
        if k > n_features:
            raise ValueError(f"n_features_to_select={k} is larger than the number of features ({n_features})")
        return k

    def _drop_count(self, remaining: int, k: int) -> int:
        step = self.step
        if isinstance(step, numbers.Integral) and step >= 1:
            n = int(step)
        elif isinstance(step, numbers.Real) and 0 < step < 1:
            n = int(step * remaining)
        else:
            raise ValueError(f"step must be a fraction in (0, 1) or an integer >= 1, got {step!r}")
        return min(max(1, n), remaining - k)

    # -- fitting ---------------------------------------------------------------------
    def fit(self, X: Any, y: Any, networks: RoundNetworks | None = None) -> RFEwNA:
        """Eliminate features until ``n_features_to_select`` remain.  ``networks``:
        round networks to share with other runs on the same data (each distinct one
        is trained once; see :mod:`pytest_chaosmining.suites.rfe.rounds`)."""
        (error,) = fit_side_by_side([self], X, y, networks)
        if error is not None:
            raise error
        return self

    def _round_training(self, n_outputs: int) -> RoundTraining:
        return RoundTraining(
            self.task,
            n_outputs,
            self.epochs,
            self.lr,
            self.batch_size,
            self.random_state,
            str(self.device),
            self.network,
        )

    def _eliminate(self, X: Any, y: Any) -> Generator[RoundRequest, TrainedRound, None]:
        """The rounds of :meth:`fit`: yields each round's network request and is sent the trained network."""

        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        X, y = check_X_y(X, y, dtype=np.float32, y_numeric=self.task == "regression")
        n, n_features = X.shape
        self.n_features_in_ = n_features
        k = self._target_count(n_features)
        explainer = resolve_explainer(self.explainer)
        if self.task == "classification":
            self.classes_, y = np.unique(y, return_inverse=True)
            y = y.astype(np.int64)
            if len(self.classes_) < 2:
                raise ValueError("classification needs at least 2 classes in y")
        else:
            y = y.astype(np.float32)
        train, val = validation_split(n, self.validation_fraction, self.random_state)
        device = torch.device(self.device)
        training = self._round_training(len(self.classes_) if self.task == "classification" else 1)
        x_train, y_train = X[train], y[train]
        support = np.ones(n_features, dtype=bool)
        ranking = np.ones(n_features, dtype=np.int64)
        self.history_: list[dict[str, Any]] = []
        while True:
            cols = np.flatnonzero(support)
            trained = yield RoundRequest(training, x_train, y_train, cols)
            start = time.perf_counter()
            net = trained.network
            score = self._score_net(net, X[np.ix_(val, cols)], y[val], device)
            importances = self._importances(net, explainer, X[np.ix_(val, cols)], X[np.ix_(train, cols)], device)
            self.history_.append(
                {
                    "n_features": int(len(cols)),
                    "support": support.copy(),
                    "score": score,
                    "importances": importances,
                    "seconds": trained.seconds + time.perf_counter() - start,
                }
            )
            if len(cols) <= k:
                break
            drop = cols[np.argsort(importances, kind="stable")[: self._drop_count(len(cols), k)]]
            support[drop] = False
            ranking[~support] += 1
        self.estimator_ = net
        self.support_ = support
        self.ranking_ = ranking
        self.n_features_ = int(support.sum())
        self.best_index_ = int(np.argmax([h["score"] for h in self.history_]))
        self.best_support_ = self.history_[self.best_index_]["support"]

    def _outputs(self, net: Any, X: np.ndarray, device: torch.device) -> np.ndarray:

        with torch.no_grad():
            return net(torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32)).to(device)).cpu().numpy()

    def _score_net(self, net: Any, X: np.ndarray, y: np.ndarray, device: torch.device) -> float:
        out = self._outputs(net, X, device)
        if self.task == "classification":
            return float((out.argmax(1) == y).mean())

        return float(r2_score(y, out[:, 0]))

    def _importances(
        self,
        net: Any,
        explainer: Explainer,
        X: np.ndarray,
        X_train: np.ndarray,
        device: torch.device,
    ) -> np.ndarray:
        """Mean |attribution| per feature over the validation split (target: the
        output for regression, the predicted class for classification; background:
        the first training rows)."""

        x = torch.from_numpy(np.ascontiguousarray(X)).to(device)
        if self.task == "classification":
            with torch.no_grad():
                target = net(x).argmax(1)
        else:
            target = 0
        context = tabular_context("rfe", X_train, device, self.task)
        attr, _ = timed(lambda: attribute(explainer, net, x, target, context), device)
        return attr.abs().mean(0).cpu().numpy().astype(np.float64)

    # -- scikit-learn selector and estimator API ---------------------------------------
    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of the network trained on the selected features."""
        check_is_fitted(self, "estimator_")
        out = self._outputs(self.estimator_, self.transform(X), next(self.estimator_.parameters()).device)
        return self.classes_[out.argmax(1)] if self.task == "classification" else out[:, 0]

    def score(self, X: Any, y: Any) -> float:
        """Accuracy (classification) or R² (regression) of :meth:`predict`."""

        pred = self.predict(X)
        return float(accuracy_score(y, pred) if self.task == "classification" else r2_score(y, pred))


def fit_side_by_side(
    selectors: Sequence[RFEwNA], X: Any, y: Any, networks: RoundNetworks | None = None
) -> list[Exception | None]:
    """Fit ``selectors`` (RFEwNA runs that may differ in explainer, target count
    and step) on the same ``X``, ``y`` round by round: each round's networks are
    requested together from ``networks``, which trains each distinct one once
    (as one batched ensemble where it was made with ``ensemble=True``).  A run
    that raises stops there and its exception takes its place in the returned
    list (None: fitted); the others go on."""
    networks = networks if networks is not None else RoundNetworks()
    errors: list[Exception | None] = [None] * len(selectors)
    runs = {i: s._eliminate(X, y) for i, s in enumerate(selectors)}
    requests: dict[int, RoundRequest] = {}

    def advance(i: int, trained: TrainedRound | None) -> None:
        try:
            requests[i] = runs[i].send(trained) if trained is not None else next(runs[i])
        except StopIteration:
            requests.pop(i, None)
        except Exception as exc:  # the run's own failure, reported in its place
            requests.pop(i, None)
            errors[i] = exc

    for i in runs:
        advance(i, None)
    while requests:
        order = list(requests)
        for i, trained in zip(order, networks.train([requests[i] for i in order])):
            advance(i, trained)
    return errors
