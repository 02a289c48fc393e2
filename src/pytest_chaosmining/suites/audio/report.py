"""Report section of the audio suite (ChaosMining Tables 4 and 5)."""

from __future__ import annotations

from typing import Any

from pytest_chaosmining.reports.figures import Draw
from pytest_chaosmining.reports.tables import condition_cells, explainer_order, markdown_table, per_condition_table


def sections(df: Any) -> list[str]:
    """The audio suite's sections of report.md."""
    aud = df[df["suite"] == "audio"]
    if aud.empty:
        return []
    explainers = explainer_order(aud["explainer"])
    channels = sorted(int(c) for c in aud["channels"].dropna().unique())
    chance = ", ".join(f"1/{c} = {1 / c:.3f}" for c in channels)
    lines = [
        "## Audio",
        "",
        "Shaped like ChaosMining Table 4: validation accuracy (%) and the speech channel's share of "
        f'Σ|attribution| (the paper\'s audio "FPrec") per explainer, mean ± std over seeds.  Chance share: {chance}.',
        "",
    ]
    for position, title in (("FP", "speech at a fixed channel (FP)"), ("RP", "speech at a random channel (RP)")):
        conds = [b + position for b in ("RB", "SB") if (aud["condition"] == b + position).any()]
        if not conds:
            continue
        header = ["model", "params (M)", "input"]
        for c in conds:
            header += [f"{c} Pred (ACC%)"] + [f"{c} {e} (share)" for e in explainers]
        rows = []
        for (model, _arch), group in aud.groupby(["model", "arch"], sort=False):
            params = group[group.metric == "params_m"]["value"]
            first = group.iloc[0]
            shape = f"{int(first['channels'])} ch × {first['duration']:g} s @ {int(first['rate'])} Hz"
            row = [model, f"{params.iloc[0]:.3f}" if len(params) else "", shape]
            rows.append(row + condition_cells(group, conds, "channel_share", explainers))
        lines += [f"### {title}", ""] + markdown_table(header, rows) + [""]
    hits = aud[aud.metric == "top1_hit"]
    if not hits.empty:
        lines += [
            f"### Top-1 channel hit rate (the speech channel holds strictly the largest mass; chance: {chance})",
            "",
        ]
        lines += per_condition_table(hits, explainers)
    lines += [
        "One clip's channels (the speech channel in colour) beside each explainer's share of |attribution| "
        "per channel: `audio_examples.png`.",
        "",
    ]
    return lines


#: the suite's figures: none of its own
FIGURES: dict[str, Draw] = {}
