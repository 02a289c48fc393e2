"""The formulas testbed bound to its heavy half (its models' training and scoring, torch
at their top): what a run trains and scores with, and the suites that compose symbolic
models (cost, saliency) reach."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.testbeds.formulas import run_models, scoring
from pytest_chaosmining.testbeds.formulas.cases import SUITE, SymbolicCase, TrainedSymbolicModel
from pytest_chaosmining.testbeds.formulas.testbed import FormulaTestbed

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe


class FormulaModels(FormulaTestbed):
    """The formulas testbed with its models: trains or loads them, scores an explainer, probes."""

    def model(self, run: RunView, case: SymbolicCase) -> TrainedSymbolicModel:
        """The trained model of ``case`` (shared with the cost and saliency suites)."""
        return run_models.run_model(run, case)

    def train_together(self, run: RunView, cases: Sequence[SymbolicCase]) -> None:
        """With ensembles on (``--chaosmining-ensemble``), train those of ``cases``
        not yet cached as batched ensembles, one per shape and training mode."""
        run_models.train_together(run, cases)

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


#: the formulas testbed, bound
FORMULA_MODELS = FormulaModels()
