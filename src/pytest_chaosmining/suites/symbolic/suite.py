"""The symbolic-function suite: its cases, its models and its measurements.

A :class:`SymbolicCase` is one trained model (formula × condition × model
config × seed).  The pytest glue parametrises over cases × explainers and
calls :func:`trained_model` and :func:`evaluate` here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chaosmining.core.metrics.attribution import attribution_uscore, fprec
from pytest_chaosmining.core.metrics.axioms import output_change, sign_agreement
from pytest_chaosmining.core.metrics.catalog import calibrated, judged, measured_against_baseline, own_merit, reported
from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.metrics.drift import fingerprint
from pytest_chaosmining.core.metrics.properties import completeness_fit, is_signed, truth_sign_agreement
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.training.modes import uncalibrated_training
from pytest_chaosmining.explainers import IG_STEPS, attribute
from pytest_chaosmining.explainers.context import TABULAR_REGRESSION, tabular_context
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.parametrize import sharded
from pytest_chaosmining.suite_kit.probe import Probe
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, ScoreCheck
from pytest_chaosmining.suite_kit.verdict import model_scored
from pytest_chaosmining.suites.symbolic import report
from pytest_chaosmining.suites.symbolic.figure4 import in_default_condition
from pytest_chaosmining.testbeds.formulas.cases import (
    SUITE,
    SymbolicCase,
    TrainedSymbolicModel,
    plan_cases,
    swept_fields,
    symbolic_code,
    trained_model,
    untrained_model,
)
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.timing import timed

# torch and the package's modules that load it are imported where used: heavy, they wait for --chaosmining.


if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.verdicts.records import Record
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import Case, DomainPick


#: steps of the exact path integral the sign check compares with (its sign, not an IG's estimate)
SIGN_PATH_STEPS = 50


def evaluate(trained: TrainedSymbolicModel, explainer: Explainer, device: torch.device) -> dict[str, Any]:
    """Attribute the test set with ``explainer``; return FPrec, the FPrec gained over
    the same explainer on the untrained model (a ranking that ignores the model,
    such as a fixed column prior, gains nothing), attribution UScore against the
    matching exact ground truth (if the explainer declares one), the sign
    agreement of its sums with the output change and how well their size fits it
    (if it declares completeness; the sign where the outputs both rose and fell),
    the agreement of a signed map's signs with the formula's (``truth_sign``, where
    the test rows give both signs), cost and a fingerprint of the maps."""
    import torch

    data = trained.data
    inputs = torch.from_numpy(data.x_test).to(device)
    context = tabular_context(SUITE, data.x_train, device)
    attr, cost = timed(lambda: attribute(explainer, trained.model, inputs, 0, context), device)
    attr_np = attr.cpu().numpy().astype(np.float64)
    out: dict[str, Any] = {"fprec": fprec(attr_np, data.truth), "cost": cost, "fingerprint": fingerprint(attr_np)}
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
    if is_signed(attr_np):
        kinds = ("gradient", "path", "ablation")
        exact = [data.ground_truth(kind, data.x_test, steps=SIGN_PATH_STEPS) for kind in kinds]
        truth_sign = truth_sign_agreement(attr_np, exact)
        if truth_sign is not None:
            out["truth_sign"] = truth_sign
    if explainer.completeness:
        change = output_change(trained.model, inputs, 0, torch.zeros_like(inputs))
        agreement = sign_agreement(attr_np.sum(axis=1), change)
        if agreement is not None:
            out["sign_agreement"] = agreement
        out["completeness"] = completeness_fit(attr_np.sum(axis=1), change)
    return out


def probe(trained: TrainedSymbolicModel, samples: int) -> Probe:
    """The first ``samples`` test rows of ``trained`` for the own-merit checks (target 0:
    the regression output)."""
    import torch

    device = next(trained.model.parameters()).device
    data = trained.data
    inputs = torch.from_numpy(data.x_test[:samples]).to(device)
    return Probe(trained.model, inputs, 0, tabular_context(SUITE, data.x_train, device))


def _formula_key(fields: CaseFields) -> str:
    return f"f{int(str(fields['formula'])):02d}"


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
        *judged("sign_agreement"),
        *measured_against_baseline("map_agreement", "sample_agreement"),
        *own_merit("completeness", "truth_sign", "batch_consistency", "equivalence"),
        *reported("attr_uscore", "untrained_fprec", "fingerprint", "self_agreement"),
    )
    calibration = Calibration(judged=calibrated(metrics))
    checks = (
        ScoreCheck("fprec"),
        ScoreCheck(
            "training_gain",
            "{what} (FPrec on the untrained model {untrained_fprec:.3f}: does the explainer depend on the model?)",
        ),
        ScoreCheck(
            "sign_agreement",
            "{what} (it declares completeness: do its attributions sum with the sign of f(x) - f(0)? "
            "0.5 is a map that ignores the sample, 0 a flipped sign)",
            when_present=True,
        ),
        ScoreCheck(
            "truth_sign",
            "{what} (its map is signed: does a feature that raises the output get a positive attribution, "
            "one that lowers it a negative one? 0.5 is a map of one sign, 0 a flipped sign)",
            when_present=True,
        ),
        ScoreCheck(
            "completeness",
            "{what} (it declares completeness: 1 - mean |sum of attributions - (f(x) - f(0))| / mean "
            "|f(x) - f(0)|; a rescaled or flipped map scores 0 or below)",
            when_present=True,
        ),
    )
    recorded = ("attr_uscore", "untrained_fprec")
    model_records = ("train_seconds",)
    #: for the saliency suite: prediction quality and the scores compared (the first is judged)
    quality_metric = "uscore"
    #: its explainer test scores on the model suites' path
    scored = model_scored
    compared = ("fprec",)

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(SYMBOLIC[tier].seeds, seeds)

    def ranked(self, records: Sequence[Record]) -> list[Record]:
        """The records of the default condition (a sweep's others are report-only)."""
        return in_default_condition(records)

    def sweeps(self, tier: str) -> tuple[str, ...]:
        """The tier's one-factor sweeps (Figure 4)."""
        return tuple(SYMBOLIC[tier].sweeps)

    def plan(self, run: RunView) -> list[SymbolicCase]:
        return run.plan.per_training(
            plan_cases(SYMBOLIC[run.plan.tier], run.plan.settings.seeds, list(run.plan.settings.sweeps))
        )

    def model(self, run: RunView, case: SymbolicCase) -> TrainedSymbolicModel:
        """The trained model of ``case``, trained at most once (and cached on disk);
        with ensembles on, the run's models of its shape train together first."""
        from pytest_chaosmining.testbeds.formulas.ensemble import eligible

        def load() -> TrainedSymbolicModel:
            together = run.runtime.ensemble and eligible(case)
            if together:
                cases = run.plan.cases(SUITE, sharded(run, SUITE, self.plan(run)))
                self.train_together(run, cases + ([] if case in cases else [case]))  # the cost suite's, say
            return trained_model(
                case,
                run.runtime.cache,
                run.runtime.device,
                run.runtime.progress(f"symbolic {case.id}"),
                together,
            )

        return run.runtime.memo(case, load)

    def train_together(self, run: RunView, cases: Sequence[SymbolicCase]) -> None:
        """With ensembles on (``--chaosmining-ensemble``), train those of ``cases``
        not yet cached as batched ensembles, one per shape and training mode."""
        from pytest_chaosmining.testbeds.formulas.ensemble import train_groups

        if run.runtime.ensemble:
            train_groups(
                cases,
                run.runtime.cache,
                run.runtime.device,
                untrained_model,
                symbolic_code(together=True),
                run.runtime.progress(f"symbolic ensembles ({len(cases)} models)"),
            )

    def quality(self, model: TrainedSymbolicModel) -> float:
        """Prediction quality: UScore of the test predictions."""
        return float(model.uscore)

    def chance(self, model: TrainedSymbolicModel) -> float:
        """FPrec of a ranking that knows nothing: k / features."""
        return len(model.data.truth) / model.data.n_features

    def bar_key(self, fields: CaseFields) -> str:
        """The formula (``f03``)."""
        return _formula_key(fields)

    def uncalibrated(self, run: RunView, case: Case) -> str | None:
        """A sweep's condition (the bars were calibrated in the tier's default one) or
        a training mode other than standard; with no noise feature, FPrec is 1 on any map."""
        assert isinstance(case, SymbolicCase)
        found = swept_fields(SYMBOLIC[run.plan.tier], case) + uncalibrated_training(case.guide)
        if case.noise_features == 0:
            found.append("every feature predictive: FPrec is 1 on any map, the untrained model's too")
        return "; ".join(found) or None

    def unlearned_keys(self, case: SymbolicCase) -> tuple[str, ...]:
        """None: every symbolic model is expected to learn."""
        return ()

    def where(self, case: SymbolicCase) -> str:
        """The threshold key of ``case``: its formula (``f02``)."""
        return f"f{case.formula:02d}"

    def score(self, run: RunView, model: TrainedSymbolicModel, explainer: Explainer) -> dict[str, Any]:
        """:func:`evaluate` on the session's device."""

        return run.results.evaluated(
            SUITE,
            {"model": model.case.training_config(run.runtime.device.type), "weights": weights_digest(model.model)},
            explainer,
            lambda: evaluate(model, explainer, run.runtime.device),
            (Cost,),
        )

    def probe(self, trained: TrainedSymbolicModel, samples: int) -> Probe:
        """The first ``samples`` test rows of ``trained`` (:func:`probe`)."""
        return probe(trained, samples)

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score: none."""
        return ()

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[SymbolicCase]:
        """Seed-0 standard cases of the tier's default condition for the picked formulas."""
        return [c for c in plan_cases(SYMBOLIC[tier], 1) if self.where(c) in pick.keys]
