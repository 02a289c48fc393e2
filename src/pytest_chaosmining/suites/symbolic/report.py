"""Report section and figure of the symbolic suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, mean_sd, records_frame
from pytest_chaosmining.suites.symbolic.figure4 import default_condition, draw_figure4
from pytest_chaosmining.testbeds.formulas.tiers import CONDITION_FIELDS


def _variant(row: Any) -> str:
    return f"nf={int(row['noise_features'])}, ln={row['label_noise']:g}, n={int(row['n_samples'])}, {row['model']}"


def sections(df: Any) -> list[str]:
    """The symbolic suite's sections of report.md."""
    sym = df[df["suite"] == "symbolic"].copy()
    if sym.empty:
        return []
    sym["variant"] = sym.apply(_variant, axis=1)
    explainers = explainer_order(sym["explainer"])
    lines = ["## Symbolic functions", ""]
    lines += [
        "Per seed, each value is the mean over formulas; cells give mean ± std over seeds. "
        "`Pred` is the UScore of the model's test predictions against the noise-free target.",
        "",
    ]
    header = ["condition", "Pred (UScore)"] + [f"{e} (FPrec)" for e in explainers]
    rows = []
    for variant, group in sym.groupby("variant", sort=False):
        pred = group[(group.metric == "uscore") & (group.explainer == MODEL_LEVEL)]
        row = [variant, mean_sd(pred.groupby("seed")["value"].mean())]
        for e in explainers:
            sel = group[(group.metric == "fprec") & (group.explainer == e)]
            row.append(mean_sd(sel.groupby("seed")["value"].mean()))
        rows.append(row)
    lines += markdown_table(header, rows) + [""]

    lines += ["### Per formula (mean ± std over seeds)", ""]
    for variant, group in sym.groupby("variant", sort=False):
        lines += [f"**{variant}**", ""]
        rows = []
        for formula, fg in group.groupby("formula"):
            pred = fg[(fg.metric == "uscore") & (fg.explainer == MODEL_LEVEL)]["value"]
            row = [f"f{int(formula):02d}", mean_sd(pred)]
            for e in explainers:
                sel = fg[(fg.metric == "fprec") & (fg.explainer == e)]
                row.append(mean_sd(sel["value"]) if len(sel) else "not measured")
            rows.append(row)
        lines += markdown_table(["formula", "Pred (UScore)"] + [f"{e} (FPrec)" for e in explainers], rows) + [""]
    lines += ["FPrec per formula and explainer in the default condition: `fprec.png`.", ""]
    if sym["variant"].nunique() > 1:
        lines += [
            "FPrec and the model's UScore against each swept factor (ChaosMining Figure 4), with the paper's "
            "reference points (made at its default setting): `figure4.png`. Conditions other than the tier's "
            "default are report-only: their bars were not calibrated.",
            "",
        ]

    gt = sym[sym.metric == "attr_uscore"]
    if not gt.empty:
        lines += [
            "### Attributions against exact ground truth (UScore of L1-normalised vectors)",
            "",
            "SA is compared with ∂f/∂x, FA with the ablation delta, IG and DL with the 10-step path sum.",
            "",
        ]
        gexpl = explainer_order(gt["explainer"])
        rows = []
        for variant, group in gt.groupby("variant", sort=False):
            rows.append(
                [variant] + [mean_sd(group[group.explainer == e].groupby("seed")["value"].mean()) for e in gexpl]
            )
        lines += markdown_table(["condition"] + gexpl, rows) + [""]
    return lines


def _plot(records: list[Record], path: Path) -> bool:
    plt = pyplot()
    df = records_frame(records)
    sym = df[(df.suite == "symbolic") & (df.metric == "fprec")]
    if sym.empty:
        return False
    default = default_condition(sym)
    sym = sym[[tuple(row.get(name) for name in CONDITION_FIELDS) == default for _, row in sym.iterrows()]]
    first = _variant(sym.iloc[0])
    explainers = explainer_order(sym["explainer"])
    formulas = sorted(sym["formula"].unique())
    fig, ax = plt.subplots(figsize=(max(8, len(formulas) * 0.7), 4))
    width = 0.8 / max(1, len(explainers))
    colours = {e: plt.get_cmap("tab20")(i % 20) for i, e in enumerate(explainers)}
    for i, e in enumerate(explainers):
        rows = sym[sym.explainer == e]
        g = rows.groupby("formula")["value"]
        mean, std = g.mean(), g.std().fillna(0.0)
        xs = np.arange(len(formulas)) + i * width
        ax.bar(
            xs,
            [mean.get(f, np.nan) for f in formulas],
            width,
            yerr=[std.get(f, 0) for f in formulas],
            label=e,
            color=colours[e],
        )
        bars = rows.dropna(subset=["threshold"]).groupby("formula")["threshold"].mean()
        for x, f in zip(xs, formulas):
            if f in bars.index and e != "random":
                ax.hlines(bars[f], x - width / 2, x + width / 2, color="black", lw=1.2)
    ax.hlines([], 0, 0, color="black", lw=1.2, label="bar (each explainer's)")
    control = sym[sym.explainer == "random"].groupby("formula")["value"].mean()
    if not control.empty:
        ax.plot(
            np.arange(len(formulas)) + 0.4 - width / 2,
            [control.get(f, np.nan) for f in formulas],
            ls=":",
            color="0.3",
            marker="_",
            label="chance (random control)",
        )
    ax.set_xticks(np.arange(len(formulas)) + 0.4 - width / 2)
    ax.set_xticklabels([f"f{int(f)}" for f in formulas])
    ax.set_ylim(0, 1.3)
    ax.set_ylabel("FPrec")
    ax.set_title(f"Symbolic suite, {first}")
    ax.legend(ncol=min(7, len(explainers) + 2), fontsize=7, loc="upper center")
    return save(fig, path)


#: the suite's figures: file name → drawing function
FIGURES: dict[str, Draw] = {"fprec.png": _plot, "figure4.png": draw_figure4}
