"""What a pull request changed against main, per explainer:
``chaosmining-pr-summary MAIN.json THIS.json [--out FILE]``.

The comment body (or job summary) a pull request gets: this run's one count, then per
explainer how many of its tests regressed (failed, fell beyond the allowed drop, drifted,
grew in cost: :func:`~pytest_chaosmining.tools.compare.compare_runs`, the live gate's
rule), changed within what harmless changes do, improved (rose beyond the allowed drop),
are new or missing, and its leaderboard movement (headline score and rank per suite, main
→ this run); the findings themselves folded below.  Exit 0: the run's own exit status is
the verdict.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.core.tiers import DEFAULT_TIER
from pytest_chaosmining.reports.failure_table import cell
from pytest_chaosmining.reports.leaderboard import Leaderboard, build_leaderboard
from pytest_chaosmining.reports.run_counts import RunCounts
from pytest_chaosmining.suites import all_specs, metric_catalog
from pytest_chaosmining.tools.compare import FAILING, Finding, RunJudging, compare_runs, table
from pytest_chaosmining.verdict.baseline import Baseline

#: the columns of the per-explainer table, in order: tests, each under the first of its findings' kinds
KINDS = ("regressed", "changed", "improved", "new", "missing")


def _payload(path: Path) -> dict[str, object]:
    return read_results(path, samples=True)


def _records(payload: dict[str, object]) -> list[Record]:
    found = payload.get("records", [])
    return [Record.from_dict(r) for r in found] if isinstance(found, list) else []


def _board(payload: dict[str, object]) -> Leaderboard:
    outcomes = payload.get("outcomes", {})
    return build_leaderboard(_records(payload), outcomes if isinstance(outcomes, dict) else {}, all_specs())


def improved(
    old: Sequence[Record], new: Sequence[Record], tier: str, judging: RunJudging | None = None
) -> list[Record]:
    """NEW's judged results that rose beyond their metric's allowed drop above OLD's
    (:meth:`~pytest_chaosmining.verdict.rule.BaselineRule.improved`), judged as NEW's run judged."""
    rule = (judging or RunJudging()).rule(Baseline(list(old), "main", metric_catalog()), tier)
    return [r for r in new if r.threshold is not None and rule.improved(r)]


def movement(old: Leaderboard, new: Leaderboard, explainer: str) -> str:
    """The explainer's headline score and rank per suite, main → this run, where it moved."""

    def ranked(board: Leaderboard) -> dict[tuple[str, str], tuple[float, int]]:
        out = {}
        for column_index, column in enumerate(board.columns):
            scored = [(cells[column_index].score, name) for name, cells in board.rows]
            order = sorted((s, n) for s, n in scored if s is not None)[::-1]
            for rank, (score, name) in enumerate(order, start=1):
                out[(column[0], name)] = (score, rank)
        return out

    then, now = ranked(old), ranked(new)
    moved = []
    for suite, _metric in new.columns:
        a, b = then.get((suite, explainer)), now.get((suite, explainer))
        if b is None or (a is not None and abs(a[0] - b[0]) < 5e-4 and a[1] == b[1]):
            continue
        before = "new" if a is None else f"{a[0]:.3f} (#{a[1]})"
        moved.append(f"{suite} {before} → {b[0]:.3f} (#{b[1]})")
    return "; ".join(moved) or "—"


def _explainer_of(
    findings: Sequence[Finding], records: Sequence[Record], failures: list[dict[str, str]]
) -> dict[Finding, str]:
    by_node = {r.nodeid: r.explainer for r in records}
    by_node.update({f["nodeid"]: f["explainer"] for f in failures})
    return {f: f.explainer or by_node.get(f.nodeid, MODEL_LEVEL) for f in findings}


def pr_summary(main: Path, this: Path) -> str:
    """The pull request's comment body: THIS run against MAIN's results."""
    old, new = _payload(main), _payload(this)
    findings = compare_runs(main, this)
    new_records, old_records = _records(new), _records(old)
    failures = new.get("failures", [])
    failures = failures if isinstance(failures, list) else []
    explainer_of = _explainer_of(findings, new_records + old_records, failures)
    meta = new.get("meta", {})
    tier = str(meta.get("tier", DEFAULT_TIER)) if isinstance(meta, dict) else DEFAULT_TIER
    tests: dict[str, dict[str, set[str]]] = {}  # explainer → kind → the tests
    for finding in findings:
        kind = "regressed" if finding.kind in FAILING and finding.kind != "missing" else finding.kind
        tests.setdefault(explainer_of[finding], {}).setdefault(kind, set()).add(finding.nodeid)
    risen = improved(old_records, new_records, tier, RunJudging.of(meta) if isinstance(meta, dict) else None)
    for record in risen:
        tests.setdefault(record.explainer, {}).setdefault("improved", set()).add(record.nodeid)
    counts: dict[str, Counter[str]] = {}
    for explainer, kinds in tests.items():  # a test counts once, under the first of its kinds in KINDS
        seen: set[str] = set()
        counts[explainer] = Counter()
        for kind in KINDS:
            found = kinds.get(kind, set()) - seen
            counts[explainer][kind] = len(found)
            seen |= found
    boards = _board(old), _board(new)
    explainers = sorted({r.explainer for r in new_records + old_records if r.explainer != MODEL_LEVEL} | set(counts))
    found_red = any(f.kind in FAILING for f in findings)
    stated = new.get("counts")
    run_counts = RunCounts.from_dict(stated) if isinstance(stated, dict) else None
    headline = run_counts.headline() if run_counts is not None else ""
    red = run_counts.failed > 0 or bool(run_counts.errors) if run_counts is not None else found_red
    disagree = []
    if run_counts is not None and found_red != red:  # MAIN is not the baseline the run was judged against
        failing = sorted({f.nodeid for f in findings if f.kind in FAILING})
        disagree = [
            f"Against this main.json the comparison finds {len(failing)} failing test(s) "
            if found_red
            else "Against this main.json the comparison finds nothing failing, ",
            "while the run's own verdict (above) was judged against its baseline: the run's verdict stands.",
            "",
        ]
    lines = [
        f"## chaosmining: {'regressed' if red else 'no regression'} against main",
        "",
        *([f"This run: {headline}.", ""] if headline else []),
        *(["".join(disagree[:2]), ""] if disagree else []),
        "| explainer | verdict | " + " | ".join(KINDS) + " | leaderboard (main → this run) |",
        "|---|---|" + "---|" * len(KINDS) + "---|",
    ]
    for explainer in explainers:
        mine = counts.get(explainer, Counter())
        verdict = "regressed" if mine["regressed"] or mine["missing"] else "changed" if mine["changed"] else "same"
        verdict = "improved" if verdict == "same" and mine["improved"] else verdict
        cells = " | ".join(str(mine[k]) for k in KINDS)
        lines.append(f"| {cell(explainer)} | {verdict} | {cells} | {cell(movement(*boards, explainer))} |")
    if risen:
        lines += ["", f"Improved ({len(risen)}): " + ", ".join(f"`{r.nodeid}` {r.metric}" for r in risen[:20])]
    lines += ["", "<details><summary>Every finding</summary>", "", table(findings, "main", "this run"), "</details>"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="chaosmining-pr-summary", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("main", type=Path, help="results.json of a run on main (the baseline)")
    parser.add_argument("this", type=Path, help="this run's results.json")
    parser.add_argument("--out", type=Path, default=None, help="also write the body to this file")
    args = parser.parse_args(argv)
    try:
        body = pr_summary(args.main, args.this)
    except (OSError, ValueError, KeyError) as exc:
        print(f"chaosmining-pr-summary: {exc}", file=sys.stderr)
        return 2
    if args.out is not None:
        args.out.write_text(body)
    sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
