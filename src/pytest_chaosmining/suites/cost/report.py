"""Report section and figure of the cost suite: ChaosMining Figure 5 (convergence,
consistency, memory and time of each explainer, the first two normalised to SA)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.explainers import CONTROL_NAME
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, records_frame

#: the explainer both relative scores are normalised to, as in the paper
REFERENCE = "SA"
#: the paper's finding this figure checks (ChaosMining §3.1, Figure 5)
PAPER_FINDING = (
    "all four methods converge alike; SA is markedly more consistent than the other three; "
    "IG costs the most memory and time, SA the least"
)
#: the figure's panels: metric and title (the relative ones get "(rel. SA)", or "(raw)" without SA)
METRICS = (
    ("convergence", "convergence"),
    ("consistency", "consistency"),
    ("peak_mem_mb", "peak memory (MiB)"),
    ("time_ms", "time (ms)"),
)
RELATIVE = ("convergence", "consistency")


def figure5_values(df: Any) -> dict[str, dict[str, float]]:
    """Per explainer, its cost-suite values by metric (means), plus ``convergence_rel``
    and ``consistency_rel``, divided by SA's, where SA ran."""
    cost = df[df["suite"] == "cost"]
    values: dict[str, dict[str, float]] = {}
    for (explainer, metric), group in cost.groupby(["explainer", "metric"]):
        values.setdefault(str(explainer), {})[str(metric)] = float(group["value"].mean())
    reference = values.get(REFERENCE, {})
    for row in values.values():
        for metric in RELATIVE:
            if metric in row and reference.get(metric):
                row[f"{metric}_rel"] = row[metric] / reference[metric]
    return values


def sections(df: Any) -> list[str]:
    """The cost suite's section of report.md: Figure 5's four numbers per explainer."""
    values = figure5_values(df)
    if not any("convergence" in v or "consistency" in v for v in values.values()):
        return []
    explainers = explainer_order(list(values))
    normalised = REFERENCE in values
    lines = [
        "## Convergence, consistency and cost (ChaosMining Figure 5)",
        "",
        "On the cost suite's model (formula 2, one predictive feature). *Convergence*: the area under the "
        "FPrec curve over snapshots of the model taken while it trains (epoch 0 and ten more up to 300), "
        "per epoch. *Consistency*: the mean share of the dataset's top-k features (by mean |attribution|) "
        "among each sample's top-k, ties counted against the explainer. "
        + ("Both are shown relative to SA (SA = 1) and raw. " if normalised else "SA did not run, so both are raw. ")
        + f"The paper found: {PAPER_FINDING}. The figure is `figure5.png`.",
        "",
    ]
    header = ["explainer", "convergence", "consistency", "time (ms)", "peak memory (MiB)"]
    rows = []
    for name in explainers:
        row = values[name]

        def cell(metric: str, row: dict[str, float] = row) -> str:
            if metric not in row:
                return "-"
            rel = row.get(f"{metric}_rel")
            return f"{rel:.3f} ({row[metric]:.3f})" if rel is not None else f"{row[metric]:.3f}"

        rows.append(
            [
                name,
                cell("convergence"),
                cell("consistency"),
                f"{row['time_ms']:.1f}" if "time_ms" in row else "-",
                f"{row['peak_mem_mb']:.1f}" if "peak_mem_mb" in row else "-",
            ]
        )
    return lines + markdown_table(header, rows) + [""]


def _figure5(records: list[Record], path: Path) -> bool:
    values = figure5_values(records_frame(records))
    explainers = [e for e in explainer_order(list(values)) if "convergence" in values[e] or "consistency" in values[e]]
    if not explainers:
        return False
    plt = pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.4))
    colours = ["tab:blue" if e == REFERENCE else "tab:grey" if e == CONTROL_NAME else "tab:orange" for e in explainers]
    normalised = REFERENCE in values
    for ax, (metric, title) in zip(axes, METRICS):
        relative = metric in RELATIVE and normalised
        key = f"{metric}_rel" if relative else metric
        ax.bar(range(len(explainers)), [values[e].get(key, 0.0) for e in explainers], color=colours)
        ax.set_xticks(range(len(explainers)), explainers, rotation=45, ha="right", fontsize=8)
        if metric in RELATIVE:
            title += " (rel. SA)" if relative else " (raw)"
        ax.set_title(title, fontsize=10)
        if relative:
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    fig.suptitle("ChaosMining Figure 5: SA (blue) is the reference; the random control in grey", fontsize=10)
    return save(fig, path, rect=(0, 0, 1, 0.94))


#: the suite's figures
FIGURES: dict[str, Draw] = {"figure5.png": _figure5}
