"""Report section of the vision suite (ChaosMining Tables 2 and 3)."""

from __future__ import annotations

from typing import Any

from pytest_chaosmining.reports.figures import Draw
from pytest_chaosmining.reports.tables import condition_cells, explainer_order, markdown_table, per_condition_table


def sections(df: Any) -> list[str]:
    """The vision suite's sections of report.md."""
    vis = df[df["suite"] == "vision"]
    if vis.empty:
        return []
    explainers = explainer_order(vis["explainer"])
    lines = [
        "## Vision",
        "",
        "Shaped like ChaosMining Tables 2 and 3: validation accuracy (%) and IoU of the top-k box "
        "(k = foreground area) per explainer, mean ± std over seeds.  Chance: 10% accuracy, IoU ≈ 1/49.",
        "",
    ]
    for background, title in (("RB", "random background"), ("SB", "structural background")):
        conds = [c for c in ("FP", "RP") if (vis["condition"] == background + c).any()]
        if not conds:
            continue
        header = ["model", "params (M)", "canvas"]
        for c in conds:
            header += [f"{background}{c} Pred (ACC%)"] + [f"{background}{c} {e} (IoU)" for e in explainers]
        rows = []
        for (model, canvas), group in vis.groupby(["model", "canvas"], sort=True):
            params = group[group.metric == "params_m"]["value"]
            row = [model, f"{params.iloc[0]:.2f}" if len(params) else "", f"{int(canvas)} px"]
            rows.append(row + condition_cells(group, [background + c for c in conds], "iou", explainers))
        lines += [f"### {title}", ""] + markdown_table(header, rows) + [""]
    share = vis[vis.metric == "box_share"]
    if not share.empty:
        lines += ["### Share of |attribution| inside the true box (chance ≈ 1/49 = 0.020)", ""]
        lines += per_condition_table(share, explainers)
    lines += [
        "Validation images with each explainer's map as its patch masses (the run's fingerprint; its smoothed "
        "map under `--chaosmining-figures models`), its top-k box (red) and the true box (green), and the "
        "samples a failed test chose: `vision_examples.png`.",
        "",
    ]
    return lines


#: the suite's figures: none of its own
FIGURES: dict[str, Draw] = {}
