"""The symbolic-function suite: its cases, its models and its measurements.

A :class:`SymbolicCase` is one trained model (formula × condition × model
config × seed).  The pytest glue parametrises over cases × explainers and
calls :func:`trained_model` and :func:`evaluate` here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chaosmining.attribution_context import TABULAR_REGRESSION, tabular_context
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import SaliencyGuided, guided_model_id, training_key
from pytest_chaosmining.suites import Calibration, Condition, SuiteDefaults, sharded
from pytest_chaosmining.suites.symbolic import report
from pytest_chaosmining.suites.symbolic.tiers import SYMBOLIC, SymbolicTier

if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.session import ChaosminingSession
    from pytest_chaosmining.suites import DomainPick

SUITE = "symbolic"


def symbolic_code(together: bool = False) -> tuple[ModuleType, ...]:
    """The modules whose source enters the cache key of a symbolic model
    (``together``: one trained in a batched ensemble, whose trainer enters it too)."""
    from pytest_chaosmining.core.training import ensemble
    from pytest_chaosmining.core.training import regression as training
    from pytest_chaosmining.suites.symbolic import data, formulas, models

    return (formulas, data, models, training) + ((ensemble,) if together else ())


@dataclass(frozen=True)
class SymbolicCase:
    """One model of the symbolic suite: data, model and training settings, seed."""

    formula: int
    noise_features: int
    label_noise: float
    n_samples: int
    width: int
    depth: int
    dropout: float
    optimizer: str
    lr: float
    epochs: int
    seed: int
    guide: SaliencyGuided | None = None  # saliency guided training; None: standard

    @property
    def model_id(self) -> str:
        """Readable model name, e.g. ``mlp3x100-lr0.001-e1000`` or
        ``mlp3x100-sgd-lr0.01-do0.1-e1000-sg`` (saliency guided)."""
        parts = [f"mlp{self.depth}x{self.width}"]
        if self.optimizer != "adam":
            parts.append(self.optimizer)
        parts.append(f"lr{self.lr:g}")
        if self.dropout:
            parts.append(f"do{self.dropout:g}")
        parts.append(f"e{self.epochs}")
        return guided_model_id("-".join(parts), self.guide)

    @property
    def condition_id(self) -> str:
        return f"f{self.formula:02d}-nf{self.noise_features}-ln{self.label_noise:g}-n{self.n_samples}"

    @property
    def id(self) -> str:
        return f"{self.condition_id}-{self.model_id}-s{self.seed}"

    def explainer_id(self, explainer: str) -> str:
        """Test id of ``explainer`` on this model."""
        return f"{self.condition_id}-{self.model_id}-{explainer}-s{self.seed}"

    def condition(self) -> dict[str, Any]:
        """The fields reported beside every result."""
        return {
            "formula": self.formula,
            "noise_features": self.noise_features,
            "label_noise": self.label_noise,
            "n_samples": self.n_samples,
            "width": self.width,
            "depth": self.depth,
            "dropout": self.dropout,
            "optimizer": self.optimizer,
            "lr": self.lr,
            "epochs": self.epochs,
        }

    def training_config(self, device_type: str) -> dict[str, Any]:
        """Everything that affects the trained weights (the cache key)."""
        return training_key(SUITE, self, device_type)


def plan_cases(tier: SymbolicTier, seeds: Seeds | None = None, sweeps: list[str] | None = None) -> list[SymbolicCase]:
    """Default condition for every formula and seed, plus the selected one-factor sweeps."""
    base: dict[str, Any] = dict(
        noise_features=tier.noise_features,
        label_noise=tier.label_noise,
        n_samples=tier.n_samples,
        width=tier.width,
        depth=tier.depth,
        dropout=tier.dropout,
        optimizer=tier.optimizer,
        lr=tier.lr,
        epochs=tier.epochs,
    )
    variants = [base]
    for factor in sweeps or []:
        if factor not in tier.sweeps:
            raise KeyError(f"no sweep {factor!r} in this tier; available: {sorted(tier.sweeps)}")
        for value in tier.sweeps[factor]:
            variant = {**base, factor: value}
            if variant not in variants:
                variants.append(variant)
    n_seeds = seed_range(tier.seeds, seeds)
    return [SymbolicCase(formula=f, seed=s, **v) for v in variants for f in tier.formulas for s in n_seeds]


@dataclass
class TrainedSymbolicModel:
    """A trained (or cached) model with its data and prediction quality."""

    case: SymbolicCase
    model: Any
    data: Any
    uscore: float
    train_seconds: float


def trained_model(
    case: SymbolicCase,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[[int, int, float, Any], None] | None = None,
    together: bool = False,
) -> TrainedSymbolicModel:
    """Load ``case``'s model from the cache or train it; score its test predictions.
    ``together``: the entry of the model trained in an ensemble
    (:mod:`pytest_chaosmining.suites.symbolic.ensemble`, which trains it first)."""
    import torch

    from pytest_chaosmining.core.metrics.attribution import uscore
    from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor
    from pytest_chaosmining.suites.symbolic.data import SymbolicDataSpec, generate

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

    from pytest_chaosmining.suites.symbolic.ensemble import ensemble_config

    config = ensemble_config(case, device.type) if together else case.training_config(device.type)
    model, meta = cache.model(SUITE, config, build, fit, device, symbolic_code(together), check)
    return TrainedSymbolicModel(case, model, data, check(model), float(meta["train_seconds"]))


def untrained_model(case: SymbolicCase, n_features: int) -> Any:
    """``case``'s MLP as initialised from ``case.seed``, before training, in eval mode."""
    import torch

    from pytest_chaosmining.suites.symbolic.models import MLPRegressor

    torch.manual_seed(case.seed)
    return MLPRegressor(n_features, case.width, case.depth, case.dropout).eval()


def evaluate(trained: TrainedSymbolicModel, explainer: Explainer, device: torch.device) -> dict[str, Any]:
    """Attribute the test set with ``explainer``; return FPrec, the FPrec gained over
    the same explainer on the untrained model (a ranking that ignores the model,
    such as a fixed column prior, gains nothing), attribution UScore against the
    matching exact ground truth (if the explainer declares one) and cost."""
    import torch

    from pytest_chaosmining.core.metrics.attribution import attribution_uscore, fprec
    from pytest_chaosmining.explainers import IG_STEPS, attribute
    from pytest_chaosmining.timing import timed

    data = trained.data
    inputs = torch.from_numpy(data.x_test).to(device)
    context = tabular_context(SUITE, data.x_train, device)
    attr, cost = timed(lambda: attribute(explainer, trained.model, inputs, 0, context), device)
    attr_np = attr.cpu().numpy().astype(np.float64)
    out: dict[str, Any] = {"fprec": fprec(attr_np, data.truth), "cost": cost}
    untrained = untrained_model(trained.case, data.n_features).to(device)
    before = (
        timed(lambda: attribute(explainer, untrained, inputs, 0, context), device)[0].cpu().numpy().astype(np.float64)
    )
    out["untrained_fprec"] = fprec(before, data.truth)
    out["training_gain"] = out["fprec"] - out["untrained_fprec"]
    if explainer.ground_truth:
        n_steps = explainer.attribute_kwargs.get("n_steps", IG_STEPS)
        steps = int(n_steps) if isinstance(n_steps, int | float) else IG_STEPS
        truth = data.ground_truth(explainer.ground_truth, data.x_test, steps=steps)
        out["attr_uscore"] = attribution_uscore(attr_np, truth)
    return out


def cost_case(tier: SymbolicTier) -> SymbolicCase:
    """The model the cost suite times explainers on: formula 2 (one predictive
    feature) at the tier's default condition, seed 0 — at the paper tier a
    2,000 × 101 test set, as in ChaosMining Figure 5."""
    return plan_cases(dataclasses.replace(tier, formulas=(2,)), seeds=1)[0]


def _formula_key(condition: Condition) -> str:
    return f"f{int(str(condition['formula'])):02d}"


class SymbolicSuite(SuiteDefaults):
    """Symbolic functions (ChaosMining §3.1): FPrec of each explainer on MLPs
    trained per formula × noise condition × seed."""

    report = report
    name = SUITE
    shapes = (TABULAR_REGRESSION,)
    case_arg = "symbolic_case"
    score_metric = "fprec"
    metrics = (
        *judged("fprec", "training_gain", key=_formula_key),
        *judged("uscore"),
        *reported("attr_uscore", "untrained_fprec"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    #: for the saliency suite: prediction quality and the scores compared (the first is judged)
    quality_metric = "uscore"
    compared = ("fprec",)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(SYMBOLIC[tier].seeds, seeds)

    def plan(self, session: ChaosminingSession) -> list[SymbolicCase]:
        return session.per_training(
            plan_cases(SYMBOLIC[session.tier], session.settings.seeds, list(session.settings.sweeps))
        )

    def model(self, session: ChaosminingSession, case: SymbolicCase) -> TrainedSymbolicModel:
        """The trained model of ``case``, trained at most once (and cached on disk);
        with ensembles on, the run's models of its shape train together first."""
        from pytest_chaosmining.suites.symbolic.ensemble import eligible

        def load() -> TrainedSymbolicModel:
            together = session.placement.ensemble and eligible(case)
            if together:
                cases = session.selection.cases(SUITE, sharded(session, SUITE, self.plan(session)))
                self.train_together(session, cases + ([] if case in cases else [case]))  # the cost suite's, say
            return trained_model(case, session.cache, session.device, session.progress(f"symbolic {case.id}"), together)

        return session.memo(case, load)

    def train_together(self, session: ChaosminingSession, cases: Sequence[SymbolicCase]) -> None:
        """With ensembles on (``--chaosmining-ensemble``), train those of ``cases``
        not yet cached as batched ensembles, one per shape and training mode."""
        from pytest_chaosmining.suites.symbolic.ensemble import train_groups

        if session.placement.ensemble:
            train_groups(
                cases,
                session.cache,
                session.device,
                untrained_model,
                symbolic_code(together=True),
                session.progress(f"symbolic ensembles ({len(cases)} models)"),
            )

    def quality(self, model: TrainedSymbolicModel) -> float:
        """Prediction quality: UScore of the test predictions."""
        return float(model.uscore)

    def chance(self, model: TrainedSymbolicModel) -> float:
        """FPrec of a ranking that knows nothing: k / features."""
        return len(model.data.truth) / model.data.n_features

    def where(self, case: SymbolicCase) -> str:
        """The threshold key of ``case``: its formula (``f02``)."""
        return f"f{case.formula:02d}"

    def score(self, session: ChaosminingSession, model: TrainedSymbolicModel, explainer: Explainer) -> dict[str, Any]:
        """:func:`evaluate` on the session's device."""
        from pytest_chaosmining.core.metrics.cost import Cost
        from pytest_chaosmining.core.storage.derived import weights_digest

        return session.reuse.evaluated(
            SUITE,
            {"model": model.case.training_config(session.device.type), "weights": weights_digest(model.model)},
            explainer,
            lambda: evaluate(model, explainer, session.device),
            (Cost,),
        )

    def model_checks(self, session: ChaosminingSession) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score: none."""
        return ()

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[SymbolicCase]:
        """Seed-0 standard cases of the tier's default condition for the picked formulas."""
        return [c for c in plan_cases(SYMBOLIC[tier], 1) if self.where(c) in pick.keys]
