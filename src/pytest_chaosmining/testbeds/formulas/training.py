"""Training or loading a symbolic case's MLP (torch at the top: the heavy half of the
formulas testbed, which :mod:`.cases` declares and :mod:`.run_models` runs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from pytest_chaosmining.core.metrics.attribution import uscore
from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor
from pytest_chaosmining.testbeds.formulas.cases import SUITE, SymbolicCase, TrainedSymbolicModel, symbolic_code
from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate
from pytest_chaosmining.testbeds.formulas.ensemble import ensemble_config
from pytest_chaosmining.testbeds.formulas.models import MLPRegressor

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache


def trained_model(
    case: SymbolicCase,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[[int, int, float, Any], None] | None = None,
    together: bool = False,
) -> TrainedSymbolicModel:
    """Load ``case``'s model from the cache or train it; score its test predictions.
    ``together``: the entry of the model trained in an ensemble
    (:mod:`pytest_chaosmining.testbeds.formulas.ensemble`, which trains it first)."""
    data = generate(SymbolicDataSpec(case.formula, case.noise_features, case.label_noise, case.n_samples, case.seed))

    def build() -> torch.nn.Module:
        return untrained_model(case, data.n_features)

    def fit(model: torch.nn.Module) -> float:
        x = torch.from_numpy(data.x_train).to(device)
        y = torch.from_numpy(data.y_train).to(device)
        settings = RegressionTraining(case.epochs, case.lr, case.optimizer)
        return train_regressor(model, x, y, settings, seed=case.seed, progress=progress, guide=case.guide)

    def check(model: torch.nn.Module) -> float:
        with torch.no_grad():
            pred = model(torch.from_numpy(data.x_test).to(device)).cpu().numpy().ravel()
        return float(uscore(pred, data.y_test_clean))

    config = ensemble_config(case, device.type) if together else case.training_config(device.type)
    model, meta = cache.model(SUITE, config, build, fit, device, symbolic_code(together), check)
    return TrainedSymbolicModel(case, model, data, check(model), float(meta["train_seconds"]))


def untrained_model(case: SymbolicCase, n_features: int) -> Any:
    """``case``'s MLP as initialised from ``case.seed``, before training, in eval mode."""
    torch.manual_seed(case.seed)
    return MLPRegressor(n_features, case.width, case.depth, case.dropout).eval()
