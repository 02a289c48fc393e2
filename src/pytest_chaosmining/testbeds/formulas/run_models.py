"""The symbolic models of a run, shared by every suite that explains them (symbolic,
cost, saliency): one per case, trained at most once per run and cached on disk; with
ensembles on (``--chaosmining-ensemble``), the run's symbolic models of one shape
train together first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chaosmining.suite_kit.parametrize import sharded
from pytest_chaosmining.testbeds.formulas.cases import (
    SUITE,
    SymbolicCase,
    TrainedSymbolicModel,
    planned_cases,
    symbolic_code,
)
from pytest_chaosmining.testbeds.formulas.ensemble import eligible, train_groups
from pytest_chaosmining.testbeds.formulas.training import trained_model, untrained_model

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


def run_model(run: RunView, case: SymbolicCase) -> TrainedSymbolicModel:
    """The trained model of ``case`` (any suite's), trained at most once per run and cached
    on disk; with ensembles on, the run's selected symbolic models train together first."""

    def load() -> TrainedSymbolicModel:
        together = run.runtime.ensemble and eligible(case)
        if together:
            cases = run.plan.cases(SUITE, sharded(run, SUITE, planned_cases(run)))
            train_together(run, cases + ([] if case in cases else [case]))  # the cost suite's, say
        return trained_model(
            case, run.runtime.cache, run.runtime.device, run.runtime.progress(f"symbolic {case.id}"), together
        )

    return run.runtime.memo(case, load)


def train_together(run: RunView, cases: Sequence[SymbolicCase]) -> None:
    """With ensembles on, train those of ``cases`` not yet cached as batched ensembles,
    one per shape and training mode."""
    if run.runtime.ensemble:
        train_groups(
            cases,
            run.runtime.cache,
            run.runtime.device,
            untrained_model,
            symbolic_code(together=True),
            run.runtime.progress(f"symbolic ensembles ({len(cases)} models)"),
        )
