"""Metrics, each declared once: which way is better, whether a bar judges it,
how a baseline compares it.

A suite declares the metrics it records (``Suite.metrics``); the costs every
suite records are declared here (:data:`COSTS`).  The judge refuses to judge a
metric its suite did not declare as judged, the baseline compares every judged
result by its declared direction (and every gated cost by its declared slack),
and the calibration tool sets bars for the declared metrics that have a bar key.
There is no second list to forget a metric in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

#: a record's condition (its fields) → the key its bar is looked up under (``f03``, ``SBRP``, …)
BarKeyOf = Callable[[Mapping[str, object]], str]
#: a tier → the size of the evaluation set a model trained in the run decides a metric over
DecisionsAt = Callable[[str], int]


class UndeclaredMetric(KeyError):
    """A metric was judged or gated that its suite does not declare so."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Metric:
    """One metric of a suite's records.

    ``judged``: a bar (a lower bound: higher is better) may judge it, and a
    baseline compares it unless ``against_baseline`` is False (a property of the
    explainer's own maps, judged by its bar alone: its history adds nothing but the
    noise of a discrete share, and it applies where the maps allow, so its absence
    is no regression: the scores beside it are compared and missed); ``bar_key``: the
    bar key of a record's condition, for the
    metrics the calibration tool calibrates; ``slack``: for a cost, the growth
    always allowed on top of ``--chaosmining-max-slowdown`` when it is gated
    against a baseline (None: reported only); ``decisions``: for a value a model trained or
    an optimisation run in the run decides (an accuracy over an evaluation set), that set's
    size at a tier: on another CPU kind a few of its decisions may fall the other way
    (:mod:`~pytest_chaosmining.core.cross_cpu`); ``unit`` for messages."""

    name: str
    higher_is_better: bool | None = True
    judged: bool = False
    bar_key: BarKeyOf | None = None
    against_baseline: bool = True
    #: a result of it the baseline judged with a bar and this run does not produce is missing, even where
    #: the baseline does not compare its value (a check of the maps' own merit gone: a map now unsigned
    #: has no sign check); False for the drift metrics, which exist only against a baseline
    missed_when_gone: bool = True
    slack: float | None = None
    decisions: DecisionsAt | None = None
    unit: str = ""

    def __post_init__(self) -> None:
        if self.judged and self.higher_is_better is not True:
            raise ValueError(f"metric {self.name!r}: bars are lower bounds, so a judged metric is higher-is-better")
        if self.bar_key is not None and not self.judged:
            raise ValueError(f"metric {self.name!r}: a bar key belongs to a judged metric")

    @property
    def gated_cost(self) -> bool:
        """Whether a baseline gates its growth (a time or memory)."""
        return self.slack is not None


def judged(*names: str, bar_key: BarKeyOf | None = None) -> tuple[Metric, ...]:
    """Judged metrics (higher is better), calibrated under ``bar_key`` when given."""
    return tuple(Metric(name, judged=True, bar_key=bar_key) for name in names)


def own_merit(*names: str) -> tuple[Metric, ...]:
    """Judged metrics of an explainer's own merit (higher is better): a bar judges them, a
    baseline does not compare their values, and one the baseline judged that this run does not
    produce is missing (a map that turned unsigned lost its sign check: a regression)."""
    return tuple(Metric(name, judged=True, against_baseline=False) for name in names)


def drift_metrics() -> tuple[Metric, ...]:
    """The drift metrics of a suite that keeps its maps' fingerprint: ``map_agreement``,
    ``sample_agreement``, ``size_agreement``, ``outline_kept``, ``signs_kept`` and
    ``classes_kept`` measure this run against
    its baseline, so a bar judges them while the baseline's own values of them are neither
    compared nor missed, nor are they new; the
    ``fingerprint``, the ``outline`` of every explained sample and the explainer's
    ``self_agreement`` are recorded, and a declared sampler's own noise on the case."""
    compared = tuple(
        Metric(name, judged=True, against_baseline=False, missed_when_gone=False)
        for name in (
            "map_agreement",
            "sample_agreement",
            "size_agreement",
            "outline_kept",
            "signs_kept",
            "classes_kept",
        )
    )
    noise = reported("noise_agreement", "noise_sample_agreement", "noise_sign_share") + reported(
        "noise_outline_change", higher_is_better=False
    )
    return (*compared, *reported("fingerprint", "outline", "self_agreement"), *noise)


def reported(*names: str, higher_is_better: bool | None = True) -> tuple[Metric, ...]:
    """Metrics recorded and reported, never judged."""
    return tuple(Metric(name, higher_is_better=higher_is_better) for name in names)


def retrained(*names: str, decisions: DecisionsAt) -> tuple[Metric, ...]:
    """Metrics recorded and reported, never judged, that a model trained (or an optimisation
    run) in the run decides over an evaluation set of ``decisions(tier)`` samples."""
    return tuple(Metric(name, decisions=decisions) for name in names)


#: what every explainer test records of its cost; ``cpu_ms`` (the process's CPU time) is the
#: time a baseline gates: wall time on a shared runner moves with the load of the other core
COSTS = (
    Metric("time_ms", higher_is_better=False, unit="ms"),
    Metric("cpu_ms", higher_is_better=False, slack=20.0, unit="ms"),
    Metric("peak_mem_mb", higher_is_better=False, slack=16.0, unit="MiB"),
    Metric("train_seconds", higher_is_better=False, unit="s"),
    Metric("fit_seconds", higher_is_better=False, unit="s"),
    Metric("params_m", higher_is_better=None, unit="M"),
)


class MetricCatalog:
    """The declared metrics of the run's suites (and :data:`COSTS` in every suite)."""

    def __init__(self, declared: Mapping[str, Iterable[Metric]]):
        self._metrics: dict[tuple[str, str], Metric] = {}
        self.suites = frozenset(declared)
        for suite, metrics in declared.items():
            for metric in (*COSTS, *metrics):
                self._metrics[(suite, metric.name)] = metric

    def get(self, suite: str, name: str) -> Metric | None:
        """The declaration of ``name`` in ``suite``, if any.  A suite of a user's own
        tests (judging through the ``chaosmining_judge`` fixture) declares nothing:
        its costs are the declared ones and anything else it judges is a judged,
        higher-is-better metric (bars are lower bounds)."""
        found = self._metrics.get((suite, name))
        if found is None and suite not in self.suites:
            found = next((m for m in COSTS if m.name == name), None) or Metric(name, judged=True)
        return found

    def judged(self, suite: str, name: str) -> Metric:
        """The declaration of a metric about to be judged (:class:`UndeclaredMetric` if
        ``suite`` does not declare it judged: it would escape the baseline)."""
        metric = self.get(suite, name)
        if metric is None or not metric.judged:
            raise UndeclaredMetric(
                f"metric {name!r} of suite {suite!r} is judged but not declared judged in the "
                "suite's metrics: declare it (pytest_chaosmining.core.metrics.catalog.judged) so "
                "that a baseline compares it"
            )
        return metric

    def gated_cost(self, suite: str, name: str) -> Metric | None:
        """The declaration of ``name`` if a baseline gates it as a cost, else None."""
        metric = self.get(suite, name)
        return metric if metric is not None and metric.gated_cost else None

    def is_judged(self, suite: str, name: str) -> bool:
        """Whether ``suite`` declares ``name`` judged."""
        metric = self.get(suite, name)
        return metric is not None and metric.judged


def calibrated(metrics: Iterable[Metric]) -> dict[str, BarKeyOf]:
    """Judged metric → bar key of those of ``metrics`` the calibration tool calibrates."""
    return {m.name: m.bar_key for m in metrics if m.bar_key is not None}
