"""The baseline rule: what decides, for one result of this run against the baseline's,
regressed, changed or nothing.  The run's judge and ``chaosmining-compare`` ask the same
object, so a file judged by either gets the same verdicts; a new calibrated parameter of
the rule touches this module and the suites' thresholds files only.  The maps' drift is
decided by :func:`~pytest_chaosmining.verdict.drift.drift_verdict`, which reads its bars
through the rule too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_chaosmining.core.metrics.catalog import Metric
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.verdict.baseline import (
    DEFAULT_MAX_SLOWDOWN,
    Baseline,
    CostRegression,
    Drop,
    PairedDrop,
    SampleDrift,
)
from pytest_chaosmining.verdict.thresholds import Thresholds

#: the allowed drop below a baseline of a metric without a calibrated one (``[<suite>.<tier>.max_drop]``)
DEFAULT_MAX_DROP = 0.02


@dataclass(frozen=True)
class CalibratedDrops:
    """The baseline rule's calibrated parameters at ``tier``, as the suites' thresholds files
    hold them: ``[<suite>.<tier>.max_drop]`` (per metric, how far a score may fall),
    ``[<suite>.<tier>.paired_drop]`` (``t`` and each metric's ``cap``) and
    ``[<suite>.<tier>.sample_drift]`` (``floor`` and ``allowed``).  A new calibrated parameter
    is read here and written in the TOML (by its calibration), nowhere else."""

    thresholds: Thresholds
    tier: str

    def allowed(self, suite: str, metric: str) -> float:
        """How far ``metric`` may fall below a baseline's value (calibrated on benign changes:
        benchmarks/mutations/benign_calibrate.py), else :data:`DEFAULT_MAX_DROP`."""
        table = self.thresholds.baseline_table(suite, self.tier, "max_drop")
        return float(table.get(metric, table.get("default", DEFAULT_MAX_DROP)))

    def calibrated(self, suite: str, metric: str) -> bool:
        """Whether the table sets ``metric``'s allowed drop (calibrated on benign changes), so
        that a result without a bar is compared against a baseline too."""
        return metric in self.thresholds.baseline_table(suite, self.tier, "max_drop")

    def compares_unbarred(self, suite: str, metric: str) -> bool:
        """Whether a result of ``metric`` without a bar is compared against a baseline: its drop
        is calibrated and ``suite`` is not report-only at this tier."""
        return self.calibrated(suite, metric) and not self.thresholds.report_only([suite], self.tier)

    def paired(self, suite: str, metric: str) -> PairedDrop | None:
        """The paired rule of ``metric``'s drops (``t`` and the metric's cap), None where the
        table sets none (the allowed drop alone decides)."""
        table = self.thresholds.baseline_table(suite, self.tier, "paired_drop")
        if "t" not in table or metric not in table:
            return None
        return PairedDrop(float(table["t"]), float(table[metric]))

    def sample_drift(self, suite: str) -> SampleDrift | None:
        """How far single samples' maps may move against a baseline (``floor`` and ``allowed``),
        None where the table sets none (the mean agreement alone decides)."""
        table = self.thresholds.baseline_table(suite, self.tier, "sample_drift")
        if "floor" not in table:
            return None
        return SampleDrift(float(table["floor"]), int(table.get("allowed", 0)))


@dataclass(frozen=True)
class BaselineRule:
    """How this run's records are judged against ``baseline`` at ``tier``: a score's allowed
    drop (``max_drop`` for every metric where given, else each metric's calibrated one in
    ``thresholds``) and its paired rule, and the allowed growth of a gated cost
    (``max_slowdown``)."""

    baseline: Baseline
    thresholds: Thresholds
    tier: str
    #: one allowed drop for every metric (``--chaosmining-max-drop``); None: each metric's calibrated one
    max_drop: float | None = None
    max_slowdown: float = DEFAULT_MAX_SLOWDOWN

    @property
    def drops(self) -> CalibratedDrops:
        """The rule's calibrated parameters at this tier."""
        return CalibratedDrops(self.thresholds, self.tier)

    def allowed_drop(self, suite: str, metric: str) -> float:
        """How far ``metric`` of ``suite`` may fall below the baseline's value."""
        return self.max_drop if self.max_drop is not None else self.drops.allowed(suite, metric)

    def paired(self, suite: str, metric: str) -> PairedDrop | None:
        """The paired rule of ``metric``'s drops, where calibrated at this tier."""
        return self.drops.paired(suite, metric)

    def score(self, record: Record, metric: Metric) -> Drop:
        """Whether ``record`` (of the judged ``metric``) regressed or changed against the
        baseline's value of the same test (:meth:`Baseline.drop`, decided once)."""
        return self.baseline.drop(
            record, metric, self.allowed_drop(record.suite, record.metric), self.paired(record.suite, record.metric)
        )

    def compares_unbarred(self, record: Record, metric: Metric | None, control: bool) -> bool:
        """Whether ``record``, a result without a bar, is compared all the same: of a judged
        metric whose drop is calibrated at this tier, outside a report-only suite, and not
        the random control's (a condition whose bar is off must not fall below its own
        earlier value)."""
        return (
            metric is not None
            and metric.judged
            and not control
            and self.drops.compares_unbarred(record.suite, record.metric)
        )

    def improved(self, record: Record) -> bool:
        """Whether ``record`` (a judged result) rose beyond its allowed drop above the
        baseline's value of the same test."""
        old = self.baseline.judged.get(record.key())
        return old is not None and record.value > old.value + self.allowed_drop(record.suite, record.metric)

    def cost(self, record: Record) -> str | None:
        """A message where ``record`` (a gated cost of one case) grew grossly beyond the
        baseline's (:meth:`Baseline.cost_regression`: it fails the case's own test)."""
        return self.baseline.cost_regression(record, self.max_slowdown)

    def cost_worth_rechecking(self, record: Record) -> bool:
        """Whether a first measurement of ``record`` could fail its model's median and is
        measured again before it is recorded (:meth:`Baseline.cost_worth_rechecking`)."""
        return self.baseline.cost_worth_rechecking(record, self.max_slowdown)

    def costs(self, records: Sequence[Record]) -> list[CostRegression]:
        """The explainers whose work on a model grew beyond the allowed slowdown: the median
        of their cases against the baseline's (:meth:`Baseline.cost_group_regressions`)."""
        return self.baseline.cost_group_regressions(records, self.max_slowdown)
