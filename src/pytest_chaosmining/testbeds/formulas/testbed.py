"""The symbolic models as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`):
the symbolic suite is built on it, and the suites that compose symbolic models (saliency)
reach them through it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.testbeds.formulas.cases import SUITE, SymbolicCase, TrainedSymbolicModel, plan_cases
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe
    from pytest_chaosmining.suite_kit.seam import DomainPick
    from pytest_chaosmining.testbeds.formulas import run_models, scoring
else:  # the heavy halves, loaded on first use
    run_models = lazy_module("pytest_chaosmining.testbeds.formulas.run_models")
    scoring = lazy_module("pytest_chaosmining.testbeds.formulas.scoring")


class FormulaTestbed:
    """MLPs trained per formula × noise condition × seed, scored by FPrec."""

    name = SUITE
    #: prediction quality and the scores compared between models (the first is judged)
    quality_metric = "uscore"
    compared = ("fprec",)
    model_records = ("train_seconds",)

    def model(self, run: RunView, case: SymbolicCase) -> TrainedSymbolicModel:
        """The trained model of ``case`` (shared with the cost and saliency suites)."""
        return run_models.run_model(run, case)

    def train_together(self, run: RunView, cases: Sequence[SymbolicCase]) -> None:
        """With ensembles on (``--chaosmining-ensemble``), train those of ``cases``
        not yet cached as batched ensembles, one per shape and training mode."""
        run_models.train_together(run, cases)

    def quality(self, model: TrainedSymbolicModel) -> float:
        """Prediction quality: UScore of the test predictions."""
        return float(model.uscore)

    def chance(self, model: TrainedSymbolicModel) -> float:
        """FPrec of a ranking that knows nothing: k / features."""
        return len(model.data.truth) / model.data.n_features

    def unlearned_keys(self, case: SymbolicCase) -> tuple[str, ...]:
        """None: every symbolic model is expected to learn."""
        return ()

    def bar_key_of(self, case: SymbolicCase) -> str:
        """The bar key of ``case``: its formula (``f02``)."""
        return f"f{case.formula:02d}"

    def score(self, run: RunView, model: TrainedSymbolicModel, explainer: Explainer) -> dict[str, object]:
        """:func:`.scoring.evaluate` on the session's device (a built-in's from the derived cache)."""
        return run.results.evaluated(
            SUITE,
            {"model": model.case.training_config(run.runtime.device.type), "weights": weights_digest(model.model)},
            explainer,
            lambda: scoring.evaluate(model, explainer, run.runtime.device),
            (Cost,),
        )

    def probe(self, trained: TrainedSymbolicModel, samples: int) -> Probe:
        """The first ``samples`` test rows of ``trained`` (:func:`.scoring.probe`)."""
        return scoring.probe(trained, samples)

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score: none."""
        return ()

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[SymbolicCase]:
        """Seed-0 standard cases of the tier's default condition for the picked formulas."""
        return [c for c in plan_cases(SYMBOLIC[tier], 1) if self.bar_key_of(c) in pick.keys]


#: the formulas testbed
FORMULA_MODELS = FormulaTestbed()
