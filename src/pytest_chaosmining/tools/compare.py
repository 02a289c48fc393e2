"""Compare two runs offline: ``chaosmining-compare OLD.json NEW.json``.

The verdicts a run against ``--chaosmining-baseline OLD.json`` gives NEW's
results, from the two ``results.json`` files alone, with the baseline check's
own code (:class:`~pytest_chaosmining.verdict.baseline.Baseline`), and
NEW's own failed tests, so that its exit status and NEW's run agree:

- **failed**: a test that failed in NEW's run (a bar missed, an own-merit check,
  an explainer error, the control passing a bar), as NEW's results.json lists it;
- **regressed**: a judged result fell more than its metric's allowed drop
  (the shipped ``max_drop``, or the run's ``--chaosmining-max-drop``, or ``--max-drop``) below OLD's;
- **drift**: a fingerprint of maps moved beyond the live gate's drift bars (the
  same rule: :func:`~pytest_chaosmining.verdict.drift.drift_verdict`; a declared
  sampler's allowance is the stricter of the noise the two runs recorded, every
  explained sample's outline is compared; the random control is never compared);
- **cost**: an explainer's CPU time or peak memory on a model, the median of its
  cases, grew beyond ``--max-slowdown`` × OLD's median of the same cases plus the
  metric's slack, or one case's beyond twice that (the live gate's rule:
  :meth:`~pytest_chaosmining.verdict.baseline.Baseline.cost_group_regressions`; not
  compared where the two ran on different device types or machines);
- **missing**: judged in OLD, not in NEW (of the suites NEW ran, unless
  ``--all-suites``);
- **new**: judged in NEW, not in OLD (listed, not a failure);
- **changed**: fell beyond the allowed drop within what harmless changes do (the
  paired rule: listed, not a failure; re-baseline if intended).

NEW is judged as its run judged: the thresholds file, allowed drop and slowdown and the
retired explainers its results.json records (``meta.judging``), unless the command line
gives them.  A Markdown table on stdout; exit 1 when anything failed, regressed, drifted,
grew or went missing, 0 otherwise, 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chaosmining.core.records import FINGERPRINT, Record
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.core.tiers import DEFAULT_TIER
from pytest_chaosmining.explainers import CONTROL_NAME, builtin_explainers
from pytest_chaosmining.reports.failure_table import SUMMARY_REASON, cell
from pytest_chaosmining.suites import metric_catalog, shipped_thresholds
from pytest_chaosmining.verdict.baseline import DEFAULT_MAX_SLOWDOWN, Baseline
from pytest_chaosmining.verdict.baseline_check import COST_PREFIX, MISSING_PREFIX
from pytest_chaosmining.verdict.drift import drift_verdict
from pytest_chaosmining.verdict.rule import BaselineRule

if TYPE_CHECKING:
    from pytest_chaosmining.core.metrics.catalog import MetricCatalog

#: the kinds of finding that fail a comparison (``new`` does not)
FAILING = ("failed", "regressed", "drift", "cost", "missing")


@dataclass(frozen=True)
class Finding:
    """One verdict of the comparison: its ``kind`` (:data:`FAILING` or ``new``), the
    test it concerns and what the baseline check would say."""

    kind: str
    nodeid: str
    message: str
    #: the explainer of the test (empty where the finding does not say)
    explainer: str = ""


def _load(path: Path) -> tuple[list[Record], dict[str, object], list[Finding]]:
    """NEW's records, metadata and failed tests (those standing for a baseline's missing
    result left out: the comparison finds them itself, as ``missing``)."""
    payload = read_results(path, samples=True)
    failed = [
        Finding("failed", str(f["nodeid"]), f"failed in this run: {f['message']}", str(f.get("explainer", "")))
        for f in payload.get("failures", [])
        if not str(f["nodeid"]).startswith(MISSING_PREFIX)
    ]
    return [Record.from_dict(r) for r in payload["records"]], dict(payload.get("meta", {})), failed


@dataclass(frozen=True)
class RunJudging:
    """How a run judged, as its results.json records it (``meta.judging``; an older file
    records none: the defaults)."""

    max_drop: float | None = None
    max_slowdown: float = DEFAULT_MAX_SLOWDOWN
    retired: tuple[str, ...] = ()
    thresholds_text: str | None = None

    @classmethod
    def of(cls, meta: dict[str, object]) -> RunJudging:
        """The judging settings ``meta`` records."""
        found = meta.get("judging")
        if not isinstance(found, dict):
            return cls()
        bars = found.get("thresholds")
        drop, slowdown = found.get("max_drop"), found.get("max_slowdown")
        return cls(
            float(drop) if isinstance(drop, int | float) else None,
            float(slowdown) if isinstance(slowdown, int | float) else DEFAULT_MAX_SLOWDOWN,
            tuple(str(n) for n in found.get("retired") or ()),
            str(bars["text"]) if isinstance(bars, dict) and isinstance(bars.get("text"), str) else None,
        )

    def rule(
        self,
        baseline: Baseline,
        tier: str,
        thresholds_file: Path | None = None,
        max_drop: float | None = None,
        max_slowdown: float | None = None,
    ) -> BaselineRule:
        """The baseline rule the run judged by: its bars (``thresholds_file`` merged over the
        shipped ones, else the run's own file's text, else the shipped), allowed drop and slowdown,
        each unless the arguments give one."""
        drop = max_drop if max_drop is not None else self.max_drop
        slowdown = max_slowdown if max_slowdown is not None else self.max_slowdown
        if thresholds_file is not None or self.thresholds_text is None:
            return BaselineRule(baseline, shipped_thresholds(thresholds_file), tier, drop, slowdown)
        with tempfile.TemporaryDirectory() as folder:  # the bars are read here, before the file goes
            path = Path(folder) / "run-thresholds.toml"
            path.write_text(self.thresholds_text)
            return BaselineRule(baseline, shipped_thresholds(path), tier, drop, slowdown)


def compare_runs(
    old: Path,
    new: Path,
    max_drop: float | None = None,
    max_slowdown: float | None = None,
    thresholds_file: Path | None = None,
    all_suites: bool = False,
) -> list[Finding]:
    """The :class:`Finding` s of ``new``'s results against ``old``'s (both results.json), judged
    as NEW's run judged (the settings its results.json records: thresholds file, allowed drop
    and slowdown, retired explainers) where the arguments do not say otherwise."""
    catalog = metric_catalog()
    baseline = Baseline.load(old, catalog)
    records, meta, findings = _load(new)
    report_only = meta.get("report_only_tests")
    if isinstance(report_only, list):  # cases outside the calibrated condition: recorded, never judged
        unjudged = set(report_only)
        records = [r for r in records if r.nodeid not in unjudged]
    trained_on = meta.get("models_trained_on")
    other = baseline.other_models([str(d) for d in trained_on] if isinstance(trained_on, list) else [])
    if other:
        raise ValueError(other)
    machine = meta.get("machine")
    if isinstance(machine, dict):
        baseline.against_machine(machine)  # another CPU, device, GPU or stack: no cost compared
    tier = str(meta.get("tier") or baseline.tier or DEFAULT_TIER)
    judging = RunJudging.of(meta)
    rule = judging.rule(baseline, tier, thresholds_file, max_drop, max_slowdown)
    ran = {r.suite for r in records}
    comparison = baseline.compare(
        records, lambda r: (all_suites or r.suite in ran) and r.explainer not in judging.retired
    )
    new_side = Baseline(records, str(new), catalog)  # NEW's own noise, outlines and size checks, looked up alike
    unbarred = [
        r
        for r in records
        if r.threshold is None
        and rule.compares_unbarred(r, catalog.get(r.suite, r.metric), r.explainer == CONTROL_NAME)
    ]
    for record in [r for r, _ in comparison.compared] + unbarred:
        metric = catalog.get(record.suite, record.metric)
        if metric is None:
            continue
        drop = rule.score(record, metric)
        if drop.regression:
            findings.append(Finding("regressed", record.nodeid, drop.regression, record.explainer))
        elif drop.change:
            findings.append(Finding("changed", record.nodeid, drop.change, record.explainer))
    for record in records:
        cost = rule.cost(record)
        if cost:
            findings.append(Finding("cost", record.nodeid, cost, record.explainer))
        if record.metric == FINGERPRINT and record.explainer != CONTROL_NAME:
            findings += _drift(rule, new_side, record, catalog)
    for grown in rule.costs(records):
        findings.append(Finding("cost", COST_PREFIX + grown.name, grown.message, grown.explainer))
    for r in comparison.missing:
        findings.append(Finding("missing", r.nodeid, f"{r.metric} judged in the baseline, not here", r.explainer))
    for r in comparison.new:
        findings.append(Finding("new", r.nodeid, f"{r.metric} = {r.value:.4f}, not in the baseline", r.explainer))
    return findings


def _drift(rule: BaselineRule, new: Baseline, record: Record, catalog: MetricCatalog) -> list[Finding]:
    """The drift findings of one fingerprint record, by the live gate's rule
    (:func:`~pytest_chaosmining.verdict.drift.drift_verdict`): NEW's own noise is the one
    its run recorded (``new``: NEW's records read as a baseline is), its outline the one
    beside the fingerprint; the size is compared where NEW's run compared it or the
    built-in promises it."""
    metric = catalog.get(record.suite, "map_agreement")
    bar_key = metric.bar_key(record.case) if metric is not None and metric.bar_key is not None else "default"
    outlined = new.outline_of(record)
    now = new.noise_of(record)
    builtin = builtin_explainers().get(record.explainer)
    sized = new.compared_size(record) or (builtin is not None and builtin.size_promised)
    verdict = drift_verdict(rule, record, outlined, bar_key, record.explainer, (lambda: now) if now else None, sized)
    found = [
        Finding("drift", record.nodeid, message, record.explainer)
        for _, value, bar, message in verdict.checks
        if bar is not None and value < bar
    ]
    if verdict.change is not None and not found:
        found.append(Finding("changed", record.nodeid, verdict.change, record.explainer))
    return found


def table(findings: list[Finding], old: str, new: str) -> str:
    """The findings as Markdown: a verdict line, then one row each (failing kinds first)."""
    failing = [f for f in findings if f.kind in FAILING]
    counts = ", ".join(f"{kind} {sum(f.kind == kind for f in findings)}" for kind in (*FAILING, "new", "changed"))
    head = f"**chaosmining-compare {new} against {old}: {'FAILED' if failing else 'no regression'}** ({counts})"
    if not findings:
        return head + "\n"
    order = {kind: i for i, kind in enumerate((*FAILING, "new", "changed"))}
    rows = [
        f"| {f.kind} | `{cell(f.nodeid)}` | {cell(f.message, SUMMARY_REASON)} |"
        for f in sorted(findings, key=lambda f: (order[f.kind], f.nodeid))
    ]
    return "\n".join([head, "", "| verdict | test | why |", "|---|---|---|", *rows]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("old", type=Path, help="the baseline's results.json")
    parser.add_argument("new", type=Path, help="the results.json to judge against it")
    parser.add_argument(
        "--max-drop", type=float, default=None, help="one allowed drop for every metric (default: NEW's run's)"
    )
    parser.add_argument(
        "--max-slowdown",
        type=float,
        default=None,
        help=f"allowed growth of CPU time and memory (default: NEW's run's, else {DEFAULT_MAX_SLOWDOWN:g})",
    )
    parser.add_argument(
        "--thresholds", type=Path, default=None, help="a TOML merged over the shipped bars (default: NEW's run's)"
    )
    parser.add_argument("--all-suites", action="store_true", help="a suite NEW did not run is missing too")
    args = parser.parse_args(argv)
    try:
        findings = compare_runs(args.old, args.new, args.max_drop, args.max_slowdown, args.thresholds, args.all_suites)
    except (OSError, ValueError, KeyError) as exc:
        print(f"chaosmining-compare: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(table(findings, str(args.old), str(args.new)))
    return 1 if any(f.kind in FAILING for f in findings) else 0


if __name__ == "__main__":
    raise SystemExit(main())
