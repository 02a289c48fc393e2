"""The RFE suite's heavy half: the cases' data, RFEwNA driven by an explainer (alone or
side by side), scikit-learn's RFE with the statistical estimators, and their test scores."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sklearn
from filelock import FileLock
from sklearn.base import clone
from sklearn.feature_selection import RFE
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, mean_absolute_error, r2_score
from sklearn.svm import SVC, SVR
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from pytest_chaosmining.core.metrics.attribution import uscore
from pytest_chaosmining.core.storage.cache_key import cache_key
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S
from pytest_chaosmining.suites.rfe import data as rfe_data
from pytest_chaosmining.suites.rfe.rfewna import RFEwNA, fit_side_by_side, validation_split
from pytest_chaosmining.suites.rfe.spec import SUITE, RFECase, SelectionResult, find_santander, rfe_code, rfewna_config

if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.suites.rfe.rounds import RoundNetworks


@functools.lru_cache(maxsize=4)
def load(case: RFECase) -> Any:
    """The case's data (deterministic), made once per process for the case's
    tests (selection sizes, RFEwNA, the statistical selectors); its arrays are
    read-only, so no caller can change what the next one gets."""
    if case.dataset.startswith("f"):
        data = rfe_data.symbolic(int(case.dataset[1:]), case.n_features, case.n_samples, 0.01, case.seed)
    elif case.dataset == "generated":
        data = rfe_data.generated_classification(case.n_samples, case.n_features, case.n_informative, case.seed)
    elif case.dataset == "santander":
        data = rfe_data.santander(find_santander(case.data_dir or "."), case.seed, case.n_samples)
    else:
        raise ValueError(f"unknown RFE dataset {case.dataset!r}")
    for array in (data.x_train, data.y_train, data.x_test, data.y_test, data.truth):
        if array is not None:
            array.setflags(write=False)
    return data


def n_select(case: RFECase, data: Any) -> int:
    return len(data.truth) if data.truth is not None else case.n_select


def _fprec(support: np.ndarray, truth: np.ndarray | None) -> float | None:
    if truth is None:
        return None
    return float(len(set(np.flatnonzero(support)) & set(truth.tolist())) / len(truth))


def _test_scores(task: str, y_true: np.ndarray, pred: np.ndarray, prefix: str) -> dict[str, float]:
    if task == "classification":
        return {f"{prefix}accuracy": float(accuracy_score(y_true, pred))}
    return {
        f"{prefix}r2": float(r2_score(y_true, pred)),
        f"{prefix}mae": float(mean_absolute_error(y_true, pred)),
        f"{prefix}uscore": uscore(pred, y_true),
    }


def selector(case: RFECase, explainer: Explainer | str, k: int, device: torch.device) -> Any:
    return RFEwNA(
        explainer,
        case.task,
        n_features_to_select=k,
        step=case.step,
        epochs=case.epochs,
        lr=case.lr,
        batch_size=case.batch_size,
        random_state=case.seed,
        device=str(device),
    )


def _selection_meta(case: RFECase, data: Any, fitted: Any) -> dict[str, Any]:
    """What is stored of a fitted RFEwNA selector: its selection, its test scores,
    its curve and its seconds (its rounds' training and attribution: the same
    whichever run trained a shared network first)."""
    return {
        "support": np.flatnonzero(fitted.support_).tolist(),
        "scores": _test_scores(case.task, data.y_test, fitted.predict(data.x_test), ""),
        "seconds": float(sum(h["seconds"] for h in fitted.history_)),
        "curve": [[h["n_features"], h["score"]] for h in fitted.history_],
    }


def run_rfewna(
    case: RFECase,
    explainer: Explainer,
    cache: ModelCache,
    device: torch.device,
    reuse: bool = True,
    networks: RoundNetworks | None = None,
) -> SelectionResult:
    """RFEwNA with ``explainer`` on ``case`` (cached for built-in explainers, unless
    not ``reuse``); ``networks``: round networks shared with the case's other runs."""
    data = load(case)
    k = n_select(case, data)

    def run() -> tuple[dict[str, Any], dict[str, Any]]:
        fitted = selector(case, explainer, k, device).fit(data.x_train, data.y_train, networks)
        return {}, _selection_meta(case, data, fitted)

    config = None
    if explainer.source == "builtin" and reuse:
        config = rfewna_config(case, explainer.name, device, networks is not None and networks.ensemble)
    return _selection(f"RFEwNA-{explainer.name}", data, run, cache, config)


def _no_weights(meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A cache entry of a selection: no weights, its result in the metadata."""
    return {}, meta


def run_side_by_side(
    case: RFECase, explainers: Sequence[Any], cache: ModelCache, device: torch.device, networks: RoundNetworks
) -> list[str]:
    """RFEwNA with each of the built-in ``explainers`` not yet cached on ``case``, all
    side by side (their rounds' networks requested together: each distinct one
    trained once, in batched ensembles where ``networks.ensemble``), each selection
    cached under its own key; the names of those that ran.  One that fails is not
    cached: its own test runs it alone and reports its failure.  A lock per case
    makes xdist workers run a case once."""
    configs = {e.name: rfewna_config(case, e.name, device, networks.ensemble) for e in explainers}

    def missing() -> list[Any]:
        return [e for e in explainers if e.source == "builtin" and not cache.has(SUITE, configs[e.name], rfe_code())]

    if len(missing()) < 2:
        return []
    lock = cache.root / SUITE / f"side-by-side-{cache_key({'case': case.config(), 'device': device.type}, ())}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock), timeout=LOCK_TIMEOUT_S):  # another worker running the same case: wait for its results
        todo = missing()
        if len(todo) < 2:
            return []
        return _side_by_side(case, todo, cache, device, networks, configs)


def _side_by_side(
    case: RFECase,
    todo: Sequence[Any],
    cache: ModelCache,
    device: torch.device,
    networks: RoundNetworks,
    configs: dict[str, dict[str, Any]],
) -> list[str]:

    data = load(case)
    k = n_select(case, data)
    selectors = [selector(case, e, k, device) for e in todo]
    errors = fit_side_by_side(selectors, data.x_train, data.y_train, networks)
    ran = []
    for explainer, fitted, error in zip(todo, selectors, errors):
        if error is None:
            meta = _selection_meta(case, data, fitted)
            cache.get_or_train(
                SUITE, configs[explainer.name], functools.partial(_no_weights, meta), rfe_code(), shippable=True
            )
            ran.append(explainer.name)
    return ran


def statistical_estimator(name: str, task: str, seed: int) -> Any:
    """The paper's comparison estimators: linear regression, linear SVR and a
    decision tree (regression); logistic regression without penalty, linear SVC
    and a decision tree (classification)."""
    factories = {
        "linear": LinearRegression,
        "svr": lambda: SVR(kernel="linear"),
        "logistic": lambda: LogisticRegression(C=np.inf, max_iter=2000),  # unpenalised (the paper: penalty=None)
        "svc": lambda: SVC(kernel="linear"),
        "tree": lambda: (DecisionTreeClassifier if task == "classification" else DecisionTreeRegressor)(
            random_state=seed
        ),
    }
    return factories[name]()


def run_statistical(
    case: RFECase, method: str, device: torch.device, cache: ModelCache | None = None
) -> SelectionResult:
    """scikit-learn's ``RFE`` with ``method``, one round per call so that each round
    drops half of the *remaining* features (as RFEwNA), then: uni-module test score
    (the estimator on its selection) and bi-module (a network on that selection).
    Cached in ``cache`` when given (key: the case, the method, scikit-learn's version)."""
    data = load(case)

    def run() -> tuple[dict[str, Any], dict[str, Any]]:
        support, scores, curve, seconds = _statistical_selection(case, method, data, device)
        return {}, {
            "support": np.flatnonzero(support).tolist(),
            "scores": scores,
            "seconds": seconds,
            "curve": [list(p) for p in curve],
        }

    config = None
    if cache is not None:
        config = {**case.config(), "method": method, "device": device.type, "sklearn": sklearn.__version__}
    return _selection(f"RFE-{method}", data, run, cache, config)


def _selection(
    name: str, data: Any, run: Any, cache: ModelCache | None, config: dict[str, Any] | None
) -> SelectionResult:
    """``run()``'s selection (from ``cache`` under ``config`` when a config is given: a
    statistical method's or a built-in explainer's, shipped in the pack), as a result."""
    if config is not None and cache is not None:
        _, meta, _ = cache.get_or_train(SUITE, config, run, rfe_code(), shippable=True)
    else:
        _, meta = run()
    support = np.zeros(data.n_features, dtype=bool)
    support[meta["support"]] = True
    return SelectionResult(
        name,
        support,
        _fprec(support, data.truth),
        dict(meta["scores"]),
        [(int(n), float(s)) for n, s in meta["curve"]],
        float(meta["seconds"]),
    )


def _statistical_selection(
    case: RFECase, method: str, data: Any, device: torch.device
) -> tuple[Any, dict, list, float]:
    k = n_select(case, data)
    estimator = statistical_estimator(method, case.task, case.seed)
    train, val = validation_split(len(data.y_train), 0.2, case.seed)
    x_fit, y_fit, x_val, y_val = data.x_train[train], data.y_train[train], data.x_train[val], data.y_train[val]
    start = time.perf_counter()
    cols = np.arange(data.n_features)
    fitted = clone(estimator).fit(x_fit, y_fit)
    curve = [(len(cols), float(fitted.score(x_val, y_val)))]
    while len(cols) > k:
        drop = min(max(1, int(case.step * len(cols))), len(cols) - k)
        rfe = RFE(clone(estimator), n_features_to_select=len(cols) - drop, step=drop).fit(x_fit[:, cols], y_fit)
        cols = cols[rfe.support_]
        curve.append((len(cols), float(rfe.estimator_.score(x_val[:, cols], y_val))))
    seconds = time.perf_counter() - start
    support = np.zeros(data.n_features, dtype=bool)
    support[cols] = True
    final = clone(estimator).fit(data.x_train[:, cols], data.y_train)
    scores = _test_scores(case.task, data.y_test, final.predict(data.x_test[:, cols]), "")
    # bi-module: a network trained as RFEwNA's rounds are, on this selection (k = all: one round)
    net = selector(case, "SA", len(cols), device).fit(data.x_train[:, cols], data.y_train)
    scores |= _test_scores(case.task, data.y_test, net.predict(data.x_test[:, cols]), "bi_")
    return support, scores, curve, seconds
