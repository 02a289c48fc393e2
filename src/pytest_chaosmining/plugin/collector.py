"""Collects results on the controlling process and writes the reports.

Records travel as ``user_properties`` on test reports, so they reach the
controller the same way with or without xdist.
"""

from __future__ import annotations

import json
import os
import platform
import time
import warnings
from collections import Counter
from collections.abc import Callable, Generator, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.records import (
    COST_PROPERTY,
    KNOWN_DEFECT_PROPERTY,
    MISSING_PROPERTY,
    MODEL_LEVEL,
    OUTCOME_PROPERTY,
    SHIPPED_TEST_PROPERTY,
    USER_PROPERTY,
    Record,
    human_facing,
    shared_keys,
    sort_records,
)
from pytest_chaosmining.core.storage.derived import package_digest, source_fingerprint
from pytest_chaosmining.explainers.builtins import CONTROL_NAME
from pytest_chaosmining.explainers.limitations import declared
from pytest_chaosmining.reports.failure_table import run_page
from pytest_chaosmining.reports.figures import NEEDED
from pytest_chaosmining.reports.html import LEADERBOARD_STYLE, leaderboard_table
from pytest_chaosmining.reports.leaderboard import build_leaderboard
from pytest_chaosmining.reports.markdown import (
    run_notes,
    shared_keys_note,
    step_summary,
    terminal_table,
)
from pytest_chaosmining.reports.reference import shipped_reference
from pytest_chaosmining.reports.render import render
from pytest_chaosmining.reports.run_counts import COST, FAILED, JUDGED_OUTCOMES, MISSING, RunCounts
from pytest_chaosmining.reports.run_results import RunResults
from pytest_chaosmining.reports.tables import outcome_counts
from pytest_chaosmining.settings import Settings
from pytest_chaosmining.suites import get_suite, metric_catalog, suite_of
from pytest_chaosmining.verdict.judge import ConformanceFailure
from pytest_chaosmining.verdict.own_merit_scope import own_merit_not_run
from pytest_chaosmining.verdict.rotation import PROBE_CHECK
from pytest_chaosmining.verdict.skips import skip_kind, skip_message, uncalibrated_condition
from pytest_chaosmining.verdict.weaker_levels import levels_the_control_reaches

if TYPE_CHECKING:
    from pytest_chaosmining.reports.reported_suite import ReportedSuite
    from pytest_chaosmining.run.session import ChaosminingSession
    from pytest_chaosmining.suites import SuiteSpec
    from pytest_chaosmining.verdict.baseline_check import BaselineCheck

#: how pytest's skip of a parametrization without cases begins (no test to count)
EMPTY_PARAMETER_SET = "got empty parameter set"
#: the key of an xdist worker's output that holds its models' training devices
TRAINED_ON_KEY = "chaosmining_models_trained_on"


def send_trained_on(config: pytest.Config, session: ChaosminingSession) -> None:
    """On an xdist worker: hand the controller the device types its models were trained on."""
    output = getattr(config, "workeroutput", None)
    if output is not None:
        output[TRAINED_ON_KEY] = session.models_trained_on()


_PACKAGES = ("pytest-chaosmining", "torch", "captum", "numpy", "sympy", "pytest", "pytest-xdist", "pytest-benchmark")


def _seed_text(seeds: range) -> int | str:
    """A seed range as results.json states it: the count when it starts at 0, else ``"A-B"``."""
    return len(seeds) if seeds.start == 0 else f"{seeds.start}-{seeds.stop - 1}"


def _outcome(report: pytest.TestReport) -> str:
    """The report's outcome as the reports count it: a skip by its kind (verdict.skips)."""
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.skipped:
        return skip_kind(skip_message(report))
    return report.outcome


class ResultCollector:
    """A plugin object registered only on the controller when ``--chaosmining`` is on."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        session: ChaosminingSession,
        suites: Callable[[], Sequence[SuiteSpec]],
    ):
        self.config = config
        self.settings = settings
        self.session = session
        #: the registered suites' specs (called when the report is written: the suites import late)
        self.suites = suites
        self.records: list[Record] = []
        #: node id → suite, explainer and outcome of each conformance test (a skip by its kind)
        self.tests: dict[str, tuple[str, str, str]] = {}
        self.started = time.time()
        self.summary_lines: list[str] = []
        self.written: list[str] = []
        #: how long the report took, for the summary (empty: no report)
        self.report_line = ""
        #: node id → the test's failure (suite, explainer, message, kind: failed or missing), once per test
        self.failures: dict[str, dict[str, str]] = {}
        #: what the report-only cases' bars were not calibrated for → how many tests
        self.uncalibrated: Counter[str] = Counter()
        #: the node ids of those tests (an offline comparison leaves their records out too)
        self.uncalibrated_tests: list[str] = []
        #: node id → the known limitations its test failed as expected, or its declared weaker levels
        self.known_defects: dict[str, list[str]] = {}
        #: the device types the xdist workers' models were trained on
        self.worker_trained_on: set[str] = set()
        #: the comparison with ``--chaosmining-baseline`` (driven by this collector: :meth:`pytest_sessionfinish`)
        self.baseline_check: BaselineCheck | None = None

    def drawn_suites(self) -> list[ReportedSuite]:
        """The suites as the report draws them: each spec, but the bound suite of one that ran
        and draws figures from its trained models (its heavy half, loaded only then)."""
        ran = set(self.settings.suites)
        return [get_suite(s.name) if _draws_from_models(s) and s.name in ran else s for s in self.suites()]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.baseline_check is not None:
            self.baseline_check.note(report)
        missing = next((str(v) for k, v in report.user_properties if k == MISSING_PROPERTY), None)
        if missing is not None:
            records = json.loads(missing)
            self._fail(report, records[0]["suite"], records[0]["explainer"], str(report.longrepr), MISSING)
            return
        if (grown := _property(report, COST_PROPERTY)) is not None:
            self._fail(report, grown["suite"], grown["explainer"], str(report.longrepr), COST)
            return
        # a conformance test is named by its tag, or where it ended before tagging itself (an error in
        # a fixture, a skip at setup) by what collection knew of it; a model-level test by its suite
        where = _property(report, OUTCOME_PROPERTY) or _property(report, SHIPPED_TEST_PROPERTY)
        if where is None and (suite := self._suite_of(report)) is not None:
            where = {"suite": suite, "explainer": MODEL_LEVEL}
        if report.skipped and skip_message(report).startswith(EMPTY_PARAMETER_SET):
            where = None  # pytest's stand-in for a parametrization without cases (a shard's): no test
        if report.skipped and (condition := uncalibrated_condition(skip_message(report))) is not None:
            self.uncalibrated[condition] += 1
            self.uncalibrated_tests.append(report.nodeid)
        if where is not None and (report.when == "call" or (report.when == "setup" and not report.passed)):
            self.tests[report.nodeid] = (where["suite"], where["explainer"], _outcome(report))
        if where is not None and report.failed and not hasattr(report, "wasxfail"):
            self.tests[report.nodeid] = (where["suite"], where["explainer"], "failed")  # a teardown's error too
            self._fail(report, where["suite"], where["explainer"], _message(report), FAILED)
        if report.when == "call" and (
            notes := [str(v) for k, v in report.user_properties if k == KNOWN_DEFECT_PROPERTY]
        ):
            self.known_defects[report.nodeid] = notes
        if report.when == "teardown":
            self.records += [
                Record.from_dict(json.loads(str(v))) for k, v in report.user_properties if k == USER_PROPERTY
            ]

    def _fail(self, report: pytest.TestReport, suite: str, explainer: str, message: str, kind: str) -> None:
        """Count ``report``'s test as failed, once: a later phase's failure of the same
        test (its teardown) is added to the first's reason."""
        found = self.failures.get(report.nodeid)
        if found is None:
            self.failures[report.nodeid] = {
                "nodeid": report.nodeid,
                "suite": suite,
                "explainer": explainer,
                "message": message,
                "kind": kind,
            }
        else:
            found["message"] += f" (and at {report.when}: {message})"

    @property
    def outcomes(self) -> Counter[tuple[str, str, str]]:
        """Explainer tests by suite, explainer and outcome (each test once; the
        model-level tests left out: the explainers' tables count these)."""
        return Counter(test for test in self.tests.values() if test[1] != MODEL_LEVEL)

    @staticmethod
    def _suite_of(report: pytest.TestReport) -> str | None:
        """The shipped suite of ``report``'s test, None for a user's own test."""
        return suite_of(Path(report.nodeid.split("::")[0]))

    def metadata(self) -> dict[str, Any]:
        versions: dict[str, str | None] = {}
        for name in _PACKAGES:
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                versions[name] = None
        workers = getattr(self.config.option, "numprocesses", None)
        tier, seeds = self.settings.tier, self.settings.seeds
        return {
            "tier": tier,
            "seeds": {
                suite.name: _seed_text(seeds_run)
                for suite in self.suites()
                if suite.name in self.settings.suites and (seeds_run := suite.seeds(tier, seeds)) is not None
            },
            "suites": list(self.settings.suites),
            "explainers": list(self.session.explainers),
            "sweeps": list(self.settings.sweep),
            "device": str(self.session.runtime.device),
            "machine": self.session.runtime.machine(),
            "code": {"package": package_digest(), "source": source_fingerprint()},
            "models_trained_on": self.models_trained_on(),
            "xdist_workers": workers,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "versions": versions,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.started)),
            "duration_s": round(time.time() - self.started, 1),
            "baseline": self.baseline_check.table() if self.baseline_check else None,
            #: how this run judged, so that compare and the pull request's summary judge the same two files alike
            "judging": self.judging(),
            "report_only": (only := self.session.thresholds.report_only(list(self.settings.suites), tier)),
            #: the cases outside the calibrated condition (a sweep's, a training mode): reason → tests
            "report_only_conditions": dict(sorted(self.uncalibrated.items())),
            "report_only_tests": sorted(self.uncalibrated_tests),
            "uncalibrated_bars": [
                s for s in self.session.thresholds.uncalibrated(list(self.settings.suites), tier) if s not in only
            ],
            "left_out": self.session.roster.left_out([s.name for s in self.suites()]),
            #: checks failed as a declared known limitation makes them fail (strict), or judged at a declared
            #: weaker level: the notes, by test
            "known_defects": dict(sorted(self.known_defects.items())),
            #: every known limitation the run's explainers declare (the built-ins' among them), briefly
            "declared_limitations": {
                name: declared(explainer.known)
                for name, explainer in self.session.explainers.items()
                if explainer.known
            },
        }

    def judging(self) -> dict[str, object]:
        """The run's judging settings beside its tier, suites and explainers: the thresholds
        file (its text: a later comparison elsewhere applies it), the allowed drop and slowdown,
        the retired explainers, how known limitations were held and what a run that judges
        nothing is."""
        settings = self.settings
        thresholds = settings.thresholds
        return {
            "thresholds": None if thresholds is None else {"file": str(thresholds), "text": thresholds.read_text()},
            "max_drop": settings.max_drop,
            "max_slowdown": settings.max_slowdown,
            "retired": list(settings.retired),
            "known_defects": settings.known_defects,
            "verdict": settings.verdict,
        }

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker's models' training devices (sent by :func:`send_trained_on`)."""
        self.worker_trained_on.update(getattr(node, "workeroutput", {}).get(TRAINED_ON_KEY, []))

    def models_trained_on(self) -> list[str]:
        """The device types the run's models were trained on, over this process and its workers."""
        return sorted(self.worker_trained_on | set(self.session.models_trained_on()))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> Generator[None, object, object]:
        """The end of the run: first the comparison with the baseline, whose failures are
        reported before the plugins' own ends (JUnit XML counts them); then, once those
        have run, the run's results and reports.  The innermost wrapper (``trylast``): its
        second half runs before the other wrappers' (the terminal's summary shows it)."""
        check, rule = self.baseline_check, self.session.baseline_rule
        if check is not None and rule is not None:
            check.finish(session, exitstatus, self.records, self.models_trained_on(), rule, set(self.failures))
        result = yield
        self._write(session)
        return result

    def _write(self, session: pytest.Session) -> None:
        if not self.records and not self.tests and not self.failures and self.baseline_check is None:
            return
        check = self.baseline_check
        for nodeid, notes in check.folded.items() if check is not None else ():
            if nodeid in self.failures:  # a test that failed: what else the comparison found is part of its reason
                first, *evidence = self.failures[nodeid]["message"].split("\n", 1)
                self.failures[nodeid]["message"] = "\n".join([" ".join([first, *notes]), *evidence])
        notes, errors = self._judged_nothing(session)
        unjudged_notes, unjudged = self._unjudged_explainers(session)
        weak_notes, weak = self._weaker_than_the_control(session)
        notes = [*notes, *unjudged_notes, *weak_notes, *self._own_merit_not_run(session)]
        errors = [*(check.errors if check is not None else []), *errors, *unjudged, *weak]
        failures = sorted(self.failures.values(), key=lambda f: f["nodeid"])
        outcomes = outcome_counts(self.outcomes)
        every_test = outcome_counts(Counter(self.tests.values()))
        counts = RunCounts.of(every_test, failures, len(check.changed) if check is not None else 0, errors)
        run = RunResults(sort_records(self.records), self.metadata(), outcomes, failures, counts)
        meta, shown = run.meta, run.human_facing  # the fingerprints of maps go to results.json only
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        meta["step_summary"] = bool(summary)  # the annotate step adds none of its own
        if self.settings.report is not None:
            began = time.monotonic()
            self._say(f"chaosmining: writing the report to {self.settings.report} ...")
            folder = Path(self.settings.report)
            every = self.settings.figures != NEEDED
            _, self.written = render(folder, run, self.session, self.drawn_suites(), self.started, every)
            took = time.monotonic() - began
            self.report_line = f"chaosmining: report written in {took:.1f} s ({len(self.written)} files)"
        if summary:
            with open(summary, "a", encoding="utf-8") as fh:
                fh.write(step_summary(shown, self.suites(), run_page()))
        self.summary_lines = [f"chaosmining: {counts.headline()}"]
        self.summary_lines += terminal_table(shown.records, self.outcomes, self.suites())
        self.summary_lines += [note for note, _ in run_notes(meta)]
        shared = shared_keys(run.records)
        if shared:
            note = shared_keys_note(shared)
            self.summary_lines.append(note)
            warnings.warn(note, category=ChaosminingWarning, stacklevel=1)
        self.summary_lines += notes
        if check is not None:
            self.summary_lines += check.lines
        self.summary_lines += [f"ERROR: {error}" for error in errors]
        self.summary_lines += [  # the reasons in full, whatever the width pytest trims its short summary to
            f"FAILED {f['suite']} {f['explainer']}: {f['message']} ({f['nodeid']})" for f in run.failures
        ]

    def _judged_nothing(self, session: pytest.Session) -> tuple[list[str], list[str]]:
        """A run whose tests all ended without judging (report-only, no calibrated bar, not
        applicable, below the quality gate) is no verdict: it fails, saying why (an error
        of the run), unless ``--chaosmining-verdict report-only`` asked for a run that
        records only (a note)."""
        outcomes = Counter(self.tests.values())
        total = sum(outcomes.values())
        judged = sum(n for (_, _, outcome), n in outcomes.items() if outcome in JUDGED_OUTCOMES)
        if not total or judged or self.failures or session.config.option.collectonly:
            return [], []
        kinds = Counter[str]()
        for (_, _, outcome), n in outcomes.items():
            kinds[outcome] += n
        how = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
        if self.settings.verdict == "report-only":
            return [f"chaosmining: report-only run (--chaosmining-verdict report-only): {total} tests recorded "
                    f"({how}), none judged"], []  # fmt: skip
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return [], [
            f"this run judged none of its {total} tests ({how}): a run that judges nothing is no verdict. "
            "Choose suites, tiers or training modes with calibrated bars, or pass --chaosmining-verdict "
            "report-only to record results without judging them"
        ]

    def _unjudged_explainers(self, session: pytest.Session) -> tuple[list[str], list[str]]:
        """Each explainer of the user's the run names (registered, named or under ``own``)
        whose tests all ended without a verdict of its own (not applicable everywhere, below
        every quality gate, report-only) fails the run, one line each naming it and what became
        of its tests; the models' tests and the control never judge it.  An explainer none of
        whose tests ran here (deselected) is not named; a ``-k`` that keeps only its cases where
        it does not apply names it.  Under ``--chaosmining-verdict report-only``, and in one
        shard of a sharded run (its other cases may judge it), the lines are notes."""
        ended: dict[str, Counter[str]] = {}
        for _, name, outcome in self.tests.values():
            ended.setdefault(name, Counter())[outcome] += 1
        failed = {f["explainer"] for f in self.failures.values()}
        lines = []
        for name, registered in self.session.explainers.items():
            outcomes = ended.get(name)
            if registered.source == "builtin" or not outcomes or name in failed:
                continue
            if any(outcome in JUDGED_OUTCOMES for outcome in outcomes):
                continue
            how = ", ".join(f"{n} {kind}" for kind, n in outcomes.most_common())
            lines.append(
                f"explainer {name!r} was judged nowhere in this run: its {outcomes.total()} tests ended {how}, "
                "none with a verdict of its own (the models' tests and the random control judge no explainer)"
            )
        if not lines or session.config.option.collectonly:
            return [], []
        if self.settings.verdict == "report-only" or self.settings.shard is not None:
            why = (
                "--chaosmining-verdict report-only"
                if self.settings.shard is None
                else "a shard: the others' cases may judge it"
            )
            return [f"chaosmining: {line} ({why})" for line in lines], []
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return [], lines

    def _own_merit_not_run(self, session: pytest.Session) -> list[str]:
        """Notes for the suites whose own-merit checks this run left out by deselecting their
        own-merit cases (not in a shard: another shard runs it)."""
        if session.config.option.collectonly or self.settings.shard is not None:
            return []
        suites = [name for name in self.settings.suites if metric_catalog().get(name, PROBE_CHECK) is not None]
        return own_merit_not_run(self.tests, self.records, suites, CONTROL_NAME)

    def _weaker_than_the_control(self, session: pytest.Session) -> tuple[list[str], list[str]]:
        """A check judged at a declared weaker level the random control reaches on the same
        case fails the run (:func:`~pytest_chaosmining.verdict.weaker_levels.levels_the_control_reaches`);
        under ``--chaosmining-verdict report-only`` the lines are notes."""
        lines = levels_the_control_reaches(self.records, self.session.explainers, CONTROL_NAME)
        if not lines or session.config.option.collectonly:
            return [], []
        if self.settings.verdict == "report-only":
            return [f"chaosmining: {line} (--chaosmining-verdict report-only)" for line in lines], []
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return [], lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: pytest.Session
    ) -> None:
        """With pytest-html installed: the leaderboard at the top of its report."""
        outcomes = outcome_counts(self.outcomes)
        board = build_leaderboard(human_facing(sort_records(self.records)), outcomes, self.suites())
        board = board.with_reference(shipped_reference(self.metadata()))
        if board.rows:
            prefix.append(LEADERBOARD_STYLE + leaderboard_table(board, sortable=False))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """The chaosmining summary, after every other plugin's (pytest-benchmark's
        table among them): a CI log's reader finds the verdicts last."""
        if not self.summary_lines:
            return
        terminalreporter.write_sep("=", "chaosmining summary")
        for line in self.summary_lines:
            terminalreporter.write_line(line)
        if self.report_line:
            terminalreporter.write_line(self.report_line)
        for path in self.written:
            terminalreporter.write_line(f"chaosmining report: {path}")

    def _say(self, line: str) -> None:
        """``line`` on the terminal now (not at the summary): what the run is doing at its end."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.get_verbosity() < -1:
            return
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        if capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(line)
        else:
            reporter.write_line(line)


def _property(report: pytest.TestReport, name: str) -> dict[str, str] | None:
    """The first user property ``name`` of ``report``, decoded (None where it has none)."""
    return next((json.loads(str(value)) for key, value in report.user_properties if key == name), None)


def _message(report: pytest.TestReport) -> str:
    """A failed test's one-line reason (a conformance failure's message without its class)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    lines = str(report.longrepr).strip().splitlines() or [""]
    message = crash.message if crash is not None else lines[-1]
    message = str(message).removeprefix(f"{ConformanceFailure.__module__}.{ConformanceFailure.__name__}: ")
    return message.removeprefix("Failed: ")  # pytest.fail's


def _draws_from_models(spec: SuiteSpec) -> bool:
    """Whether ``spec``'s figures are drawn from the run's trained models (False for a suite
    written before specs declared it)."""
    return bool(getattr(spec, "figures_need_models", False))
