"""The judge: records results on the test report and asserts bars.

A check is ``(record, threshold, what)``; a threshold of None records the value
without judging it.  The random control's tests are strict xfails, and every
bar must reject the control on its own (:class:`ControlPassedBar`).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import pytest
from _pytest.outcomes import Failed  # pytest.fail.Exception, by a name a class statement can take

from pytest_chaosmining.core.metrics.catalog import MetricCatalog
from pytest_chaosmining.core.records import (
    CHANGED_PROPERTY,
    KNOWN_DEFECT_PROPERTY,
    OUTCOME_PROPERTY,
    USER_PROPERTY,
    Record,
    Recorder,
)
from pytest_chaosmining.explainers import Explainer, ExplainerError, ExplainerNotApplicable
from pytest_chaosmining.explainers.diagnosis import MapNotes
from pytest_chaosmining.explainers.limitations import KnownLimitation, known_limitation
from pytest_chaosmining.verdict.baseline import NO_DROP, Baseline
from pytest_chaosmining.verdict.rule import BaselineRule
from pytest_chaosmining.verdict.skips import (
    CONDITION_PHRASE,
    NOT_APPLICABLE_PREFIX,
    NOT_JUDGED_PREFIX,
    REPORT_ONLY_PHRASE,
)
from pytest_chaosmining.verdict.thresholds import Thresholds

if TYPE_CHECKING:
    from pytest_chaosmining.core.metrics.cost import Cost

#: the fields of a :class:`Cost` recorded per explainer test (which of them a baseline gates,
#: the metric catalog declares)
COST_FIELDS = ("time_ms", "cpu_ms", "peak_mem_mb")
#: the namespace of the scalar JUnit properties of judged records
PROPERTY_PREFIX = "chaosmining."
#: (record, threshold or None, what the message says was measured)
Check = tuple[Record, "float | None", str]


class ConformanceFailure(AssertionError, Failed):
    """A measured value fell below its threshold or its baseline.

    An ``AssertionError`` that pytest reports as ``pytest.fail(message,
    pytrace=False)`` does: the message under the test, and in the short summary
    line, without the plugin's stack (the verdict's reason is the whole story; a
    failure inside the explainer itself keeps its traceback)."""

    def __init__(self, message: str):
        Failed.__init__(self, message, pytrace=False)


class ControlPassedBar(Exception):
    """The random control met a bar: the bar cannot tell an explainer from noise.

    Deliberately not a :class:`ConformanceFailure`, so the control's strict
    xfail does not absorb it: every bar must reject the control on its own."""


class Judge:
    """Records and asserts the results of one session; ``rule``: how a result is judged
    against the baseline (None: no baseline); ``map_notes``: what
    the session's explainers noted about their maps; ``report_only``: the suites
    whose bars at this tier were not calibrated on held-out seeds (their results
    are recorded, never judged: no bar, no baseline drop)."""

    def __init__(
        self,
        explainers: Mapping[str, Explainer],
        rule: BaselineRule | None,
        *,
        tier: str,
        catalog: MetricCatalog | None = None,
        map_notes: MapNotes | None = None,
        report_only: frozenset[str] = frozenset(),
        thresholds: Thresholds | None = None,
        hold_known_defects: bool = True,
    ):
        #: the bars (and a suite's own margins and gates) the run judges with
        self.thresholds = thresholds if thresholds is not None else Thresholds({})
        self.explainers = explainers
        self.report_only = report_only
        self.catalog = catalog if catalog is not None else MetricCatalog({})
        self.rule = rule
        #: the run's tier (which calibrated drops apply to a result without a bar)
        self.tier = tier
        self.map_notes = map_notes if map_notes is not None else MapNotes()
        #: whether a known library defect is held as a strict expected failure (else the bar judges it)
        self.hold_known_defects = hold_known_defects
        self._cost_failures: dict[str, list[str]] = {}

    def marks_for(self, explainer: str) -> list[pytest.MarkDecorator]:
        """The random control must fail: its tests are strict xfails, so a
        threshold loose enough to let it pass turns the run red (XPASS)."""
        if self.is_control(explainer):
            return [
                pytest.mark.xfail(
                    raises=ConformanceFailure,
                    strict=True,
                    reason="control: random attributions must fail every threshold",
                )
            ]
        return []

    @property
    def baseline(self) -> Baseline | None:
        """The baseline the run is judged against, if any."""
        return self.rule.baseline if self.rule is not None else None

    def is_control(self, explainer: str) -> bool:
        """Whether ``explainer`` is the random control."""
        found = self.explainers.get(explainer)
        return bool(found is not None and found.control)

    def tag_test(self, node: pytest.Item, suite: str, explainer: str) -> None:
        """Mark ``node`` as a conformance test of ``explainer`` (for outcome counts);
        the notes on its maps start afresh."""
        self.map_notes.clear(explainer)
        node.user_properties.append((OUTCOME_PROPERTY, json.dumps({"suite": suite, "explainer": explainer})))

    def record(self, node: pytest.Item, record: Record) -> Record:
        """Attach ``record`` to the test report (travels through xdist to the
        controller) as a JSON string; a judged record also as scalar properties
        ``chaosmining.<metric>``, ``chaosmining.<metric>_threshold`` and
        ``chaosmining.<metric>_margin`` (JUnit XML; namespaced beside other plugins')."""
        record.nodeid = node.nodeid
        node.user_properties.append((USER_PROPERTY, json.dumps(record.to_dict(), sort_keys=True)))
        if record.threshold is not None:
            name = f"{PROPERTY_PREFIX}{record.metric}"
            node.user_properties += [
                (name, record.value),
                (f"{name}_threshold", record.threshold),
                (f"{name}_margin", record.value - record.threshold),
            ]
        return record

    def record_costs(self, node: pytest.Item, cost: Cost, make: Recorder, measured: bool = True) -> None:
        """:meth:`record_cost` the wall time, CPU time and peak memory of ``cost``
        (``make(metric, value)`` makes each record; ``measured``: False where ``cost``
        is replayed from a result of an earlier run, :attr:`Record.measured`)."""
        for metric in COST_FIELDS:
            record = make(metric, getattr(cost, metric))
            record.measured = measured
            self.record_cost(node, record)

    def record_cost(self, node: pytest.Item, record: Record) -> Record:
        """Record a time or peak memory; a gated cost (CPU time, peak memory: declared
        with a slack) that grew beyond the allowed slowdown over the baseline
        (``--chaosmining-max-slowdown``) fails the test at its verdict
        (:meth:`require_all`, :meth:`raise_cost_regressions`)."""
        regression = self.rule.cost(record) if self.rule else None
        if regression:
            record.passed = False
            self._cost_failures.setdefault(node.nodeid, []).append(
                f"{record.explainer} on {record.model}: {regression}"
            )
        return self.record(node, record)

    def cost_recheck(self, make: Recorder) -> Callable[[Cost], bool] | None:
        """Whether a first cost is worth measuring again: beyond the allowed slowdown
        over its case's baseline (:meth:`~pytest_chaosmining.verdict.baseline.Baseline.cost_worth_rechecking`:
        it could fail its model's median or its own test; ``make(metric, value)`` makes
        the records it is looked up by); None without a baseline."""
        rule = self.rule
        if rule is None:
            return None

        def exceeds(cost: Cost) -> bool:
            return any(rule.cost_worth_rechecking(make(metric, getattr(cost, metric))) for metric in COST_FIELDS)

        return exceeds

    def raise_cost_regressions(self, node: pytest.Item) -> None:
        """Fail ``node`` with the cost regressions :meth:`record_cost` found, if any."""
        failures = self._cost_failures.pop(node.nodeid, [])
        if failures:
            raise ConformanceFailure(one_reason(failures))

    def require(self, node: pytest.Item, record: Record, threshold: float, what: str) -> None:
        """Record ``record`` with its threshold, then fail if it is below the threshold
        or regressed against the baseline.  Its metric must be declared judged by its
        suite (:class:`~pytest_chaosmining.core.metrics.catalog.UndeclaredMetric`).
        In a report-only suite it is recorded only.  A check the explainer declares a known
        limitation of is held to :meth:`held_to_known_limitation`; one it declares weaker is
        judged at the declared level instead of the bar."""
        metric = self.catalog.judged(record.suite, record.metric)
        if record.suite in self.report_only:
            self.record(node, record)
            return
        record.threshold = threshold
        allowed = self.draw_allowance(record)
        record.passed = record.value + allowed >= threshold
        drop = self.rule.score(record, metric) if self.rule else NO_DROP
        regression = drop.regression
        if regression:
            record.passed = False
        elif drop.change:
            self.note_change(node, f"{what}: {drop.change}")
        known = self.known_limitation_of(record)
        if known is not None and known.weaker:  # judged at its declared level where it is below the shared bar
            self.note_weaker(node, record, known, threshold)
            threshold = record.threshold = min(threshold, known.floor)
            record.passed = record.value + allowed >= threshold and not regression
        elif known is not None:
            failures = [f"{what}: {regression}"] if regression else []
            held = self.held_to_known_limitation(node, record, known, allowed)
            failures += [f"{what}: {failure}" for failure in held]
            if held:
                record.passed = False
            self.record(node, record)
            if failures:
                raise ConformanceFailure("; ".join(failures))
            return
        self.record(node, record)
        if not record.value + allowed >= threshold:  # NaN included: no value is no pass
            raise ConformanceFailure(
                f"{what}: {record.metric} {record.value:.4f} < threshold {threshold:.4f} "
                f"(margin {record.value - threshold:+.4f}"
                + (f"; a sampler's draw is allowed one explained sample's worth, {allowed:.4f})" if allowed else ")")
            )
        if regression:
            raise ConformanceFailure(f"{what}: {regression}")

    def draw_allowance(self, record: Record) -> float:
        """How far a declared sampler's result may fall below an absolute bar: one explained
        sample's worth of the mean (the range of its per-sample values over their number).
        A reseed flips a sample's discrete outcome (a clip's top-1 hit: 1 of 32), and a bar
        calibrated on one draw sits within a step of the draws of a sampler near it.  Zero
        for a deterministic explainer, the random control, or a result without per-sample values."""
        found = self.explainers.get(record.explainer)
        samples = record.samples
        if found is None or not found.stochastic or found.control or not samples:
            return 0.0
        return (max(samples) - min(samples)) / len(samples)

    def compare_unbarred(self, node: pytest.Item, record: Record, what: str) -> str | None:
        """Record ``record``, a result without a bar here (the bar is off for this
        condition and explainer, or the suite is report-only), and, of a judged metric
        whose drop is calibrated at this tier, outside a report-only suite, compare it
        against the baseline as a barred one is: a condition whose absolute bar is off
        still must not fall below its own earlier value.  The failure's message, if it
        regressed."""
        metric = self.catalog.get(record.suite, record.metric)
        regression = None
        if self.rule is not None and self.rule.compares_unbarred(record, metric, self.is_control(record.explainer)):
            assert metric is not None
            drop = self.rule.score(record, metric)
            regression = drop.regression
            if regression:
                record.passed = False
            elif drop.change:
                self.note_change(node, f"{what}: {drop.change}")
        self.record(node, record)
        return f"{what}: {regression} (no absolute bar here; compared against the baseline)" if regression else None

    def known_limitation_of(self, record: Record) -> KnownLimitation | None:
        """The known limitation ``record``'s explainer declares for its check (a built-in's as a
        registered explainer's: a registered explainer of a built-in's method inherits none),
        unless the run holds none (``--chaosmining-known-defects none``)."""
        found = self.explainers.get(record.explainer)
        if found is None or not found.known or not self.hold_known_defects:
            return None
        return known_limitation(found.known, record.suite, record.metric, record.case)

    @staticmethod
    def held_to_known_limitation(
        node: pytest.Item, record: Record, known: KnownLimitation, allowed: float = 0.0
    ) -> list[str]:
        """A check a known limitation makes fail, judged strictly: at or above both its bar and
        the declaration's promise the limitation no longer shows, which fails the test (the
        declaration is stale); at or above the bar only (a run's bar below the promise) it
        passes as any check does; below its floor, or not a number, it fails as any check does;
        between the floor and the bar it is an expected failure, noted on the test and the
        record.  The failures' messages (none for a pass or an expected failure)."""
        assert record.threshold is not None
        bar, value = record.threshold, record.value + allowed
        reached = bar if known.promise is None else max(bar, known.promise)
        if value >= reached:
            return [known.stale(record.explainer, record.value, reached)]
        if value >= bar:
            return []
        if not record.value >= known.floor:  # NaN included
            return [known.below_floor(record.value)]
        record.expected = ", ".join(known.references)
        note = known.expected(record.explainer, record.value, bar)
        node.user_properties.append((KNOWN_DEFECT_PROPERTY, note))
        return []

    @staticmethod
    def note_weaker(node: pytest.Item, record: Record, known: KnownLimitation, bar: float) -> None:
        """Note on ``node``'s report that ``record``'s check is judged at its declared weaker level."""
        node.user_properties.append((KNOWN_DEFECT_PROPERTY, known.weaker_note(record.explainer, record.value, bar)))

    @staticmethod
    def note_change(node: pytest.Item, message: str) -> None:
        """Note on ``node``'s report that a result changed against the baseline within what
        harmless changes do (the run's summary lists it: re-baseline if intended)."""
        node.user_properties.append((CHANGED_PROPERTY, message))

    def require_all(self, node: pytest.Item, checks: Sequence[Check], uncalibrated: str | None = None) -> None:
        """:meth:`require` each ``(record, threshold, what)``, recording all of them,
        then fail once with every bar that was missed.  A check without a bar (None:
        not judged there) is recorded only; a test none of whose checks has a bar
        skips.  For the random control every bar must be missed: one it meets
        raises :class:`ControlPassedBar`.  ``uncalibrated``: why the case's bars were
        not calibrated for it (a sweep's condition, a training mode): every check is
        recorded, none judged or compared with the baseline; only a cost regression fails."""
        if uncalibrated is not None and checks:
            for record, _, _ in checks:
                self.record(node, record)
            self.raise_cost_regressions(node)
            pytest.skip(report_only_reason(checks[0][2], uncalibrated))
        checks = [(r, None if r.suite in self.report_only else t, what) for r, t, what in checks]
        judged = [(record, threshold, what) for record, threshold, what in checks if threshold is not None]
        unbarred = [
            failure
            for record, threshold, what in checks
            if threshold is None and (failure := self.compare_unbarred(node, record, what))
        ]
        if not judged:
            if unbarred:
                raise ConformanceFailure(one_reason(self._cost_failures.pop(node.nodeid, []) + unbarred))
            self.raise_cost_regressions(node)
            suite = checks[0][0].suite
            why = (
                f"suite {suite} {REPORT_ONLY_PHRASE} (its bars were not calibrated on held-out seeds)"
                if suite in self.report_only
                else "no calibrated bar for " + ", ".join(f"{r.metric}" for r, _, _ in checks) + " here"
            )
            pytest.skip(f"{NOT_JUDGED_PREFIX}{why} ({checks[0][2]}); the values are recorded")
        failures = self._cost_failures.pop(node.nodeid, []) + unbarred
        for record, threshold, what in judged:
            try:
                self.require(node, record, threshold, what)
            except ConformanceFailure as exc:
                failures.append(str(exc))
        passed_by_control = [
            f"{what}: {record.metric} {record.value:.4f} >= threshold {threshold:.4f}"
            for record, threshold, what in judged
            if record.passed and self.is_control(record.explainer)
        ]
        if passed_by_control:
            raise ControlPassedBar(
                "the random control passed a bar on its own, so that bar cannot tell an "
                "explainer from noise: " + "; ".join(passed_by_control)
            )
        if failures:
            explainers = dict.fromkeys(record.explainer for record, _, _ in judged)
            found = [
                f"{name}'s maps were {', '.join(self.map_notes.notes(name))}"
                for name in explainers
                if self.map_notes.notes(name)
            ]
            raise ConformanceFailure(one_reason(failures, found))


def one_reason(failures: Sequence[str], notes: Sequence[str] = ()) -> str:
    """A failed test's reason: first, on one line, what broke (each failed check's
    finding, its evidence in parentheses left out, the common ``what:`` said once), then
    each check's finding with its evidence, one per line, and the notes on its maps."""
    shorts = [_finding(failure) for failure in failures]
    whats = Counter(short.split(": ", 1)[0] for short in shorts if ": " in short)
    what = whats.most_common(1)[0][0] if whats else ""
    if what and all(short.startswith(what) for short in shorts):
        first = f"{what}: " + "; ".join(short.removeprefix(what).removeprefix(": ").strip() for short in shorts)
    else:
        first = "; ".join(shorts)
    evidence = [] if list(failures) == [first] else list(failures)
    return "\n".join([first, *evidence, *([f"-- {'; '.join(notes)}"] if notes else [])])


#: a missed bar as :meth:`Judge.require` words it
_MISSED_BAR = re.compile(r"(\w+) (-?[0-9.]+(?:e-?[0-9]+)?) < threshold (-?[0-9.]+(?:e-?[0-9]+)?)")


def _finding(failure: str, most: int = 160) -> str:
    """A check's finding without its evidence: its text before the first parenthesis
    where that says what broke (``what: finding``), else its first ``most`` characters;
    and the bar it missed where that came after the evidence (``: truth_sign 0.1000 <
    threshold 0.9000``)."""
    short = failure.split(" (", 1)[0]
    if ": " not in short:
        short = failure if len(failure) <= most else failure[: most - 1].rstrip() + "…"
    missed = _MISSED_BAR.findall(failure)
    if missed and " < " not in short:
        metric, value, bar = missed[-1]
        short += f": {metric} {value} < threshold {bar}"
    return short


def report_only_reason(what: str, uncalibrated: str) -> str:
    """The skip message of a test whose case lies outside the calibrated condition."""
    return (
        f"{NOT_JUDGED_PREFIX}{what}: {uncalibrated}{CONDITION_PHRASE}{REPORT_ONLY_PHRASE} (the bars were calibrated "
        "for standard fp32 training in the tier's default condition); the values are recorded"
    )


@contextlib.contextmanager
def explainer_failures(config: pytest.Config | None = None) -> Iterator[None]:
    """Turn an :class:`~pytest_chaosmining.explainers.ExplainerError` raised inside
    into a failure of the current test.  By default the failure is the error's
    message alone (it names the explainer and what it did wrong, with the
    explainer's own frames); with ``--tb=long`` or ``--tb=native`` (``config``)
    pytest shows the whole traceback, the explainer's exception chained."""
    full = config is not None and config.getoption("tbstyle", "auto") in ("long", "native")
    try:
        yield
    except ExplainerNotApplicable as exc:
        pytest.skip(f"{NOT_APPLICABLE_PREFIX}{exc}")
    except ExplainerError as exc:
        if full:
            raise
        failure = pytest.fail.Exception(str(exc), pytrace=False)
        failure.__suppress_context__ = True  # the message says it all: no chained traceback
        raise failure from None
