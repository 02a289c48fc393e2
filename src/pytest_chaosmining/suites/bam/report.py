"""Report section and figure of the BAM suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, mean_sd, records_frame, values_of


def sections(df: Any) -> list[str]:
    """The premise check, MCS / IDR / IIR per explainer beside their baselines, and the MCS_k series."""
    bam = df[df["suite"] == "bam"]
    if bam.empty:
        return []
    lines = [
        "## BAM",
        "",
        "f_o is trained on object labels and f_s on scene labels of the same images (X_{o,s}); X_{∅,s} removes the "
        "object, X_{o,g} the scene (gray).  Maps are |attribution| averaged over channels, capped at their 99th "
        "percentile and scaled to [0, 1]; g_c is a map's mean over the object's pixels.  Baselines use random "
        "regions (each object region moved to a random place).  Mean ± std over seeds.",
        "",
        "### Premise: accuracy without the object / without the scene",
        "",
    ]
    model_level = bam[bam.explainer == MODEL_LEVEL]
    rows = []
    for role in ("f_o", "f_s"):
        rows.append(
            [role]
            + [
                mean_sd(values_of(model_level, "accuracy", MODEL_LEVEL, role=role, version=v))
                for v in ("images", "no_object", "gray")
            ]
        )
    lines += markdown_table(["model", "X_{o,s}", "X_{∅,s} (object removed)", "X_{o,g} (scene removed)"], rows) + [""]
    drops = model_level[model_level.metric == "cf_drop"]
    if not drops.empty:
        ks = sorted(drops["k"].unique())
        lines += [
            "Accuracy f_k loses on scene-0 images when the common feature is removed: "
            + ", ".join(f"k={k:g}: {mean_sd(drops[drops.k == k]['value'])}" for k in ks),
            "",
        ]
    scores = bam[bam.explainer != MODEL_LEVEL]
    explainers = explainer_order(scores["explainer"])
    lines += [
        "### Scores",
        "",
        "MCS, IDR: higher is better; their gains over the baselines are asserted (IDR only where listed). "
        "IIR (t = 10%, δ found by gradient steps from the object's pixels) is reported, not asserted: an "
        "explainer that ignores its input scores 1.0.  `ρ(MCS_k, drop)`: Pearson correlation of MCS_k "
        "with the accuracy lost without the CF.",
        "",
    ]
    rows = []
    for e in explainers:
        rows.append(
            [e]
            + [
                mean_sd(values_of(scores, m, e))
                for m in ("mcs", "mcs_baseline", "idr", "idr_baseline", "iir", "mcs_k_corr")
            ]
        )
    lines += markdown_table(
        ["explainer", "MCS", "MCS baseline", "IDR", "IDR baseline", "IIR", "ρ(MCS_k, drop)"], rows
    ) + [""]
    series = scores[scores.metric == "mcs_k"]
    if not series.empty:
        ks = sorted(series["k"].unique())
        rows = [
            [e] + [mean_sd(series[(series.explainer == e) & (series.k == k)]["value"]) for k in ks] for e in explainers
        ]
        lines += ["### MCS_k = G_CF(f_k) − G_CF(f_1.0)", ""]
        lines += markdown_table(["explainer"] + [f"k={k:g}" for k in ks], rows) + [""]
    lines += ["Scores against baselines: `bam_scores.png`.", ""]
    return lines


def plot_bam(records: list[Record], path: Path) -> bool:
    """Bars of MCS, IDR and IIR per explainer with the random-region baselines."""
    df = records_frame([r for r in records if r.suite == "bam" and r.explainer != MODEL_LEVEL])
    if df.empty:
        return False
    plt = pyplot()
    explainers = explainer_order(df["explainer"])
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    xs = np.arange(len(explainers))
    for ax, (metric, title) in zip(axes, (("mcs", "MCS (f_o vs f_s)"), ("idr", "IDR (f_s)"), ("iir", "IIR (f_s)"))):
        mean = [df[(df.metric == metric) & (df.explainer == e)]["value"].mean() for e in explainers]
        ax.bar(xs - 0.2, mean, 0.4, label=metric.upper())
        if metric != "iir":
            base = [df[(df.metric == f"{metric}_baseline") & (df.explainer == e)]["value"].mean() for e in explainers]
            ax.bar(xs + 0.2, base, 0.4, color="0.7", label="random regions")
            ax.legend(fontsize=7)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xticks(xs)
        ax.set_xticklabels(explainers, fontsize=8)
        ax.set_title(title, fontsize=9)
    fig.suptitle("BAM: relative feature importance", fontsize=10)
    return save(fig, path)


#: the suite's figures: file name → drawing function
FIGURES: dict[str, Draw] = {"bam_scores.png": plot_bam}
