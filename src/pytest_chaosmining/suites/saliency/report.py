"""Report section and figure of the saliency guided training suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, mean_sd, records_frame

SALIENCY_TOLERANCE = 0.05  # |Δ| within this reads "unchanged" in the saliency report


def _verdict(changes: Any) -> str:
    mean = float(changes.mean()) if len(changes) else float("nan")
    if mean < -SALIENCY_TOLERANCE:
        return "**drops**"
    return "improves" if mean > SALIENCY_TOLERANCE else "unchanged"


def sections(df: Any) -> list[str]:
    """The saliency suite's sections of report.md."""
    sal = df[(df["suite"] == "saliency") & (df["seed"] >= 0)]
    if sal.empty:
        return []
    lines = [
        "## Saliency guided training",
        "",
        "Standard against saliency guided training of the same model (same data, initialisation and schedule), "
        "paired by seed; Δ = guided − standard, mean ± std over seeds.  `signed`: the k lowest signed gradients "
        f"are masked (the reference); `absolute`: the k lowest |gradients|.  Verdicts: Δ below −{SALIENCY_TOLERANCE} "
        f"**drops**, above +{SALIENCY_TOLERANCE} improves, otherwise unchanged.  The paper claims quality is kept "
        "and explanations improve; where a row says **drops**, the claim does not hold on our data.",
        "",
        "### Prediction quality and training time",
        "",
    ]
    rows = []
    for key, group in sal[sal.explainer == MODEL_LEVEL].groupby("comparison", sort=True):
        metric = "uscore" if (group.metric == "uscore").any() else "accuracy"
        arm = {a: g for a, g in group.groupby("arm")}
        std, guided = arm.get("standard", group.iloc[:0]), arm.get("guided", group.iloc[:0])
        changes = std[std.metric == f"{metric}_change"]["value"]
        t_std = std[std.metric == "train_seconds"]["value"]
        t_guided = guided[guided.metric == "train_seconds"]["value"]
        ratio = f"{t_guided.mean() / t_std.mean():.1f}×" if len(t_std) and t_std.mean() > 0 else ""
        rows.append(
            [
                key,
                group["model"].iloc[0].split("-sg")[0],
                metric,
                mean_sd(std[std.metric == metric]["value"]),
                mean_sd(guided[guided.metric == metric]["value"]),
                mean_sd(changes),
                _verdict(changes),
                mean_sd(t_std, 1),
                mean_sd(t_guided, 1),
                ratio,
            ]
        )
    lines += markdown_table(
        [
            "comparison",
            "model",
            "quality",
            "standard",
            "guided",
            "Δ",
            "verdict",
            "train s standard",
            "train s guided",
            "cost",
        ],
        rows,
    ) + [""]
    lines += ["### Explainers' scores", ""]
    rows = []
    attr = sal[sal.explainer != MODEL_LEVEL]
    for key, group in attr.groupby("comparison", sort=True):
        for explainer in explainer_order(group["explainer"]):
            eg = group[group.explainer == explainer]
            for metric in ("fprec", "iou", "box_share", "channel_share", "top1_hit"):
                changes = eg[eg.metric == f"{metric}_change"]["value"]
                if changes.empty:
                    continue
                std = eg[(eg.metric == metric) & (eg.arm == "standard")]["value"]
                guided = eg[(eg.metric == metric) & (eg.arm == "guided")]["value"]
                rows.append(
                    [key, explainer, metric, mean_sd(std), mean_sd(guided), mean_sd(changes), _verdict(changes)]
                )
    lines += markdown_table(["comparison", "explainer", "score", "standard", "guided", "Δ", "verdict"], rows) + [""]
    lines += ["Paired differences per explainer: `saliency_changes.png`.", ""]
    return lines


def _plot_saliency(records: list[Record], path: Path) -> bool:
    """Bars of the mean paired change (± std over seeds) of each comparison's main score, per explainer."""
    df = records_frame([r for r in records if r.suite == "saliency" and r.seed >= 0 and r.explainer != MODEL_LEVEL])
    if df.empty:
        return False
    df = df[df.metric.isin(["fprec_change", "iou_change", "channel_share_change"])]
    if df.empty:
        return False
    plt = pyplot()
    keys = sorted(df["comparison"].unique())
    explainers = explainer_order(df["explainer"])
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(keys) * max(1, len(explainers)) / 3), 4))
    width = 0.8 / max(1, len(explainers))
    for i, e in enumerate(explainers):
        g = df[df.explainer == e].groupby("comparison")["value"]
        mean, std = g.mean(), g.std().fillna(0.0)
        ax.bar(
            np.arange(len(keys)) + i * width,
            [mean.get(k, np.nan) for k in keys],
            width,
            yerr=[std.get(k, 0.0) for k in keys],
            label=e,
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(np.arange(len(keys)) + 0.4 - width / 2)
    ax.set_xticklabels(keys, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("Δ score (guided − standard)")
    ax.set_title("Saliency guided training: change of FPrec / IoU / channel share")
    ax.legend(ncol=len(explainers), fontsize=8)
    return save(fig, path)


#: the suite's figures: file name → drawing function
FIGURES: dict[str, Draw] = {"saliency_changes.png": _plot_saliency}
