"""Regression checks against the results.json of an earlier run.

Every judged result of the baseline (a record with a bar) is compared by its
declared direction (:mod:`pytest_chaosmining.core.metrics.catalog`); every gated
cost by its declared slack.  A judged result of the baseline that this run did
not judge (missing, newly skipped, newly not applicable) is a regression too:
:meth:`Baseline.compare` lists it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chaosmining.core.machine import Machine, cost_differences, describe, stack_label
from pytest_chaosmining.core.metrics.catalog import Metric, MetricCatalog
from pytest_chaosmining.core.records import NOISE_METRICS, OUTLINE, Record
from pytest_chaosmining.core.results_file import NotAResultsFile, read_results
from pytest_chaosmining.verdict.rotation import PROBE_CHECK, ROTATION, Rotation, record_case
from pytest_chaosmining.verdict.where import in_classes

if TYPE_CHECKING:
    from pytest_chaosmining.core.metrics.drift import Agreement, DrawNoise, OutlineChange


#: a record key (:meth:`Record.key`)
Key = tuple[str | int, ...]
#: fewer paired samples than this: no paired judgement (the allowed drop alone decides)
MIN_PAIRED = 8
#: the largest growth of a gated cost over the baseline's, as a factor (``--chaosmining-max-slowdown``)
DEFAULT_MAX_SLOWDOWN = 2.0
#: one case's cost fails its own test beyond this many times the allowed slowdown (a gross
#: regression); the explainer's work on a model is judged by the median of its cases, at the
#: run's end (:meth:`Baseline.cost_group_regressions`): one call's time or peak memory varies
#: up to 1.5x between calls of the same code, a median over a model's cases far less
CASE_GROSS = 2.0
#: maps whose agreement with the baseline's is below this moved (float rounding across machines: ~1e-12)
MOVED = 1.0 - 1e-6


@dataclass(frozen=True)
class PairedDrop:
    """How a drop beyond the allowed one is judged where both runs kept the per-sample
    values (an image's IoU, a clip's hit): as a paired difference against its own
    spread.  A drop whose paired t statistic is at most ``t`` and which stays below
    ``cap`` is what harmless changes do to a discrete score (a few images' boxes move
    either way): the result *changed*, it did not regress.  Calibrated on benign
    changes (benchmarks/mutations/benign_calibrate.py)."""

    t: float
    cap: float


@dataclass(frozen=True)
class Drop:
    """A result's fall below the baseline's value: ``regression`` (its message) where it
    fails, ``change`` where it fell beyond the allowed drop within what harmless changes
    do (noted, not failed); neither where it did not fall beyond the allowed drop."""

    regression: str | None = None
    change: str | None = None


#: no fall beyond the allowed drop, or nothing to compare with
NO_DROP = Drop()


@dataclass(frozen=True)
class SampleDrift:
    """How far the maps of single explained samples may move from the baseline's: at
    most ``allowed`` samples may agree less than ``floor`` (cosine of their feature
    masses; the drift check lowers a stochastic explainer's floors: one sample's draws lie far apart).
    A change confined to some inputs (an explainer broken on one class) moves a few
    samples' maps entirely, which the mean agreement over all of them dilutes.
    Calibrated on benign changes (benchmarks/mutations/benign_calibrate.py)."""

    floor: float
    allowed: int

    def verdict(self, agreement: Agreement, floors: Sequence[float] | None = None) -> tuple[float, float, list[int]]:
        """``(value, floor, lost)``: the agreement of the sample nearest its floor (or
        furthest below it) once the ``allowed`` ones further below are set aside, that
        sample's floor, and the samples below their floors (``floors``: one per sample;
        default: :attr:`floor` for every sample).  Judged: value >= floor."""
        floors = list(floors) if floors is not None else [self.floor] * len(agreement.cosines)
        ranked = sorted(range(len(agreement.cosines)), key=lambda i: agreement.cosines[i] - floors[i])
        lost = sorted(i for i in ranked if agreement.cosines[i] < floors[i])
        if len(ranked) <= self.allowed:
            return 1.0, self.floor, lost
        worst = ranked[self.allowed]
        return agreement.cosines[worst], floors[worst], lost

    def kept(self, agreement: Agreement) -> float:
        """The agreement of the sample that moved most once the ``allowed`` ones that
        moved more are set aside, against the one :attr:`floor` (1 where there are no
        more samples than that)."""
        return self.verdict(agreement)[0]


def paired_t(old: list[float], new: list[float]) -> float:
    """The paired t statistic of the drop ``old - new`` over the samples (inf where every
    sample dropped alike, 0 where none moved)."""
    n = len(old)
    drops = [a - b for a, b in zip(old, new)]
    mean = sum(drops) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in drops) / (n - 1))
    if spread <= 1e-12 * max(1.0, abs(mean)):  # every sample moved alike (up to float rounding)
        return math.inf if mean > 1e-12 else 0.0
    return mean / (spread / math.sqrt(n))


def _fell_most(old: list[float], new: list[float], labels: list[int] | None = None, most: int = 5) -> str:
    """The samples whose values fell most, as ``index (old → new)``, and where the
    samples have classes, the classes of those that fell at least half as far as the most."""
    drops = sorted(((b - a, i) for i, (a, b) in enumerate(zip(old, new)) if a > b))
    shown = ", ".join(f"{i} ({old[i]:.2f} → {new[i]:.2f})" for _, i in drops[:most]) or "none"
    far = [i for d, i in drops if drops and d <= 0.5 * drops[0][0]]
    where = in_classes(far, labels if labels is not None and len(labels) == len(new) else None)
    return f"{shown}; those that fell far: {where}" if where else shown


@dataclass
class Comparison:
    """This run's judged results against the baseline's: ``compared`` (record and
    baseline value), ``new`` (judged here, not in the baseline) and ``missing``
    (judged in the baseline and within this run's scope, not judged here)."""

    compared: list[tuple[Record, float]] = field(default_factory=list)
    new: list[Record] = field(default_factory=list)
    missing: list[Record] = field(default_factory=list)

    def summary(self, source: str) -> str:
        """One line: compared / new / missing."""
        return (
            f"baseline {source}: compared {len(self.compared)}, new {len(self.new)}, "
            f"missing {len(self.missing)} judged results"
        )


class Baseline:
    """Values of an earlier report, looked up by :meth:`Record.key`."""

    def __init__(
        self,
        records: list[Record],
        source: str,
        catalog: MetricCatalog,
        tier: str | None = None,
        machine: Machine | None = None,
        trained_on: list[str] | None = None,
    ):
        self.catalog = catalog
        self.judged: dict[Key, Record] = {r.key(): r for r in records if r.threshold is not None}
        #: every result of a judged metric, barred or not (a condition whose bar is off for an
        #: explainer is still compared against its own earlier value by :meth:`regression`)
        self.scores: dict[Key, Record] = {
            r.key(): r for r in records if r.threshold is not None or catalog.is_judged(r.suite, r.metric)
        }
        costs = [r for r in records if catalog.gated_cost(r.suite, r.metric) is not None]
        #: the gated costs measured in its run (or not recorded either way): those a measured cost is gated against
        self.costs = {r.key(): r.value for r in costs if r.measured is not False}
        #: the gated costs its run replayed from results of an earlier run (never gated: :meth:`cost_regression`)
        self.replayed_costs = {r.key() for r in costs if r.measured is False}
        #: each explainer's median cost over the cases of one suite, model and seed (:meth:`cost_regression`)
        self.typical_costs = _typical([r for r in costs if r.key() in self.costs])
        self.fingerprints = {r.key(): r.maps for r in records if r.maps is not None}
        #: (suite, explainer) → how well the explainer's own draws agreed on each own-merit case of its run
        self.self_agreement: dict[tuple[str, str], list[float]] = {}
        for r in records:
            if r.metric == "self_agreement":
                self.self_agreement.setdefault((r.suite, r.explainer), []).append(r.value)
        #: the records that say where its own-merit checks ran (:mod:`.rotation`)
        self.rotation_records = [r for r in records if r.metric in (ROTATION, PROBE_CHECK)]
        #: the (suite, explainer, case) whose own-merit checks its run only carried: a run may leave them
        self.carried = Rotation.carried_by(records)
        #: whether its run recorded the outline of every explained sample and every declared
        #: sampler's own noise (this version's runs): an explainer it has no noise of was deterministic
        self.records_noise = any(r.metric == OUTLINE for r in records)
        self._noise: dict[Key, dict[str, float]] = {}
        fields = {metric: name for name, metric in NOISE_METRICS.items()}
        for r in records:
            if r.metric in fields:
                self._noise.setdefault(_without_metric(r), {})[fields[r.metric]] = r.value
        self.source = source
        #: the tier of the run that wrote it (None: not recorded)
        self.tier = tier
        #: the explainers it judged
        self.explainers = {r.explainer for r in self.judged.values()}
        #: the machine its costs were measured on (None: not recorded)
        self.machine = machine
        #: the device types its models were trained on (empty: not recorded)
        self.trained_on = sorted(trained_on or [])
        #: why its costs do not gate this run's (:meth:`against_machine`), None while they do
        self.costs_not_gated: str | None = None

    @classmethod
    def load(cls, path: Path, catalog: MetricCatalog) -> Baseline:
        """Read a results.json written by this plugin."""
        payload = read_results(path, samples=True)  # NotAResultsFile (a ValueError) names the file and what is wrong
        try:
            records = [Record.from_dict(r) for r in payload["records"]]
            meta = payload.get("meta", {})
            tier = meta.get("tier")
            # an older results.json records the device alone (``cpu``, ``cuda:0``): that much it compares
            machine = meta.get("machine") or (
                {"device": str(meta["device"]).split(":")[0]} if meta.get("device") else None
            )
            versions = meta.get("versions") or {}
            if machine is not None and "stack" not in machine and versions.get("torch") and versions.get("numpy"):
                # an older results.json records the stack among its versions
                machine = {**machine, "stack": stack_label(versions)}
            trained_on = [str(d) for d in meta.get("models_trained_on") or []]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            why = f"{type(exc).__name__}: {exc}"
            raise NotAResultsFile(f"{path}: not a readable chaosmining results.json ({why})") from exc
        tier_name = str(tier) if tier is not None else None
        return cls(records, str(path), catalog, tier_name, machine, trained_on)

    def other_models(self, trained_on: list[str]) -> str | None:
        """Why this baseline cannot judge a run whose models were trained on ``trained_on``
        (device types), or None where they share one or either is not recorded: models
        trained on another device only are other weights (CUDA training is not CPU
        training), so their scores and maps are not comparable.  (A CUDA run on the shipped
        CPU-trained models that trains a few of its own, IteROAR's retrained ones, shares
        the CPU's.)"""
        if not self.trained_on or not trained_on or set(self.trained_on) & set(trained_on):
            return None
        return (
            f"the baseline {self.source} judged models trained on {', '.join(self.trained_on)}, this run's were "
            f"trained on {', '.join(sorted(trained_on))}: other weights, so their results are not comparable; make "
            "a baseline with models of this run's device (or use the CPU-trained models: the shipped pack)"
        )

    def require_tier(self, tier: str) -> None:
        """ValueError where this baseline is a run of another tier than ``tier`` (their
        results cannot be compared)."""
        if self.tier is not None and self.tier != tier:
            raise ValueError(
                f"{self.source} is a {self.tier} run; this run is {tier} (their results cannot be compared)"
            )

    def against_machine(self, here: Machine) -> str | None:
        """Set how this baseline's costs gate a run on ``here`` and return a line that says
        so, or None where they gate it: only a baseline made on the same CPU model, device,
        GPU model and numerical stack gates CPU time and memory (another machine's or
        another torch's time measures the machine, not the explainer); scores and maps are
        compared either way, with the same allowed drops and drift bars."""
        if self.machine is None:
            return None
        differs = cost_differences(self.machine, here)
        if not differs:
            return None
        self.costs_not_gated = (
            f"the baseline {self.source} ran on {describe(self.machine)}, this run on {describe(here)} (another "
            f"{', '.join(differs)}): scores are compared with their allowed drops and maps with the drift bars; "
            "CPU time and memory are not compared (make the baseline from CI's own runners on this stack)"
        )
        return f"chaosmining: {self.costs_not_gated}"

    def compare(self, records: list[Record], in_scope: Callable[[Record], bool]) -> Comparison:
        """This run's judged ``records`` against the baseline's, of the metrics a
        baseline compares (a check of the maps' own merit is judged by its bar, not compared
        or new, but missing where the baseline judged it and it is gone; the maps' agreement
        exists only against a baseline: neither compared, new nor missing); a baseline result counts as
        missing only where ``in_scope`` says this run should have judged it, whether a bar
        judged it there or it was a score recorded without one (a condition whose bar is off):
        a result that existed in the baseline and is gone is a regression either way."""
        out = Comparison()
        here = {r.key(): r for r in records if r.threshold is not None and self._against_baseline(r)}
        for key, record in here.items():
            old = self.judged.get(key)
            if old is None:
                out.new.append(record)
            else:
                out.compared.append((record, old.value))
        scored = {r.key() for r in records if r.threshold is not None or self.catalog.is_judged(r.suite, r.metric)}
        out.missing = [
            r for key, r in self.scores.items() if key not in scored and in_scope(r) and self._missed_when_gone(r)
        ]
        return out

    def _missed_when_gone(self, record: Record) -> bool:
        """Whether the baseline's ``record``, gone from this run, is missing: a compared metric's,
        or a check of the maps' own merit the baseline judged with a bar (not the drift metrics)
        on a case its own-merit rotation did not only carry (:mod:`.rotation`)."""
        metric = self.catalog.get(record.suite, record.metric)
        if metric is None or metric.against_baseline:
            return True
        left = (record.suite, record.explainer, record_case(record)) in self.carried  # the rotation moved on
        return metric.missed_when_gone and record.threshold is not None and not left

    def _against_baseline(self, record: Record) -> bool:
        metric = self.catalog.get(record.suite, record.metric)
        return metric is None or metric.against_baseline

    def drop(self, record: Record, metric: Metric, max_drop: float, paired: PairedDrop | None = None) -> Drop:
        """Whether ``record`` (of the judged ``metric``: higher is better) fell more than
        ``max_drop`` below the baseline: a regression, or, with a ``paired`` rule and the
        per-sample values of both runs, a change where the drop stays within its own noise
        (paired t at most ``paired.t``) and below ``paired.cap``; :data:`NO_DROP` where it
        did not fall so far, or there is nothing to compare it with."""
        old = self.scores.get(record.key())
        if old is None or not metric.judged or not metric.against_baseline or record.value >= old.value - max_drop:
            return NO_DROP
        drop = old.value - record.value
        t = self._paired(old, record)
        below = f"{record.metric} regressed: {record.value:.4f} < baseline {old.value:.4f} - max drop {max_drop:g}"
        if paired is None or t is None:
            return Drop(
                regression=f"{below} (drop {drop:.4f}; no per-sample values to pair, so the allowed drop decided)"
            )
        n = len(old.samples or [])
        fell = _fell_most(old.samples or [], record.samples or [], record.labels)
        if t <= paired.t and drop < paired.cap:
            change = (
                f"{record.metric} changed: {record.value:.4f} against baseline {old.value:.4f} (drop {drop:.4f} beyond "
                f"the allowed {max_drop:g}, but paired t {t:.2f} <= {paired.t:g} over {n} samples and the drop below "
                f"the cap {paired.cap:g}: within what harmless changes do; samples that fell most: {fell}); if the "
                "change is intended, make this run the baseline, if not, look at those samples"
            )
            return Drop(change=change)
        decided = [f"paired t {t:.2f} > {paired.t:g} over {n} samples"] if t > paired.t else []
        decided += [f"the drop reached the cap {paired.cap:g}"] if drop >= paired.cap else []
        return Drop(
            regression=f"{below} (drop {drop:.4f}; decided by {' and '.join(decided)}: beyond what harmless changes "
            f"do; samples that fell most: {fell})"
        )

    @staticmethod
    def _paired(old: Record, new: Record) -> float | None:
        """The paired t of ``old``'s and ``new``'s samples (None where they cannot be paired)."""
        if old.samples is None or new.samples is None or len(old.samples) != len(new.samples):
            return None
        if len(old.samples) < MIN_PAIRED:
            return None
        return paired_t(old.samples, new.samples)

    def moved(self, record: Record) -> Agreement | None:
        """How far the maps of a fingerprint ``record`` moved from the baseline's: the
        per-sample :func:`~pytest_chaosmining.core.metrics.drift.map_agreement` of the
        two fingerprints (None where the baseline kept none for it)."""
        from pytest_chaosmining.core.metrics.drift import map_agreement  # numpy: never the entry module's

        then = self.fingerprints.get(record.key())
        if then is None or record.maps is None:
            return None
        return map_agreement(record.maps, then)

    def costs_compared(self, records: Sequence[Record]) -> str:
        """One line: how many of the run's gated costs were compared with the baseline's
        (measured in both runs) and why the others were not (replayed from an earlier
        run's results here or in the baseline, no baseline cost, another machine)."""
        gated = [r for r in records if self.catalog.gated_cost(r.suite, r.metric) is not None]
        if self.costs_not_gated:
            return f"costs: none of {len(gated)} compared (the baseline ran on another machine or stack)"
        measured = [r for r in gated if r.measured is not False]
        compared = sum(r.key() in self.costs for r in measured)
        there = sum(r.key() in self.replayed_costs for r in measured)
        return (
            f"costs: {compared} of {len(gated)} compared (measured in both runs); not compared: "
            f"{len(gated) - len(measured)} replayed here and {there} replayed in the baseline from an earlier "
            f"run's results (a measurement is compared only with a measurement), "
            f"{len(measured) - compared - there} without a baseline cost"
        )

    def was_deterministic(self, suite: str, explainer: str) -> bool:
        """Whether the explainer's own draws agreed on every own-merit case of ``suite`` the
        baseline's run checked (False where it checked none): noise it has now is no noise
        of the method's that a bar may make room for."""
        found = self.self_agreement.get((suite, explainer))
        return found is not None and min(found) >= MOVED

    def noise_of(self, record: Record) -> DrawNoise | None:
        """The explainer's own noise on ``record``'s case as the baseline's run measured it:
        what it recorded of a declared sampler; deterministic (1, 1, 0) where a run of this
        version recorded none (it was not declared stochastic); None where an older run
        recorded nothing."""
        from pytest_chaosmining.core.metrics.drift import DrawNoise  # numpy: never the entry module's

        found = self._noise.get(_without_metric(record))
        if found is not None and {"mean", "sample", "outlines"} <= set(found):  # signs: not in older results
            return DrawNoise(**found)
        return DrawNoise.deterministic() if self.records_noise else None

    def outline_of(self, record: Record) -> Record | None:
        """The outline kept beside the fingerprint ``record`` (None where none was)."""
        key = _without_metric(record) + (OUTLINE,)
        maps = self.fingerprints.get(key)
        if maps is None:
            return None
        return Record(
            record.suite, record.model, record.explainer, record.seed, OUTLINE, len(maps), record.case, maps=maps
        )

    def compared_size(self, record: Record) -> bool:
        """Whether its run compared the size of ``record``'s maps (the explainer promised it)."""
        return _without_metric(record) + ("size_agreement",) in self.judged

    def outline_moved(self, record: Record) -> OutlineChange | None:
        """Which explained samples' maps of an outline ``record`` changed entirely against
        the baseline's (:func:`~pytest_chaosmining.core.metrics.drift.outline_change`; None
        where the baseline kept no outline for it)."""
        from pytest_chaosmining.core.metrics.drift import outline_change  # numpy: never the entry module's

        then = self.fingerprints.get(record.key())
        if not isinstance(then, list) or not isinstance(record.maps, list):
            return None
        return outline_change(record.maps, then)

    def cost_regression(self, record: Record, max_factor: float) -> str | None:
        """A message if ``record`` (a gated cost: CPU time or peak memory) grew beyond
        :data:`CASE_GROSS` × ``max_factor`` × the baseline's value plus the metric's
        declared slack (a gross regression, which fails the case's own test), else None.
        The baseline's value is the larger of its own and the explainer's median over the
        suite's cases of the same model and seed (the same network, the same work): one
        call's time varies up to 4× between same-code cases, so a case whose baseline
        call was unusually fast would otherwise gate at a fraction of the method's cost.
        Only measurements are compared: a cost replayed from a result of an earlier run
        (the pack's, the derived cache's), here or in the baseline, is not gated."""
        metric = self.catalog.gated_cost(record.suite, record.metric)
        own = self._gated_cost(record)
        if own is None or metric is None or metric.slack is None:
            return None
        typical = self.typical_costs.get(_cost_group(record), own)
        old = max(own, typical)
        factor = CASE_GROSS * max_factor
        allowed = factor * old + metric.slack
        if record.value <= allowed:
            return None
        unit = metric.unit
        of = f"baseline {old:.1f} {unit}" + (
            f" (the explainer's median over this model's cases; this case's own {own:.1f})" if typical > own else ""
        )
        return (
            f"{record.metric} regressed: {record.value:.1f} {unit} > {factor:g} × {of} + "
            f"{metric.slack:g} {unit} ({record.value / old if old else float('inf'):.2f}× the "
            f"baseline; one case's gross gate, {CASE_GROSS:g} × the allowed slowdown)"
        )

    def cost_worth_rechecking(self, record: Record, max_factor: float) -> bool:
        """Whether ``record`` (a gated cost) is beyond ``max_factor`` × the baseline's
        measurement of its case plus the metric's slack: a case that could move its
        group's median over the gate (:meth:`cost_group_regressions`), which is
        measured again before it is recorded.  One call on a loaded machine costs up to
        2.3× a quiet one's CPU time (measured on CI: 485 ms against 209 ms), so the
        median of a model's one or two cases would otherwise judge one unconfirmed call."""
        metric = self.catalog.gated_cost(record.suite, record.metric)
        own = self._gated_cost(record)
        if own is None or metric is None or metric.slack is None:
            return False
        return record.value > max_factor * own + metric.slack

    def cost_group_regressions(self, records: Sequence[Record], max_factor: float) -> list[CostRegression]:
        """The explainers whose work on a model grew: for each group of ``records`` of one
        suite, model, explainer, seed and gated cost (:func:`_cost_group`), the median of
        its measured cases against the median of the baseline's measurements of the same
        cases, beyond ``max_factor`` × it plus the metric's slack.  A median over a model's
        cases judges the work, not one call's luck (one call varies up to 1.5×); the
        cases are paired, so a shard judges its own cases alike."""
        now: dict[tuple[str, str, str, int, str], list[tuple[float, float, str]]] = {}
        for record in records:
            then = self._gated_cost(record)
            if then is not None:
                now.setdefault(_cost_group(record), []).append((record.value, then, record.nodeid))
        found = []
        for group, cases in sorted(now.items()):
            suite, model, explainer, _, name = group
            metric = self.catalog.gated_cost(suite, name)
            assert metric is not None and metric.slack is not None  # _gated_cost checked it
            value = statistics.median(v for v, _, _ in cases)
            old = statistics.median(t for _, t, _ in cases)
            allowed = max_factor * old + metric.slack
            if value <= allowed:
                continue
            unit = metric.unit
            found.append(
                CostRegression(
                    suite,
                    model,
                    explainer,
                    name,
                    sorted({nodeid for _, _, nodeid in cases}),
                    f"{name} regressed: {explainer} on {model}, the median of its {len(cases)} case(s) "
                    f"{value:.1f} {unit} > {max_factor:g} × the baseline's median of the same cases {old:.1f} {unit} "
                    f"+ {metric.slack:g} {unit} ({value / old if old else float('inf'):.2f}× the baseline)",
                )
            )
        return found

    def _gated_cost(self, record: Record) -> float | None:
        """The baseline's measured value of ``record``'s gated cost, where the two are
        compared: both measured, the metric gated with a slack, the same machine; else None."""
        metric = self.catalog.gated_cost(record.suite, record.metric)
        if metric is None or metric.slack is None or self.costs_not_gated or record.measured is False:
            return None
        return self.costs.get(record.key())


@dataclass(frozen=True)
class CostRegression:
    """An explainer's work on one model that grew beyond the gate, as a median over its
    cases (:meth:`Baseline.cost_group_regressions`): what, the tests it was measured in,
    and the message."""

    suite: str
    model: str
    explainer: str
    metric: str
    nodeids: list[str]
    message: str

    @property
    def name(self) -> str:
        """The group's name: suite, explainer, model and metric."""
        return f"{self.suite}::{self.explainer}::{self.model}::{self.metric}"


def _without_metric(record: Record) -> Key:
    """``record``'s key without its metric: the test's case, explainer and seed."""
    return record.key()[:-1]


def _cost_group(record: Record) -> tuple[str, str, str, int, str]:
    """The cases whose costs are one explainer's work on one network: suite, model, explainer, seed, metric."""
    return (record.suite, record.model, record.explainer, record.seed, record.metric)


def _typical(costs: list[Record]) -> dict[tuple[str, str, str, int, str], float]:
    """The median cost of each :func:`_cost_group` of ``costs``."""
    groups: dict[tuple[str, str, str, int, str], list[float]] = {}
    for record in costs:
        groups.setdefault(_cost_group(record), []).append(record.value)
    return {group: statistics.median(values) for group, values in groups.items()}
