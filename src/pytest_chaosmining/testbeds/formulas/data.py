"""Symbolic functional data (ChaosMining §2.1, A.2): features, targets, ground truth.

Each feature is ``clip(N(0, 1) * 0.33, -1, 1)``; the ``m`` predictive features
and ``n`` noise features are drawn the same way.  Unlike the reference, the
predictive columns are placed at seeded random positions (recorded in
``truth``): an explainer that simply favours the first columns must not score.
Everything is drawn from one generator seeded by the dataset's own parameters,
so a formula's data never depends on which formulas ran before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_chaosmining.testbeds.formulas.formulas import Formula, get_formula

FEATURE_STD = 0.33
TRAIN_FRACTION = 0.8


@dataclass(frozen=True)
class SymbolicDataSpec:
    """Everything that determines one symbolic dataset."""

    formula: int
    noise_features: int
    label_noise: float
    n_samples: int
    seed: int

    def seed_sequence(self) -> np.random.SeedSequence:
        # Integers only: label noise enters as micro-units so the stream is exact.
        return np.random.SeedSequence(
            [self.formula, self.noise_features, round(self.label_noise * 1_000_000), self.n_samples, self.seed]
        )


@dataclass
class SymbolicData:
    """A generated dataset, split 4:1 into train and test."""

    spec: SymbolicDataSpec
    formula: Formula
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    y_test_clean: np.ndarray
    columns: np.ndarray  # columns[j] = variable index of column j (< m: predictive)

    @property
    def n_features(self) -> int:
        return self.x_train.shape[1]

    @property
    def truth(self) -> np.ndarray:
        """Column indices of the predictive features, in variable order a, b, c, ..."""
        m = self.formula.n_vars
        order = np.argsort(self.columns)
        return order[:m]

    def ground_truth(self, kind: str, x: np.ndarray, steps: int = 10) -> np.ndarray:
        """Exact attributions of ``kind`` ('gradient', 'ablation', 'path') for rows
        of ``x`` (in column layout), zero on noise features."""
        predictive = x[:, self.truth].astype(np.float64)
        if kind == "gradient":
            values = self.formula.gradient(predictive)
        elif kind == "ablation":
            values = self.formula.ablation(predictive)
        elif kind == "path":
            values = self.formula.path_sum(predictive, steps)
        else:
            raise ValueError(f"unknown ground-truth kind {kind!r}")
        out = np.zeros(x.shape, dtype=np.float64)
        out[:, self.truth] = values
        return out


def generate(spec: SymbolicDataSpec) -> SymbolicData:
    """Generate the dataset described by ``spec`` deterministically."""
    if spec.n_samples < 10:
        raise ValueError("n_samples must be at least 10")
    if spec.noise_features < 0 or spec.label_noise < 0:
        raise ValueError("noise_features and label_noise must be non-negative")
    formula = get_formula(spec.formula)
    rng = np.random.default_rng(spec.seed_sequence())
    m, n = formula.n_vars, spec.noise_features
    raw = np.clip(rng.standard_normal((spec.n_samples, m + n)) * FEATURE_STD, -1.0, 1.0)
    clean = formula(raw[:, :m])
    noisy = clean + rng.standard_normal(spec.n_samples) * spec.label_noise
    columns = rng.permutation(m + n)
    x = raw[:, columns].astype(np.float32)
    n_train = int(round(spec.n_samples * TRAIN_FRACTION))
    return SymbolicData(
        spec=spec,
        formula=formula,
        x_train=x[:n_train],
        y_train=noisy[:n_train].astype(np.float32),
        x_test=x[n_train:],
        y_test=noisy[n_train:].astype(np.float32),
        y_test_clean=clean[n_train:].astype(np.float32),
        columns=columns,
    )
