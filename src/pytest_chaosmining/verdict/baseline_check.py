"""The run against its baseline, at the end of the session: compared, new and
missing judged results, and the explainers' work per model.

A judged result of the baseline that this run did not judge (its test is gone,
deselected, newly skipped or newly not applicable, its explainer unregistered)
fails the run as a failing test of its own, ``chaosmining-baseline::<node id>``,
which the terminal, JUnit XML and the report show with the reason.  An
explainer's CPU time or peak memory on a model, the median of its cases, that grew
beyond the allowed slowdown over the baseline's median of the same cases fails as
``chaosmining-baseline::cost::<suite>::<explainer>::<model>::<metric>`` (one case's
own test fails only on a gross regression: one call varies, a model's median far
less; where every case of the model failed so, the growth is part of their failures,
not a failure again).  A baseline that matches none of the run's judged results fails
it too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection

import pytest

from pytest_chaosmining.core.records import (
    CHANGED_PROPERTY,
    COST_PROPERTY,
    MISSING_PROPERTY,
    OUTCOME_PROPERTY,
    Record,
)
from pytest_chaosmining.verdict.baseline import Baseline, Comparison, CostRegression
from pytest_chaosmining.verdict.baseline_scope import BaselineScope
from pytest_chaosmining.verdict.rule import BaselineRule
from pytest_chaosmining.verdict.skips import skip_message

#: node id prefix of the failing tests that stand for missing judged results (and grown work)
MISSING_PREFIX = "chaosmining-baseline::"
#: node id prefix of the failing tests that stand for an explainer's work on a model that grew
COST_PREFIX = MISSING_PREFIX + "cost::"


class BaselineCheck:
    """The run against its baseline, part of the end of the run (the result collector
    owns it): notes every conformance test's outcome (:meth:`note`), then compares the
    run's judged records with the baseline (:meth:`finish`) before the session's reports
    (JUnit XML among them) are written."""

    def __init__(self, baseline: Baseline, scope: BaselineScope):
        self.baseline = baseline
        self.scope = scope
        #: node id → what became of it in this run (``passed``, ``skipped: <reason>``, …)
        self.outcome: dict[str, str] = {}
        self.comparison: Comparison | None = None
        self.lines: list[str] = [f"chaosmining: {baseline.costs_not_gated}"] if baseline.costs_not_gated else []
        #: results that changed within what harmless changes do (not failures): node id → notes
        self.noted: dict[str, list[str]] = {}
        #: what fails the run beside its tests (a baseline of other models, one that matches nothing)
        self.errors: list[str] = []
        #: node id of a test that failed in this run → what else the comparison found of it (the
        #: baseline's results it did not produce, its model's cost that grew): part of its own
        #: failure, not a failure again
        self.folded: dict[str, list[str]] = {}

    def note(self, report: pytest.TestReport) -> None:
        """What became of ``report``'s test in this run (its changes noted at teardown)."""
        if report.nodeid.startswith(MISSING_PREFIX):
            return
        notes = [str(value) for key, value in report.user_properties if key == CHANGED_PROPERTY]
        if notes and report.when == "teardown":
            self.noted[report.nodeid] = notes
        tagged = any(key == OUTCOME_PROPERTY for key, _ in report.user_properties)
        if report.when == "call" or (report.when == "setup" and not report.passed) or tagged:
            if report.skipped and not hasattr(report, "wasxfail"):
                self.outcome[report.nodeid] = f"skipped: {skip_message(report)}"
            elif report.when != "teardown" or report.nodeid not in self.outcome:
                self.outcome[report.nodeid] = report.outcome

    @property
    def changed(self) -> dict[str, list[str]]:
        """The tests that passed with results that changed within what harmless changes
        do: node id → what moved (a test that failed is a failure, not a change)."""
        return {nodeid: notes for nodeid, notes in sorted(self.noted.items()) if self.outcome.get(nodeid) == "passed"}

    def in_scope(self, record: Record) -> bool:
        """Whether this run should have judged ``record`` again (the session's scope:
        selected suites, seeds, explainers not retired, this shard), or it ran here."""
        return record.nodeid in self.outcome or self.scope.covers(record)

    def finish(
        self,
        session: pytest.Session,
        exitstatus: int,
        records: list[Record],
        trained_on: list[str],
        rule: BaselineRule,
        failed: Collection[str] = (),
    ) -> None:
        """Compare the run's ``records`` (of models trained on ``trained_on``) with the
        baseline by ``rule``: each missing result and each model whose cost grew is
        reported as a failing test of its own (before the session's reports are written),
        unless its test (each of its tests) is among the run's ``failed`` ones, the failures
        the run counts (their node ids): then it goes in their reasons (:attr:`folded`)."""
        if session.config.option.collectonly or exitstatus not in (
            pytest.ExitCode.OK,
            pytest.ExitCode.TESTS_FAILED,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            return  # nothing was meant to run, or the run broke off: no verdict on what is missing
        other = self.baseline.other_models(trained_on)
        if other:
            self.errors.append(other)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        comparison = self.baseline.compare(records, self.in_scope)
        self.comparison = comparison
        judged = len(comparison.compared) + len(comparison.new)
        self.lines.append(comparison.summary(self.baseline.source))
        if self.scope.retired:
            kept = Counter(r.explainer for r in self.baseline.judged.values() if r.explainer in self.scope.retired)
            self.lines.append(
                "retired (--chaosmining-retired), not compared: "
                + ", ".join(f"{name} ({kept[name]} judged results in the baseline)" for name in self.scope.retired)
            )
        self.lines.append(self.baseline.costs_compared(records))
        changed = self.changed
        if changed:
            notes = [note for found in changed.values() for note in found]
            self.lines.append(
                f"changed, not regressed: {len(changed)} test(s) passed with results that moved against the "
                "baseline within what harmless changes do (if the change is intended, make this run the baseline):"
            )
            self.lines += [f"  {note}" for note in notes[:10]] + (
                [f"  … and {len(notes) - 10} more"] if len(notes) > 10 else []
            )
        if not comparison.compared:  # judging nothing against it is no comparison either
            self.errors.append(
                f"the baseline {self.baseline.source} matches none of this run's {judged} judged results "
                "(another tier, other seeds or explainers, renamed models?): nothing was compared against it"
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        by_test: dict[str, list[Record]] = {}
        for record in comparison.missing:
            by_test.setdefault(record.nodeid, []).append(record)
        gone = 0
        for nodeid, records in sorted(by_test.items()):
            if nodeid in failed:  # its own failure already counts: the results go in its reason
                self.folded.setdefault(nodeid, []).append(_unproduced(records))
            else:
                self._fail_missing(session, nodeid, records)
                gone += 1
        if gone:
            self.lines.append(
                f"FAILED: {gone} test(s) judged in the baseline were not judged in this run ({MISSING_PREFIX}<node id>)"
            )
        if by_test:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        grown = []
        for regression in rule.costs(records):
            if all(nodeid in failed for nodeid in regression.nodeids):
                for nodeid in regression.nodeids:  # each of its tests failed already: one failure each
                    self.folded.setdefault(nodeid, []).append(f"Its work on the model grew too: {regression.message}.")
            else:
                grown.append(regression)
                self._fail_cost(session, regression)
        if grown:
            self.lines.append(
                f"FAILED: {len(grown)} explainer(s) whose CPU time or memory on a model grew beyond "
                f"{rule.max_slowdown:g} × the baseline's, as a median over the model's cases ({COST_PREFIX}<what>)"
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _fail_cost(self, session: pytest.Session, regression: CostRegression) -> None:
        tests = regression.nodeids
        shown = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        report = pytest.TestReport(
            nodeid=COST_PREFIX + regression.name,
            location=(MISSING_PREFIX.rstrip(":"), None, regression.name),
            keywords={},
            outcome="failed",
            longrepr=f"{regression.message}; measured in {shown}",
            when="call",
            duration=0.0,
            user_properties=[
                (COST_PROPERTY, json.dumps({"suite": regression.suite, "explainer": regression.explainer}))
            ],
        )
        session.config.hook.pytest_runtest_logreport(report=report)  # pytest counts it in testsfailed

    def _fail_missing(self, session: pytest.Session, nodeid: str, records: list[Record]) -> None:
        now = self.outcome.get(nodeid)
        if now is None:
            state = (
                "it did not run (deselected, no longer collected, or its explainer is no longer registered; "
                "narrow the comparison with --chaosmining-suites / --chaosmining-explainers)"
            )
        else:
            state = f"it {now}" if now.startswith("skipped") else f"it {now} without judging them"
        message = (
            f"judged in the baseline, not in this run: {state}. A result that disappears is a regression "
            f"(the baseline's {_values(records)})"
        )
        report = pytest.TestReport(
            nodeid=MISSING_PREFIX + nodeid,
            location=(MISSING_PREFIX.rstrip(":"), None, nodeid),
            keywords={},
            outcome="failed",
            longrepr=message,
            when="call",
            duration=0.0,
            user_properties=[(MISSING_PROPERTY, json.dumps([r.to_dict() for r in records]))],
        )
        session.config.hook.pytest_runtest_logreport(report=report)  # pytest counts it in testsfailed

    def table(self) -> dict[str, object]:
        """The comparison for results.json and report.md: counts, missing node ids, the
        results that changed within what harmless changes do (node id and notes) and
        one row per judged result (suite, model, explainer, metric, condition, seed,
        value, baseline value; None where it has none)."""
        comparison = self.comparison or Comparison()

        def row(r: Record, value: float | None, old: float | None) -> list[object]:
            return [
                r.suite,
                r.model,
                r.explainer,
                r.metric,
                json.dumps(r.case, sort_keys=True),
                r.seed,
                value,
                old,
            ]

        rows = (
            [row(r, r.value, old) for r, old in comparison.compared]
            + [row(r, r.value, None) for r in comparison.new]
            + [row(r, None, r.value) for r in comparison.missing]
        )
        return {
            "source": self.baseline.source,
            "compared": len(comparison.compared),
            "new": len(comparison.new),
            "missing": sorted({r.nodeid for r in comparison.missing}),
            "changed": [{"nodeid": nodeid, "notes": notes} for nodeid, notes in self.changed.items()],
            "rows": sorted(rows, key=str),
        }


def _values(records: list[Record]) -> str:
    """The baseline's judged values of a test, for a message."""
    return ", ".join(f"{r.metric} {r.value:.4f}" + ("" if r.threshold is not None else " unbarred") for r in records)


def _unproduced(records: list[Record]) -> str:
    """What a test that failed in this run left out of the baseline's judged results."""
    return f"It left {len(records)} of the baseline's judged results unproduced ({_values(records)})."
