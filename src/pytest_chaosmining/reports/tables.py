"""Helpers the report sections share: a DataFrame of records, mean ± sd cells,
Markdown tables, the explainers' column order."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers import BUILTIN_NAMES, CONTROL_NAME
from pytest_chaosmining.reports.reported_suite import ReportedSuite
from pytest_chaosmining.verdict.skips import SKIP_KINDS

if TYPE_CHECKING:
    import pandas as pd


def ranked_records(suites: Sequence[ReportedSuite], records: Sequence[Record]) -> list[Record]:
    """The records each suite ranks its explainers by (a sweep's: its default condition's), in suite order."""
    return [r for suite in suites for r in suite.ranked([r for r in records if r.suite == suite.name])]


def records_frame(records: list[Record]) -> pd.DataFrame:
    """The records as a frame, one row each (pandas, imported with the first table of records).
    Text columns are plain objects under every pandas, and the columns are held in one
    block per type (``copy``): pandas 3 would give each text column its own string block,
    and every row selection copies each block apart."""
    import pandas as pd

    frame = pd.DataFrame([r.flat() for r in records])
    text = [c for c, dtype in frame.dtypes.items() if not pd.api.types.is_numeric_dtype(dtype)]
    return frame.astype(dict.fromkeys(text, object)).copy()


def mean_sd(values: Any, digits: int = 3) -> str:
    """``mean ± sd`` of ``values`` (one value: the value alone; none: empty; only
    undefined values, such as a correlation of a constant: ``undefined``)."""
    import numpy as np  # with the first table of records: never the entry module's

    values = [float(v) for v in values]
    if not values:
        return ""
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return "undefined"

    mean = float(np.mean(values))
    if len(values) == 1:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {float(np.std(values)):.{digits}f}"


def baseline_change(value: object, old: object) -> str:
    """The change column of a baseline row: ``+0.0123``, ``new`` (no baseline value)
    or ``missing`` (no value in this run)."""
    if isinstance(value, int | float) and isinstance(old, int | float):
        return f"{value - old:+.4f}"
    return "new" if old is None else "missing"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def explainer_order(names: Any) -> list[str]:
    """The built-ins in their order (the paper's four first), then the others by name, the control last."""
    fixed = [n for n in BUILTIN_NAMES if n != CONTROL_NAME]
    names = [n for n in dict.fromkeys(names) if n != MODEL_LEVEL]
    return (
        [n for n in fixed if n in names]
        + sorted(n for n in names if n not in fixed and n != "random")
        + (["random"] if "random" in names else [])
    )


def condition_cells(group: Any, conditions: list[str], metric: str, explainers: list[str]) -> list[str]:
    """Per condition: accuracy (%) and each explainer's ``metric`` (mean ± std; "not measured" where none)."""
    cells = []
    for condition in conditions:
        g = group[group["condition"] == condition]
        cells.append(mean_sd(g[(g.metric == "accuracy") & (g.explainer == MODEL_LEVEL)]["value"] * 100, 2))
        for e in explainers:
            sel = g[(g.metric == metric) & (g.explainer == e)]["value"]
            cells.append(mean_sd(sel) if len(sel) else "not measured")
    return cells


def per_condition_table(frame: Any, explainers: list[str]) -> list[str]:
    """One row per (model, condition): each explainer's mean ± std of ``frame``'s values."""
    rows = [
        [model, cond] + [mean_sd(group[group.explainer == e]["value"]) for e in explainers]
        for (model, cond), group in frame.groupby(["model", "condition"], sort=True)
    ]
    return markdown_table(["model", "condition"] + explainers, rows) + [""]


def values_of(group: Any, metric: str, explainer: str, **where: Any) -> Any:
    """The values of ``metric`` for ``explainer`` whose condition fields equal ``where``
    (none where no record has such a field: the run did not measure it)."""
    sel = group[(group.metric == metric) & (group.explainer == explainer)]
    for key, value in where.items():
        sel = sel[sel[key] == value] if key in sel.columns else sel.iloc[0:0]
    return sel["value"]


#: the test outcomes the reports count, in column order (a skip by its kind)
OUTCOME_KINDS = ("passed", "failed", *SKIP_KINDS, "xfailed", "xpassed")


#: what each kind of skip means, for the reports' legends
SKIP_LEGEND = (
    "*not applicable*: the explainer does not apply to the model; *no calibrated bar*: the tier has no "
    "bar for what the test measured (recorded); *report-only*: the suite's bars at this tier were not "
    "calibrated on held-out seeds (recorded); *model below gate*: the model explained fell below its "
    "quality gate or premise (its own test fails or xfails); *skipped*: any other reason"
)
#: short column heads of the terminal summary
TERMINAL_HEADS = {
    "not applicable": "n/a",
    "no calibrated bar": "no bar",
    "report-only": "report",
    "model below gate": "gate",
}


def outcome_counts(outcomes: Mapping[tuple[str, str, str], int]) -> dict[str, int]:
    """``(suite, explainer, outcome)`` test counts keyed as the reports key them:
    ``"suite|explainer|outcome"``, sorted."""
    return {f"{s}|{e}|{o}": n for (s, e, o), n in sorted(outcomes.items())}


def outcome_columns(outcomes: Mapping[str, int]) -> list[str]:
    """The outcome kinds a table shows: passed and failed always, the others where counted."""
    counted = {key.rsplit("|", 1)[-1] for key, n in outcomes.items() if n}
    return [k for k in OUTCOME_KINDS if k in ("passed", "failed") or k in counted]


def outcome_rows(outcomes: dict[str, int]) -> list[tuple[str, str, Counter[str]]]:
    """``suite|explainer|outcome`` counts pivoted to (suite, explainer, counts),
    rows with failures (or a passing control) first, then by suite and explainer."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for key, n in outcomes.items():
        suite, explainer, outcome = key.split("|")
        table.setdefault((suite, explainer), Counter())[outcome] += n
    ordered = sorted(table.items(), key=lambda item: (-(item[1]["failed"] + item[1]["xpassed"]), item[0]))
    return [(suite, explainer, counts) for (suite, explainer), counts in ordered]


#: the run metadata shown to people, in order, with their labels (results.json keeps all of it)
META_LABELS = (
    ("tier", "tier"),
    ("seeds", "seeds per suite"),
    ("suites", "suites"),
    ("explainers", "explainers"),
    ("device", "device"),
    ("xdist_workers", "xdist workers"),
    ("versions", "versions"),
    ("python", "Python"),
    ("platform", "platform"),
    ("started", "started"),
    ("duration_s", "duration"),
)


def _meta_text(key: str, value: object) -> str:
    """One metadata value as words: lists joined, mappings as ``key value`` pairs."""
    if key == "duration_s" and isinstance(value, (int, float)):
        return f"{int(value) // 60} min {int(value) % 60} s"
    if key == "xdist_workers" and value is None:
        return "none (one process)"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items() if v is not None)
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def meta_rows(meta: Mapping[str, object]) -> list[tuple[str, str]]:
    """The run metadata as (label, text) rows for the reports' metadata table."""
    return [(label, _meta_text(key, meta[key])) for key, label in META_LABELS if key in meta]
