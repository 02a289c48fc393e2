"""Rebuild a report folder from one or more results.json files.

``python -m pytest_chaosmining.tools.rebuild OUT_DIR RESULTS.json [RESULTS.json ...]``

With several files (the shards of one run, ``--chaosmining-shard i/n``) their
records, outcomes and failures are merged into one report; they must share a
tier.  The example figures (vision, audio) need the run's data and are left
out; with ``--figures all`` every other figure is drawn from the records."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import Record, sort_records
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.reports.figures import EVERY, NEEDED
from pytest_chaosmining.reports.render import render
from pytest_chaosmining.reports.run_counts import RunCounts
from pytest_chaosmining.reports.run_results import RunResults
from pytest_chaosmining.suites import all_specs


def merge(
    payloads: list[dict[str, Any]], sources: list[str]
) -> tuple[list[Record], dict[str, Any], dict[str, int], list[dict[str, str]], RunCounts]:
    """Records (exact duplicates once), metadata, outcome counts, failures and the one
    count of ``payloads`` (each a results.json) as one run's."""
    tiers = {p["meta"].get("tier") for p in payloads}
    if len(tiers) > 1:
        raise ValueError(f"cannot merge results of different tiers: {sorted(map(str, tiers))}")
    seen: dict[str, Record] = {}
    for payload in payloads:
        for raw in payload["records"]:
            seen.setdefault(json.dumps(raw, sort_keys=True), Record.from_dict(raw))
    outcomes: Counter[str] = Counter()
    for payload in payloads:
        outcomes.update(payload.get("outcomes", {}))
    failures = sorted((f for p in payloads for f in p.get("failures", [])), key=lambda f: f["nodeid"])
    meta = dict(payloads[0]["meta"])
    if len(payloads) > 1:
        suites = [s for p in payloads for s in p["meta"].get("suites", [])]
        meta["suites"] = list(dict.fromkeys(suites))
        meta["merged_from"] = sources
        meta["baseline"] = merged_baseline([p["meta"].get("baseline") for p in payloads])
    counts = [RunCounts.from_dict(p["counts"]) for p in payloads if isinstance(p.get("counts"), dict)]
    not_judged: Counter[str] = Counter()
    for c in counts:
        not_judged.update(c.not_judged)
    merged = RunCounts(
        judged=sum(c.judged for c in counts),
        failed=sum(c.failed for c in counts),
        missing=sum(c.missing for c in counts),
        changed=sum(c.changed for c in counts),
        expected=sum(c.expected for c in counts),
        not_judged=dict(sorted(not_judged.items())),
        errors=tuple(dict.fromkeys(e for c in counts for e in c.errors)),
    )
    return sort_records(list(seen.values())), meta, dict(sorted(outcomes.items())), failures, merged


def merged_baseline(tables: list[object]) -> dict[str, object] | None:
    """The shards' comparisons with one baseline as one: counts added, missing
    tests and rows joined (None where no shard ran against a baseline)."""
    found = [t for t in tables if isinstance(t, dict)]
    if not found:
        return None
    rows = {json.dumps(row): row for table in found for row in table.get("rows", [])}
    return {
        "source": found[0].get("source"),
        "compared": sum(int(t.get("compared", 0)) for t in found),
        "new": sum(int(t.get("new", 0)) for t in found),
        "missing": sorted({m for t in found for m in t.get("missing", [])}),
        "changed": sorted((c for t in found for c in t.get("changed", [])), key=lambda c: str(c.get("nodeid"))),
        "rows": sorted(rows.values(), key=str),
    }


def rebuild(out_dir: Path, paths: list[Path], every_figure: bool = False) -> list[str]:
    """Write the report of ``paths`` merged into ``out_dir`` (``every_figure``: the
    summaries' figures too, the leaderboard's and the papers'); the paths written."""
    try:
        payloads = [read_results(Path(p), samples=True) for p in paths]
    except ValueError as exc:  # NotAResultsFile among them: names the file and what is wrong
        raise ValueError(f"cannot read results: {exc}") from exc
    merged = RunResults(*merge(payloads, [str(p) for p in paths]))
    return render(Path(out_dir), merged, None, all_specs(), every_figure=every_figure)[1]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="chaosmining-rebuild",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("out_dir", type=Path, help="folder to write the report into")
    parser.add_argument("results", type=Path, nargs="+", help="results.json files of one run (or its shards)")
    parser.add_argument(
        "--figures",
        choices=(NEEDED, EVERY),
        default=NEEDED,
        help="needed (default): no figure, a rebuilt report has no example figures; all: the leaderboard's, "
        "cost's and the papers' figures",
    )
    args = parser.parse_args(argv)
    try:
        written = rebuild(args.out_dir, args.results, args.figures == EVERY)
    except ValueError as exc:
        parser.error(str(exc))
    for path in written:
        print(f"chaosmining report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
