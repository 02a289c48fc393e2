"""The built-ins' reference results, shipped with this version: the leaderboard rows
of the default run (``reports/smoke/``, the smoke tier's seeds), shown beside a run
that did not compute them (``--chaosmining-explainers own``), marked as reference
and never judged.

``python -m pytest_chaosmining.tools.reference reports/smoke/results.json`` writes
:data:`SHIPPED` from the default run's results (a project test keeps the two equal)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_chaosmining import __version__
from pytest_chaosmining.core.records import Record, human_facing
from pytest_chaosmining.explainers import BUILTIN_NAMES, CONTROL_NAME
from pytest_chaosmining.reports.leaderboard import Cell, Leaderboard, build_leaderboard
from pytest_chaosmining.reports.reported_suite import ReportedSuite

#: the shipped reference of the smoke tier
SHIPPED = Path(__file__).with_name("reference_smoke.json")


def reference_payload(results: Mapping[str, Any], suites: Sequence[ReportedSuite]) -> dict[str, object]:
    """The built-ins' leaderboard rows of a results.json payload, with where they come from."""
    meta = results["meta"]
    assert isinstance(meta, dict)
    records = human_facing([Record.from_dict(r) for r in results["records"]])
    board = build_leaderboard(records, results["outcomes"], suites)
    rows = [
        [name, [[c.score, list(c.spread) if c.spread else None, c.verdict] for c in cells]]
        for name, cells in board.rows
        if name in BUILTIN_NAMES and name != CONTROL_NAME
    ]
    return {
        "version": __version__,
        "tier": meta["tier"],
        "seeds": meta["seeds"],
        "started": meta.get("started"),
        "columns": [list(c) for c in board.columns],
        "rows": rows,
    }


@functools.cache
def _shipped_payload() -> dict[str, Any] | None:
    """:data:`SHIPPED`, read once (package data: it does not change during a run)."""
    return json.loads(SHIPPED.read_text()) if SHIPPED.exists() else None


def shipped_reference(meta: Mapping[str, Any]) -> Leaderboard | None:
    """The shipped reference rows where they describe this run's setting (its tier and
    seeds), else None."""
    payload = _shipped_payload()
    if payload is None:
        return None
    if payload["tier"] != meta.get("tier") or any(
        str(payload["seeds"].get(suite)) != str(seeds) for suite, seeds in dict(meta.get("seeds") or {}).items()
    ):
        return None
    columns = [(suite, metric) for suite, metric in payload["columns"]]
    rows = [
        (name, [Cell(score, tuple(spread) if spread else None, verdict, {}) for score, spread, verdict in cells])
        for name, cells in payload["rows"]
    ]
    return Leaderboard(columns, rows, reference=frozenset(name for name, _ in rows), source=payload["version"])
