"""Helpers the report sections share: a DataFrame of records, mean ± sd cells,
Markdown tables, the explainers' column order."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record


def records_frame(records: list[Record]) -> Any:
    import pandas as pd

    return pd.DataFrame([r.flat() for r in records])


def mean_sd(values: Any, digits: int = 3) -> str:
    """``mean ± sd`` of ``values`` (one value: the value alone; none: empty)."""
    values = [float(v) for v in values]
    if not values:
        return ""
    import numpy as np

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
    from pytest_chaosmining.explainers import BUILTIN_NAMES, CONTROL_NAME

    fixed = [n for n in BUILTIN_NAMES if n != CONTROL_NAME]
    names = [n for n in dict.fromkeys(names) if n != MODEL_LEVEL]
    return (
        [n for n in fixed if n in names]
        + sorted(n for n in names if n not in fixed and n != "random")
        + (["random"] if "random" in names else [])
    )


def condition_cells(group: Any, conditions: list[str], metric: str, explainers: list[str]) -> list[str]:
    """Per condition: accuracy (%) and each explainer's ``metric`` (mean ± std; "skipped" when not measured)."""
    cells = []
    for condition in conditions:
        g = group[group["condition"] == condition]
        cells.append(mean_sd(g[(g.metric == "accuracy") & (g.explainer == MODEL_LEVEL)]["value"] * 100, 2))
        for e in explainers:
            sel = g[(g.metric == metric) & (g.explainer == e)]["value"]
            cells.append(mean_sd(sel) if len(sel) else "skipped")
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


#: the test outcomes the reports count, in column order
OUTCOME_KINDS = ("passed", "failed", "skipped", "xfailed", "xpassed")


def outcome_rows(outcomes: dict[str, int]) -> list[tuple[str, str, Counter[str]]]:
    """``suite|explainer|outcome`` counts pivoted to (suite, explainer, counts),
    rows with failures (or a passing control) first, then by suite and explainer."""
    table: dict[tuple[str, str], Counter[str]] = {}
    for key, n in outcomes.items():
        suite, explainer, outcome = key.split("|")
        table.setdefault((suite, explainer), Counter())[outcome] += n
    ordered = sorted(table.items(), key=lambda item: (-(item[1]["failed"] + item[1]["xpassed"]), item[0]))
    return [(suite, explainer, counts) for (suite, explainer), counts in ordered]
