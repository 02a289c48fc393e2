"""Report section and figure of the RFEwNA suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import markdown_table, mean_sd, records_frame


def _rfe_method(row: Any) -> str:
    return f"RFEwNA-{row['explainer']}" if row["model"] == "RFEwNA" else row["model"]


def sections(df: Any) -> list[str]:
    """The rfe suite's sections of report.md."""
    rfe = df[df["suite"] == "rfe"]
    if rfe.empty:
        return []
    rfe = rfe.assign(method=rfe.apply(_rfe_method, axis=1))
    lines = [
        "## RFEwNA",
        "",
        "Recursive feature elimination at a 50% step (ChaosMining §4): FPrec of the selected set against the "
        "informative features (chance = k / features), the final model's test scores (uni-module: the selecting "
        "model predicts; bi-: a network trained on a statistical method's selection predicts) and the selection "
        "time, mean ± std over seeds.  Curves of validation score against remaining features: `rfe_curves.png`.",
        "",
    ]
    for dataset, group in rfe.groupby("dataset", sort=True):
        first = group.iloc[0]
        metrics = [
            m
            for m in (
                "fprec",
                "r2",
                "mae",
                "uscore",
                "accuracy",
                "bi_r2",
                "bi_mae",
                "bi_uscore",
                "bi_accuracy",
                "fit_seconds",
            )
            if (group.metric == m).any()
        ]
        rows = []
        for method, mg in group.groupby("method", sort=False):
            rows.append(
                [method] + [mean_sd(mg[mg.metric == m]["value"], 2 if m == "fit_seconds" else 3) for m in metrics]
            )
        chance = f"{int(first['k'])} / {int(first['total_features'])} = {first['k'] / first['total_features']:.3f}"
        lines += [f"### {dataset} ({first['task']}, k = {int(first['k'])}, chance FPrec {chance})", ""]
        lines += markdown_table(["method"] + [m.replace("fit_seconds", "time (s)") for m in metrics], rows) + [""]
    return lines


def _plot_rfe(records: list[Record], path: Path) -> bool:
    """ChaosMining Figure 6: validation score against the number of remaining
    features, one panel per dataset, one line per method (mean over seeds)."""
    plt = pyplot()

    df = records_frame(records)
    if "n_remaining" not in df.columns:
        return False
    curves = df[(df.suite == "rfe") & (df.metric == "val_score")]
    if curves.empty:
        return False
    curves = curves.assign(method=curves.apply(_rfe_method, axis=1))
    datasets = sorted(curves["dataset"].unique())
    methods = list(dict.fromkeys(curves["method"]))
    colours = {m: plt.get_cmap("tab20")(i % 20) for i, m in enumerate(methods)}
    cols = min(3, len(datasets))
    rows = -(-len(datasets) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.4 * cols, 3.4 * rows + 1.0), squeeze=False)
    for ax, dataset in zip(axes.ravel(), datasets):
        sub = curves[curves.dataset == dataset]
        for method, g in sub.groupby("method", sort=False):
            mean = g.groupby("n_remaining")["value"].mean()
            ax.plot(
                mean.index,
                mean.values,
                marker="o",
                ms=3,
                lw=1.4 if method.startswith("RFEwNA") else 1.0,
                ls="-" if method.startswith("RFEwNA") else "--",
                color=colours[method],
                label=method,
            )
        ax.set_xscale("log")
        ax.set_xlabel("features remaining")
        ax.set_title(f"{dataset} ({sub.iloc[0]['task']})", fontsize=9)
        ax.set_ylabel("validation R² / accuracy")
        lo = max(-0.5, float(sub["value"].min()))
        ax.set_ylim(lo - 0.05, 1.02)
    for ax in axes.ravel()[len(datasets) :]:
        ax.axis("off")
    handles = [
        plt.Line2D([], [], color=colours[m], marker="o", ms=3, ls="-" if m.startswith("RFEwNA") else "--", label=m)
        for m in methods
    ]
    ncol = min(5, len(methods))
    fig.legend(handles=handles, loc="lower center", ncol=ncol, fontsize=8, frameon=False)
    legend_rows = -(-len(methods) // ncol)
    return save(fig, path, rect=(0, (0.25 * legend_rows + 0.2) / (3.4 * rows + 1.0), 1, 1))


#: the suite's figures: file name → drawing function
FIGURES: dict[str, Draw] = {"rfe_curves.png": _plot_rfe}
