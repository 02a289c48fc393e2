"""The RFEwNA suite's declarations: its name and statistical methods, its cases, a run's cache key
and what a selection holds."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chaosmining.core.storage.derived import source_fingerprint
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.suite_kit.case_names import formatted
from pytest_chaosmining.suite_kit.seam import NamedCase

if TYPE_CHECKING:
    import torch


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
