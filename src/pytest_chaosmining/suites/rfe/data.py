"""Datasets of the RFEwNA suite (ChaosMining §4, A.5).

- Regression: the symbolic formulas (10–14 in the reference) with 150 noise
  features, from :mod:`pytest_chaosmining.testbeds.formulas.data` (predictive columns at
  seeded random positions).
- Classification, embedded: a generated set with known informative features
  (scikit-learn's ``make_classification`` without redundant or repeated
  features, columns shuffled by the seed, the informative ones recorded),
  every column mapped to the same normal marginal so that no column stands
  out before a model has learned the labels.
- Classification, real: the Santander Customer Satisfaction ``train.csv`` from
  Kaggle when it is on disk, preprocessed as the paper: MinMax scaling, the
  majority class undersampled to balance, a 4:1 split.  Its truth is unknown,
  so only accuracy is scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.preprocessing import MinMaxScaler, QuantileTransformer

from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate

TRAIN_FRACTION = 0.8


@dataclass
class SelectionData:
    """A train/test split and, where known, the informative columns."""

    name: str
    task: str  # "regression" or "classification"
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    truth: np.ndarray | None  # informative column indices, None when unknown

    @property
    def n_features(self) -> int:
        return self.x_train.shape[1]


def symbolic(formula: int, noise_features: int, n_samples: int, label_noise: float, seed: int) -> SelectionData:
    """A symbolic formula's data (4:1 split) with its predictive columns as truth."""
    d = generate(SymbolicDataSpec(formula, noise_features, label_noise, n_samples, seed))
    return SelectionData(f"f{formula:02d}", "regression", d.x_train, d.y_train, d.x_test, d.y_test, np.sort(d.truth))


def generated_classification(n_samples: int, n_features: int, n_informative: int, seed: int) -> SelectionData:
    """Binary classification with ``n_informative`` informative features among
    ``n_features`` (the rest i.i.d. noise), columns permuted by ``seed``."""

    x, y = make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_informative,
        n_redundant=0,
        n_repeated=0,
        n_clusters_per_class=2,
        class_sep=1.0,
        flip_y=0.02,
        shuffle=False,
        random_state=seed,
    )
    rng = np.random.default_rng(np.random.SeedSequence([n_samples, n_features, n_informative, seed]))
    columns = rng.permutation(n_features)  # new column j holds old column columns[j]
    x = x[:, columns]
    truth = np.sort(np.flatnonzero(columns < n_informative))
    rows = rng.permutation(n_samples)
    x, y = x[rows], y[rows].astype(np.int64)
    cut = int(round(n_samples * TRAIN_FRACTION))
    x = _same_marginals(x, cut)
    return SelectionData(f"generated-{n_features}f", "classification", x[:cut], y[:cut], x[cut:], y[cut:], truth)


def _same_marginals(x: np.ndarray, n_train: int) -> np.ndarray:
    """Map every column to standard-normal quantiles, fitted on the first
    ``n_train`` rows.  ``make_classification`` leaves its informative columns
    with a larger spread than the noise columns, so a model-free map such as
    ``|input|`` would find them; after this every training column holds the same
    values, and only a model that learned the labels can tell them apart."""

    qt = QuantileTransformer(n_quantiles=min(1000, n_train), output_distribution="normal", subsample=None)
    qt.fit(x[:n_train])
    return qt.transform(x).astype(np.float32)


def santander(path: str | Path, seed: int, max_rows: int | None = None) -> SelectionData:
    """The paper's preprocessing of Kaggle's ``train.csv`` (``ID``, features, ``TARGET``):
    MinMax scaling, the majority class undersampled to the minority's size,
    a seeded 4:1 split; ``max_rows`` caps the balanced set (tiers smaller than paper)."""

    frame = pd.read_csv(path)
    if "TARGET" not in frame.columns:
        raise ValueError(f"{path}: no TARGET column (is this Kaggle's Santander train.csv?)")
    y = frame.pop("TARGET").to_numpy(dtype=np.int64)
    frame = frame.drop(columns=[c for c in ("ID",) if c in frame.columns])
    x = MinMaxScaler().fit_transform(frame.to_numpy(dtype=np.float64)).astype(np.float32)
    rng = np.random.default_rng(np.random.SeedSequence([seed, len(y)]))
    ones, zeros = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    minority = min(len(ones), len(zeros))
    if minority == 0:
        raise ValueError(f"{path}: TARGET has a single class")
    keep = np.concatenate([rng.choice(ones, minority, replace=False), rng.choice(zeros, minority, replace=False)])
    keep = rng.permutation(keep)
    if max_rows is not None:
        keep = keep[:max_rows]
    cut = int(round(len(keep) * TRAIN_FRACTION))
    x, y = x[keep], y[keep]
    return SelectionData("santander", "classification", x[:cut], y[:cut], x[cut:], y[cut:], None)
