"""Report writers: results.json, results.csv, report.md with every suite's
section, the suites' figures and the terminal summary table.  Suites are
handed in as :class:`~pytest_chaosmining.reports.reported_suite.ReportedSuite` objects, never imported."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.core.results_file import write_results
from pytest_chaosmining.core.storage.atomic import atomic_write_text
from pytest_chaosmining.explainers.limitations import WEAKER_PREFIX
from pytest_chaosmining.reports.failure_table import SUMMARY_REASON, SUMMARY_ROWS, cell, failure_table
from pytest_chaosmining.reports.leaderboard import Leaderboard, build_leaderboard, leaderboard_markdown
from pytest_chaosmining.reports.reference import shipped_reference
from pytest_chaosmining.reports.scorecard import scorecard_markdown
from pytest_chaosmining.reports.tables import (
    SKIP_LEGEND,
    TERMINAL_HEADS,
    baseline_change,
    markdown_table,
    mean_sd,
    meta_rows,
    outcome_columns,
    outcome_counts,
    outcome_rows,
    ranked_records,
    records_frame,
)

if TYPE_CHECKING:
    from pytest_chaosmining.reports.reported_suite import ReportedSuite
    from pytest_chaosmining.reports.run_results import RunResults


#: the metrics of the attribution cost section
_COST_METRICS = ("time_ms", "peak_mem_mb")


def _cost_sections(cost: Any) -> list[str]:
    if cost.empty:
        return []
    lines = [
        "## Attribution cost",
        "",
        "Time and peak memory of one attribution call over the whole test set "
        "(CPU memory: peak growth of the resident set, read by psutil every millisecond after the heap is "
        "trimmed; CUDA: growth of max_memory_allocated).",
        "",
    ]
    rows = []
    for (suite, e), group in cost.groupby(["suite", "explainer"], sort=True):
        t = group[group.metric == "time_ms"]["value"]
        m = group[group.metric == "peak_mem_mb"]["value"]
        rows.append([suite, e, mean_sd(t, 1), mean_sd(m, 1), str(len(t))])
    lines += markdown_table(["suite", "explainer", "time (ms)", "peak memory (MiB)", "calls"], rows) + [""]
    lines += ["Time per call by suite and explainer: `cost.png` (log scale; whiskers: one standard deviation).", ""]
    return lines


def step_summary(run: RunResults, suites: Sequence[ReportedSuite], page: str | None = None) -> str:
    """The GitHub step summary: the run's one count (:class:`RunCounts`), its errors, the
    failures (which explainer failed where and why, capped; the rest in report.md, on the
    run's ``page``), what changed, then the leaderboard and the run's notes."""
    records, meta, outcomes, counts = run.records, run.meta, run.outcomes, run.counts
    headline = counts.headline()
    lines = [f"# ChaosMining ({meta.get('tier')} tier): {'**' + headline + '**' if counts.red else headline}", ""]
    lines += [f"**ERROR:** {cell(error)}" for error in counts.errors] + ([""] if counts.errors else [])
    where = f"report.md in the run's artifacts ({page})" if page else "report.md"
    lines += failure_table(run.failures, SUMMARY_ROWS, SUMMARY_REASON, where)
    lines += _changed_section(_changed(meta), SUMMARY_ROWS)
    lines += leaderboard_markdown(build_leaderboard(records, outcomes, suites).with_reference(shipped_reference(meta)))
    lines += [note for note in _run_notes(meta) if note]
    return "\n".join(lines) + "\n"


def _changed(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The results that changed against the baseline within what harmless changes do."""
    baseline = meta.get("baseline")
    found = baseline.get("changed") if isinstance(baseline, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def _changed_section(changed: list[dict[str, Any]], most: int | None = None) -> list[str]:
    """The tests whose results changed against the baseline (they passed): what moved,
    and what to do whether the change was intended or not (the first ``most``)."""
    if not changed:
        return []
    rows = [
        [f"`{cell(c['nodeid'].rsplit('::', 1)[-1])}`", "<br>".join(cell(n, SUMMARY_REASON) for n in c.get("notes", []))]
        for c in changed[:most]
    ]
    if most is not None and len(changed) > most:
        rows.append(["…", f"{len(changed) - most} more in report.md"])
    return (
        [
            f"## Changed against the baseline ({len(changed)})",
            "",
            "These tests passed: their results moved within what harmless changes do (the scores' paired rule, the "
            "maps' drift bars).  If the change is intended, make this run the baseline; if not, look at the samples "
            "named below: a bug on some inputs moves those first.",
            "",
        ]
        + markdown_table(["test", "what moved"], rows)
        + [""]
    )


#: a reference a declaration cites: an issue or pull request (``owner/repo#N``) or a paper (``arXiv:N``)
REFERENCE = re.compile(r"[\w.-]+/[\w.-]+#\d+|arXiv:\d{4}\.\d{4,5}")


def run_notes(meta: Mapping[str, object]) -> list[tuple[str, bool]]:
    """The run's notes on what it did not judge, each with whether it warns: suites that
    only reported (their bars at the tier were never checked on held-out seeds), tests in
    conditions or training modes whose bars were never calibrated (the six commonest
    named), suites judged with bars never so checked, built-ins left out (no bars of their own)."""
    tier, notes = meta.get("tier"), []
    report_only, uncalibrated, left_out = meta.get("report_only"), meta.get("uncalibrated_bars"), meta.get("left_out")
    conditions = meta.get("report_only_conditions")
    if isinstance(report_only, list) and report_only:
        notes.append(
            (
                f"report-only at tier {tier}: {', '.join(report_only)} (their bars were not calibrated on held-out "
                "seeds, so their results are recorded and not judged)",
                True,
            )
        )
    if isinstance(conditions, dict) and conditions:
        counted = Counter(conditions)
        listed = "; ".join(f"{reason} ({n})" for reason, n in counted.most_common(6))
        more = f" and {len(counted) - 6} more" if len(counted) > 6 else ""
        notes.append(
            (
                f"report-only: {sum(counted.values())} tests in conditions whose bars were not calibrated "
                f"(recorded, not judged): {listed}{more}",
                True,
            )
        )
    if isinstance(uncalibrated, list) and uncalibrated:
        notes.append(
            (
                f"bars not calibrated on held-out seeds at tier {tier}: {', '.join(uncalibrated)} "
                "(their verdicts carry no stated false-fail rate)",
                True,
            )
        )
    known = meta.get("known_defects")
    if isinstance(known, dict) and known:
        held = [note for notes in known.values() for note in notes if not note.startswith(WEAKER_PREFIX)]
        weaker = [note for notes in known.values() for note in notes if note.startswith(WEAKER_PREFIX)]
        if held:
            cited = sorted({ref for note in held for ref in REFERENCE.findall(note)})
            notes.append(
                (
                    f"known limitations: {len(held)} check(s) failed as expected ({'; '.join(cited)}); each turns "
                    "its test red the day the limitation no longer shows",
                    False,
                )
            )
        if weaker:
            cited = sorted({ref for note in weaker for ref in REFERENCE.findall(note)})
            notes.append(
                (
                    f"declared weaker: {len(weaker)} check(s) judged at their declared level instead of the shared "
                    f"bar ({'; '.join(cited)})",
                    False,
                )
            )
    declared = meta.get("declared_limitations")
    if isinstance(declared, dict) and declared:
        for explainer, what in sorted(declared.items()):
            notes.append((f"declared by {explainer}: {what}", False))
    if isinstance(left_out, dict) and left_out:
        where = "; ".join(f"{suite}: {', '.join(names)}" for suite, names in left_out.items())
        notes.append(
            (
                f"not run (no bars of their own at tier {tier}, so nothing to judge): {where}; "
                "name them in --chaosmining-explainers to measure them there",
                False,
            )
        )
    return notes


def _run_notes(meta: dict[str, Any]) -> list[str]:
    """The run's notes (:func:`run_notes`; warnings in bold), each followed by a blank."""
    return [line for note, warns in run_notes(meta) for line in (f"**{note}**" if warns else note, "")]


def _baseline_section(baseline: object) -> list[str]:
    """Every judged result against the baseline: value, baseline value, change
    (new results have no baseline value, missing ones no value)."""
    if not isinstance(baseline, dict):
        return []
    lines = [
        "## Against the baseline",
        "",
        f"Baseline `{baseline.get('source')}`: compared {baseline.get('compared', 0)}, new {baseline.get('new', 0)}, "
        f"missing {len(baseline.get('missing', []))} judged results.",
        "",
    ]
    missing = baseline.get("missing") or []
    if missing:
        lines += ["Judged in the baseline, not in this run (each fails the run):", ""]
        lines += [f"- `{nodeid}`" for nodeid in missing] + [""]

    def number(x: object) -> str:
        return f"{x:.4f}" if isinstance(x, int | float) else "—"

    rows = []
    for suite, model, explainer, metric, condition, seed, value, old in baseline.get("rows", []):
        change = baseline_change(value, old)
        where = ", ".join(f"{k}={v}" for k, v in json.loads(condition).items())
        rows.append([suite, model, explainer, where, str(seed), metric, number(value), number(old), change])
    if rows:
        lines += markdown_table(
            ["suite", "model", "explainer", "condition", "seed", "metric", "value", "baseline", "change"], rows
        ) + [""]
    return lines


#: a figure named in report.md's text
_MENTION = re.compile(r"`([\w.-]+\.png)`")


def embed_figures(markdown: str, figures: list[str], left_out: str | None = None) -> str:
    """``markdown`` with each drawn figure (a file name beside report.md) shown
    as an image after the paragraph that names it (in backticks), or in a
    closing Figures section when no paragraph does; ``left_out``: said in
    parentheses after each mention of a figure that was not drawn."""
    lines = markdown.split("\n")
    if left_out is not None:
        drawn = set(figures)
        lines = [
            _MENTION.sub(lambda m: m[0] if m[1] in drawn else f"{m[0]} ({left_out})", line) if ".png`" in line else line
            for line in lines
        ]
    unplaced = []
    for name in figures:
        mention = f"`{name}`"
        at = next((i for i, line in enumerate(lines) if mention in line), None)
        if at is None:
            unplaced.append(name)
            continue
        lines[at] = lines[at].replace(mention, f"[{mention}]({name})", 1)
        end = next((i for i in range(at, len(lines)) if not lines[i].strip()), len(lines))
        lines[end:end] = ["", f"![{name}]({name})"]
    if unplaced:
        lines += ["## Figures", ""] + [f"![{name}]({name})\n" for name in unplaced]
    return "\n".join(lines)


def _outcome_section(outcomes: dict[str, int]) -> list[str]:
    if not outcomes:
        return []
    kinds = outcome_columns(outcomes)
    rows = [[s, e] + [str(c[k]) for k in kinds] for s, e, c in outcome_rows(outcomes)]
    return (
        [
            "## Conformance tests",
            "",
            "`random` is the control: its tests are expected to fail (xfailed); "
            "an xpassed control means a threshold is too low.  "
            f"Rows with failures first.  Skips are counted by why the test was not judged: {SKIP_LEGEND}.",
            "",
        ]
        + markdown_table(["suite", "explainer", *kinds], rows)
        + [""]
    )


def shared_keys_note(shared: dict[tuple[str | int, ...], list[str]]) -> str:
    """The warning that tests record judged results a baseline cannot tell apart."""
    where = "; ".join(f"{'/'.join(str(p) for p in key)}: {', '.join(tests)}" for key, tests in shared.items())
    return (
        f"tests with one result identity (suite, model, explainer, case, seed, metric), so a baseline "
        f"cannot tell them apart and one of them disappearing would go unnoticed: {where}; "
        "give each its own suite name or case"
    )


def build_markdown(run: RunResults, suites: Sequence[ReportedSuite], board: Leaderboard | None = None) -> str:
    """The Markdown report: run metadata, failures first, outcomes, every
    explainer's headline scores (``board``, the run's leaderboard where the caller
    built it already), the sections of ``suites``, cost."""
    records, meta, outcomes, failures = run.records, run.meta, run.outcomes, run.failures
    lines = ["# ChaosMining conformance report", "", f"**{run.counts.headline()}**", ""]
    lines += [f"**ERROR:** {cell(error)}" for error in run.counts.errors] + ([""] if run.counts.errors else [])
    lines += markdown_table(["run", ""], [list(row) for row in meta_rows(meta)]) + [""]
    lines += _run_notes(meta)
    if board is None:
        board = build_leaderboard(records, outcomes, suites).with_reference(shipped_reference(meta))
    lines += leaderboard_markdown(board, "leaderboard.png")
    lines += failure_table(failures)
    lines += _changed_section(_changed(meta))
    lines += scorecard_markdown(records, meta.get("baseline"))
    lines += _outcome_section(outcomes)
    if records:
        own: dict[str, list[Record]] = {}
        for r in records:
            own.setdefault(r.suite, []).append(r)
        for suite in suites:
            if suite.name not in own:
                continue  # the suite did not run: no section
            try:
                lines += suite.sections(records_frame(own[suite.name]))  # its own columns: fast selections
            except Exception as exc:  # noqa: BLE001 - a failure costs that suite's section, not the report
                warnings.warn(
                    f"chaosmining: {suite.name} section not written: {type(exc).__name__}: {exc}",
                    stacklevel=2,
                    category=ChaosminingWarning,
                )
                lines += [f"*The {suite.name} section could not be written ({type(exc).__name__}: {exc}).*", ""]
        lines += _cost_sections(records_frame([r for r in records if r.metric in _COST_METRICS]))
    lines += _baseline_section(meta.get("baseline"))
    return "\n".join(lines)


def write_reports(out_dir: Path, run: RunResults, markdown: str) -> list[str]:
    """Write results.json (every record; their per-sample fields, fingerprints of maps
    among them, in its samples file: :func:`~pytest_chaosmining.core.results_file.write_results`),
    results.csv and report.md into ``out_dir`` (the suites write their figures through
    :meth:`~pytest_chaosmining.suites.Suite.figures`)."""
    records = run.records
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {"meta": run.meta, "outcomes": run.outcomes, "failures": run.failures, "counts": run.counts.to_dict()}
    written = write_results(out_dir / "results.json", payload, [r.to_dict() for r in records])
    records = run.human_facing.records  # fingerprints of maps: results.json only
    case_keys = sorted({k for r in records for k in r.case})
    fields = [
        "suite",
        "model",
        "explainer",
        *case_keys,
        "seed",
        "metric",
        "value",
        "threshold",
        "passed",
        "expected",
        "measured",
        "nodeid",
    ]
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in records:
        writer.writerow(r.flat())
    atomic_write_text(out_dir / "results.csv", buffer.getvalue())
    written.append(str(out_dir / "results.csv"))
    atomic_write_text(out_dir / "report.md", markdown + "\n")
    written.append(str(out_dir / "report.md"))
    return written


def terminal_table(
    records: list[Record], outcomes: Counter[tuple[str, str, str]], suites: Sequence[ReportedSuite]
) -> list[str]:
    """Per suite and explainer with a test in this run: test outcomes, mean headline score
    (over the records the suite ranks by: a sweep's default condition) and mean attribution time."""
    score_metrics = {suite.name: suite.score_metric for suite in suites}
    stats: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in ranked_records(suites, records):
        if r.explainer == MODEL_LEVEL or not math.isfinite(r.value):  # not measured: no nan in a mean
            continue
        stats.setdefault((r.suite, r.explainer), {}).setdefault(r.metric, []).append(r.value)
    keys = sorted(set(stats) | {(s, e) for s, e, _ in outcomes})
    w = max([14] + [len(e) for _, e in keys])  # the explainer column fits the longest name
    kinds = [k for k in outcome_columns(outcome_counts(outcomes)) if k != "xpassed"]
    widths = [max(6, len(TERMINAL_HEADS.get(k, k))) for k in kinds]
    heads = " ".join(f"{TERMINAL_HEADS.get(k, k):>{n}}" for k, n in zip(kinds, widths))
    lines = [f"{'suite':<10} {'explainer':<{w}} {heads} {'score':>20} {'time ms':>8}"]
    for suite, e in keys:
        counts = {o: n for (s, x, o), n in outcomes.items() if s == suite and x == e}
        if not any(counts.values()):
            continue  # values recorded without a test of this explainer (a reference, a timing): no verdict to count
        st = stats.get((suite, e), {})
        metric = score_metrics.get(suite)
        metric = metric if metric in st else None
        score = f"{metric} {sum(st[metric]) / len(st[metric]):.3f}" if metric else "-"
        tm = st.get("time_ms", [])
        cells = " ".join(f"{counts.get(k, 0):>{n}}" for k, n in zip(kinds, widths))
        lines.append(f"{suite:<10} {e:<{w}} {cells} {score:>20} {f'{sum(tm) / len(tm):.1f}' if tm else '-':>8}")
    return lines
