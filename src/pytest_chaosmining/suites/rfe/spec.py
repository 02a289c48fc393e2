"""The RFEwNA suite's spec (light): feature selection by recursive elimination, scored against
the known informative features (ChaosMining §4, A.5); its name and statistical methods,
its cases, a run's cache key and what a selection holds.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.storage.derived import source_fingerprint
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.explainers.context import TABULAR_CLASSIFICATION, TABULAR_REGRESSION
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.parametrize import parametrize_cases, sharded
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, NamedCase, ScoreCheck
from pytest_chaosmining.suites.rfe import report
from pytest_chaosmining.suites.rfe.tiers import RFE_TIERS

if TYPE_CHECKING:
    import torch

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
class RFECase(NamedCase):
    """One dataset (and seed) of the RFEwNA suite with its training settings."""

    reported = ("dataset", "task", "n_samples", "n_features")

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

    stem = formatted("{dataset}-{size_id}")
    size_id = formatted("n{n_samples}-nf{n_features}-e{epochs}")

    def config(self) -> dict[str, Any]:
        return {"suite": SUITE, **dataclasses.asdict(self)}


@dataclass
class SelectionResult:
    """What one method selected and how well the resulting models do."""

    method: str
    support: np.ndarray
    fprec: float | None
    scores: dict[str, float]  # test scores: uni-module (and bi-module for statistical methods)
    curve: list[tuple[int, float]]  # (features remaining, validation score) per round
    seconds: float


def rfewna_config(case: RFECase, explainer: str, device: torch.device, ensemble: bool) -> dict[str, Any]:
    """The cache config of a built-in ``explainer``'s RFEwNA selection on ``case``
    (``ensemble``: its round networks were trained in batched ensembles), keyed by
    the code it ran (the plugin's source and captum's installed files, as the
    derived results are: a pull request that edits a captum method recomputes)."""

    config = {**case.config(), "explainer": explainer, "device": device.type, "code": source_fingerprint()}
    return {**config, "rounds": "ensemble"} if ensemble else config


def find_santander(root: str | Path) -> Path:
    """``train.csv`` of Santander Customer Satisfaction under ``root`` (``root``
    itself, ``santander-customer-satisfaction/`` or ``santander/``)."""
    root = Path(root)
    for name in ("", "santander-customer-satisfaction", "santander"):
        path = root / name / "train.csv"
        if path.is_file() and "TARGET" in path.open().readline():
            return path
    raise FileNotFoundError(
        f"no Santander Customer Satisfaction train.csv (with a TARGET column) in {root}, "
        f"{root / 'santander-customer-satisfaction'} or {root / 'santander'}"
    )


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


def _dataset_key(fields: CaseFields) -> str:
    return str(fields["dataset"])


def _fprec_step(fields: CaseFields) -> float:
    return 1 / int(str(fields["k"]))


class RfeSpec(SuiteDefaults):
    """RFEwNA (recursive feature elimination with neural attribution): FPrec of the
    features each explainer keeps, beside scikit-learn's RFE with statistical estimators."""

    report = report
    binding = "pytest_chaosmining.suites.rfe.suite:RfeSuite"
    name = SUITE
    shapes = (TABULAR_REGRESSION, TABULAR_CLASSIFICATION)
    case_arg = "rfe_case"
    score_metric = "fprec"
    #: FPrec of k selected features moves in steps of 1/k and is skewed against a floor: judged by order statistics
    metrics = (
        *judged("fprec", bar_key=_dataset_key),
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

    #: the dataset (``f10``, ``generated``): a case's bar key, from its record fields
    bar_key = staticmethod(_dataset_key)

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
