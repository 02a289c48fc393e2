"""The RFEwNA suite: feature selection by recursive elimination, scored against
the known informative features (ChaosMining §4, A.5).

Each :class:`RFECase` is one dataset × seed.  Every registered explainer
drives :class:`~pytest_chaosmining.suites.rfe.rfewna.RFEwNA`; scikit-learn's ``RFE`` with
statistical estimators runs beside it at the same step (50% of the remaining
features per round).  Scores:

- ``fprec``: |selected ∩ informative| / k with k = the number of informative
  features (where they are known);
- the test score of the final model: R², MAE and UScore (regression) or
  accuracy (classification).  *Uni-module*: the selecting estimator predicts;
  *bi-module*: a network trained on a statistical method's selection predicts.
- ``val_score`` per round (``n_remaining``): the curve of ChaosMining Figure 6.

RFEwNA runs of the built-in explainers and the statistical runs are cached like
trained models; runs of user explainers always run (their code is not part of
any key).  A case's built-in runs go side by side, round by round, and all of a
case's runs share its round networks (:mod:`pytest_chaosmining.suites.rfe.rounds`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.attribution import uscore
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.storage.derived import source_fingerprint
from pytest_chaosmining.core.storage.keys import LOCK_TIMEOUT_S, Code, cache_key
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers.context import TABULAR_CLASSIFICATION, TABULAR_REGRESSION
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.parametrize import parametrize_cases, sharded
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, Recorder, ScoreCheck, Scored
from pytest_chaosmining.suites.rfe import data as rfe_data
from pytest_chaosmining.suites.rfe import report
from pytest_chaosmining.suites.rfe.data import find_santander
from pytest_chaosmining.suites.rfe.rounds import RoundNetworks
from pytest_chaosmining.suites.rfe.tiers import RFE_TIERS

# filelock, sklearn and the package's modules that load them are imported where used: heavy, they wait for
# --chaosmining.


if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView

SUITE = "rfe"
STATISTICAL = {
    "regression": ("linear", "svr", "tree"),
    "classification": ("logistic", "svc", "tree"),
}
#: the linear method every explainer-driven selection must match or beat
LINEAR = {"regression": "linear", "classification": "logistic"}


def rfe_code() -> Code:
    """The modules whose source enters the cache key of an RFE selection."""
    return (
        "pytest_chaosmining.suites.rfe.rfewna",
        "pytest_chaosmining.suites.rfe.rounds",
        "pytest_chaosmining.core.training.ensemble",
        "pytest_chaosmining.suites.rfe.data",
        "pytest_chaosmining.testbeds.formulas.data",
        "pytest_chaosmining.testbeds.formulas.formulas",
    )


@dataclass(frozen=True)
class RFECase:
    """One dataset (and seed) of the RFEwNA suite with its training settings."""

    dataset: str  # f10 ... f14, "generated", "santander"
    task: str
    n_samples: int
    n_features: int  # noise features (symbolic) or all features (generated)
    n_informative: int
    epochs: int
    lr: float
    batch_size: int | None
    step: float
    seed: int
    data_dir: str | None = None
    n_select: int = 0  # used where the truth is unknown (Santander)

    @property
    def id(self) -> str:
        return f"{self.dataset}-{self.size_id}-s{self.seed}"

    @property
    def size_id(self) -> str:
        return f"n{self.n_samples}-nf{self.n_features}-e{self.epochs}"

    def explainer_id(self, explainer: str) -> str:
        return f"{self.dataset}-{self.size_id}-{explainer}-s{self.seed}"

    def case_fields(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "task": self.task, "n_samples": self.n_samples, "n_features": self.n_features}

    def config(self) -> dict[str, Any]:
        return {"suite": SUITE, **dataclasses.asdict(self)}


def plan_cases(tier: Any, seeds: Seeds | None = None, data_dir: str | None = None) -> list[RFECase]:
    """The tier's regression formulas, the generated classification set and,
    when its CSV is on disk, Santander."""
    n_seeds = seed_range(tier.seeds, seeds)
    cases = []
    for seed in n_seeds:
        for formula in tier.formulas:
            cases.append(
                RFECase(
                    f"f{formula:02d}",
                    "regression",
                    tier.n_samples,
                    tier.noise_features,
                    0,
                    tier.epochs,
                    tier.lr,
                    None,
                    tier.step,
                    seed,
                )
            )
        cases.append(
            RFECase(
                "generated",
                "classification",
                tier.clf_samples,
                tier.clf_features,
                tier.clf_informative,
                tier.clf_epochs,
                tier.lr,
                tier.clf_batch_size,
                tier.step,
                seed,
            )
        )
        if data_dir is not None:
            try:
                find_santander(data_dir)
            except FileNotFoundError:
                continue
            cases.append(
                RFECase(
                    "santander",
                    "classification",
                    tier.santander_rows,
                    369,
                    0,
                    tier.clf_epochs,
                    tier.lr,
                    tier.clf_batch_size,
                    tier.step,
                    seed,
                    data_dir,
                    tier.santander_select,
                )
            )
    return cases


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
        data = rfe_data.santander(rfe_data.find_santander(case.data_dir or "."), case.seed, case.n_samples)
    else:
        raise ValueError(f"unknown RFE dataset {case.dataset!r}")
    for array in (data.x_train, data.y_train, data.x_test, data.y_test, data.truth):
        if array is not None:
            array.setflags(write=False)
    return data


def n_select(case: RFECase, data: Any) -> int:
    return len(data.truth) if data.truth is not None else case.n_select


@dataclass
class SelectionResult:
    """What one method selected and how well the resulting models do."""

    method: str
    support: np.ndarray
    fprec: float | None
    scores: dict[str, float]  # test scores: uni-module (and bi-module for statistical methods)
    curve: list[tuple[int, float]]  # (features remaining, validation score) per round
    seconds: float


def _fprec(support: np.ndarray, truth: np.ndarray | None) -> float | None:
    if truth is None:
        return None
    return float(len(set(np.flatnonzero(support)) & set(truth.tolist())) / len(truth))


def _test_scores(task: str, y_true: np.ndarray, pred: np.ndarray, prefix: str) -> dict[str, float]:
    from sklearn.metrics import accuracy_score, mean_absolute_error, r2_score

    if task == "classification":
        return {f"{prefix}accuracy": float(accuracy_score(y_true, pred))}
    return {
        f"{prefix}r2": float(r2_score(y_true, pred)),
        f"{prefix}mae": float(mean_absolute_error(y_true, pred)),
        f"{prefix}uscore": uscore(pred, y_true),
    }


def selector(case: RFECase, explainer: Explainer | str, k: int, device: torch.device) -> Any:

    from pytest_chaosmining.suites.rfe.rfewna import RFEwNA

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


def rfewna_config(case: RFECase, explainer: str, device: torch.device, ensemble: bool) -> dict[str, Any]:
    """The cache config of a built-in ``explainer``'s RFEwNA selection on ``case``
    (``ensemble``: its round networks were trained in batched ensembles), keyed by
    the code it ran (the plugin's source and captum's installed files, as the
    derived results are: a pull request that edits a captum method recomputes)."""

    config = {**case.config(), "explainer": explainer, "device": device.type, "code": source_fingerprint()}
    return {**config, "rounds": "ensemble"} if ensemble else config


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
    from filelock import FileLock

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

    from pytest_chaosmining.suites.rfe.rfewna import fit_side_by_side

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
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.svm import SVC, SVR
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

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
        import sklearn

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
    from sklearn.base import clone
    from sklearn.feature_selection import RFE

    from pytest_chaosmining.suites.rfe.rfewna import validation_split

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


def selection_fields(case: RFECase) -> dict[str, Any]:
    """A selection's record fields on ``case``: its fields, the selection size k and the feature count."""
    k, total = _selection_size(case)
    return {**case.case_fields(), "k": k, "total_features": total}


def _selection_size(case: RFECase) -> tuple[int, int]:
    """k and the feature count of ``case``'s data."""
    data = load(case)
    return n_select(case, data), int(data.n_features)


def _selection_record(
    case: RFECase,
    fields: dict[str, Any],
    method: str,
    explainer: str,
    metric: str,
    value: float,
    **extra: str | int | float,
) -> Record:
    return Record(SUITE, method, explainer, case.seed, metric, float(value), {**fields, **extra})


def selection_records(case: RFECase, method: str, explainer: str, result: SelectionResult) -> list[Record]:
    """What a selection records: its test scores, its fitting time and its validation curve."""
    record = functools.partial(_selection_record, case, selection_fields(case), method, explainer)
    made = [record(m, v) for m, v in result.scores.items()]
    made.append(record("fit_seconds", result.seconds))
    return made + [record("val_score", score, n_remaining=n_remaining) for n_remaining, score in result.curve]


def _dataset_key(fields: CaseFields) -> str:
    return str(fields["dataset"])


def _fprec_step(fields: CaseFields) -> float:
    return 1 / int(str(fields["k"]))


class RfeSuite(SuiteDefaults):
    """RFEwNA (recursive feature elimination with neural attribution): FPrec of the
    features each explainer keeps, beside scikit-learn's RFE with statistical estimators."""

    report = report
    name = SUITE
    shapes = (TABULAR_REGRESSION, TABULAR_CLASSIFICATION)
    case_arg = "rfe_case"
    score_metric = "fprec"
    #: FPrec of k selected features moves in steps of 1/k and is skewed against a floor: judged by order statistics
    metrics = (
        *judged("fprec", key=_dataset_key),
        *judged("fprec_over_linear", "accuracy"),
        *reported("uscore", "r2", "bi_accuracy", "bi_uscore", "bi_r2", "val_score"),
        *reported("mae", "bi_mae", higher_is_better=False),
    )
    calibration = Calibration(judged=calibrated(metrics), steps={"fprec": _fprec_step})
    checks = (
        ScoreCheck("fprec", "RFEwNA-{what}", when_present=True),
        ScoreCheck("fprec_over_linear", "RFEwNA-{what} (linear RFE: FPrec {linear_fprec:.3f})", when_present=True),
        # where the truth is unknown (Santander): the selection's test accuracy against the quality gate
        ScoreCheck("accuracy", "RFEwNA-{what}", when_present=True, value="accuracy_without_truth", bar="quality_gate"),
    )

    def bar_key(self, fields: CaseFields) -> str:
        """The dataset (``f10``, ``generated``)."""
        return _dataset_key(fields)

    def records(self, case: RFECase, explainer: str) -> Recorder:  # type: ignore[override]
        """RFEwNA's records of ``case``: its fields with the selection size and the feature count."""
        return functools.partial(_selection_record, case, selection_fields(case), "RFEwNA", explainer)

    def scored(
        self,
        run: RunView,
        case: RFECase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """RFEwNA driven by the explainer (timed; the case's built-ins run side by side
        first, sharing round networks): FPrec and its margin over linear RFE, or the
        test accuracy where the truth is unknown; the selection's records."""
        self.run_side_by_side(run, case)  # the case's built-ins, once: shared round networks
        with run.runtime.timer(benchmark, SUITE, case.id, explainer), explainer_failures(node.config):
            result = self.selection(run, case, explainer)
        made = selection_records(case, "RFEwNA", explainer, result)
        if result.fprec is None:
            return Scored({"accuracy_without_truth": result.scores["accuracy"]}, made)
        linear = self.selection(run, case, f"RFE-{LINEAR[case.task]}")
        assert linear.fprec is not None  # the same data: the truth is known to both
        values = {"fprec": result.fprec, "fprec_over_linear": result.fprec - linear.fprec, "linear_fprec": linear.fprec}
        return Scored(values, made)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(RFE_TIERS[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[RFECase]:
        return plan_cases(RFE_TIERS[run.plan.tier], run.plan.settings.seeds, run.plan.data_dir)

    def parametrize(self, metafunc: pytest.Metafunc, run: RunView | None) -> None:
        """Explainer-driven tests over cases × explainers; ``method`` tests over cases × statistical estimators."""
        if "method" not in metafunc.fixturenames:
            parametrize_cases(metafunc, run, self)
            return

        cases = sharded(run, self.name, self.plan(run)) if run is not None else []
        metafunc.parametrize(
            (self.case_arg, "method"),
            [pytest.param(case, f"RFE-{m}", id=f"{case.id}-RFE-{m}") for case in cases for m in STATISTICAL[case.task]],
        )

    def selection(self, run: RunView, case: RFECase, method: str) -> SelectionResult:
        """The selection of ``method`` (a registered explainer driving RFEwNA, or
        ``RFE-<estimator>``) on ``case``, computed at most once per process."""
        if method.startswith("RFE-"):
            return run.runtime.memo(
                ("rfe", case, method),
                lambda: run_statistical(case, method[4:], run.runtime.device, run.runtime.cache),
            )
        return run.runtime.memo(
            ("rfe", case, method),
            lambda: run_rfewna(
                case,
                run.explainers[method],
                run.runtime.cache,
                run.runtime.device,
                run.results.reuses_builtin_results,
                self.networks(run, case),
            ),
        )

    def networks(self, run: RunView, case: RFECase) -> RoundNetworks | None:
        """The round networks the case's RFEwNA runs share (None where each explainer
        is timed on its own: with pytest-benchmark results asked for)."""
        if run.results.fresh_timings:
            return None
        return run.runtime.memo(
            ("rfe-networks", case),
            lambda: RoundNetworks(ensemble=run.runtime.ensemble, store=run.runtime.cache),
        )

    def run_side_by_side(self, run: RunView, case: RFECase) -> None:
        """Before the case's first RFEwNA test: the run's selected built-in explainers
        on ``case`` run side by side (once per process; see :func:`run_side_by_side`)."""
        networks = self.networks(run, case)
        if networks is None or not run.results.reuses_builtin_results:
            return
        names = run.explainers.in_case(SUITE, case.id)
        explainers = [run.explainers[name] for name in names]
        run.runtime.memo(
            ("rfe-side-by-side", case),
            lambda: run_side_by_side(case, explainers, run.runtime.cache, run.runtime.device, networks),
        )


def judge_statistical(run: RunView, suite: RfeSuite, case: RFECase, method: str, node: pytest.Item) -> None:
    """A statistical method's selection: its records; exactly k features and finite test scores."""
    result = suite.selection(run, case, method)
    for made in selection_records(case, method, MODEL_LEVEL, result):
        run.judge.record(node, made)
    fields = selection_fields(case)
    if result.fprec is not None:
        run.judge.record(node, _selection_record(case, fields, method, MODEL_LEVEL, "fprec", result.fprec))
    k = fields["k"]
    assert result.support.sum() == k, f"{method} kept {result.support.sum()} features, expected {k}"
    assert all(math.isfinite(v) for v in result.scores.values()), result.scores
