"""The symbolic models as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`),
declared: name, quality, chance, bar keys, guided cases (light; :mod:`.bound` binds
their training and scoring)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_chaosmining.testbeds.formulas.cases import SUITE, SymbolicCase, TrainedSymbolicModel, plan_cases
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import DomainPick


class FormulaTestbed:
    """MLPs trained per formula × noise condition × seed, scored by FPrec."""

    name = SUITE
    #: prediction quality and the scores compared between models (the first is judged)
    quality_metric = "uscore"
    compared = ("fprec",)
    model_records = ("train_seconds",)

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

    def model_checks(self, run: RunView) -> tuple[str, ...]:
        """Metrics of :meth:`score` judged on every model beside the primary score: none."""
        return ()

    def guided_cases(self, tier: str, pick: DomainPick, data_dir: str | None) -> list[SymbolicCase]:
        """Seed-0 standard cases of the tier's default condition for the picked formulas."""
        return [c for c in plan_cases(SYMBOLIC[tier], 1) if self.bar_key_of(c) in pick.keys]
