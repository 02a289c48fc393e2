"""The report's own figures (the suites draw theirs): the leaderboard at a glance
(``leaderboard.png``) and the attribution cost with its spread (``cost.png``)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import headless, pyplot, save
from pytest_chaosmining.reports.leaderboard import (
    CONTROL_PASSED,
    EXPECTED_FAIL,
    FAIL,
    PASS,
    Leaderboard,
)
from pytest_chaosmining.reports.tables import explainer_order

LEADERBOARD_PNG, COST_PNG = "leaderboard.png", "cost.png"
#: cell colours by verdict (the HTML report's)
_COLOURS = {PASS: "#bfe6c9", FAIL: "#f7b9b5", CONTROL_PASSED: "#f7b9b5", EXPECTED_FAIL: "#dddddd"}


def draw_leaderboard(board: Leaderboard, path: Path) -> bool:
    """A cell per explainer and suite: the headline score, coloured by the verdict."""
    if not board.rows or not board.columns:
        return False
    matplotlib = headless()
    plt, Patch = matplotlib.plt, matplotlib.Patch

    n_rows, n_cols = len(board.rows), len(board.columns)
    label = max((len(board.explainer_label(e)) for e, _ in board.rows), default=0)  # room for the longest name
    fig, ax = plt.subplots(figsize=(1.2 + 0.06 * max(0, label - 12) + 1.15 * n_cols, 0.9 + 0.32 * n_rows))
    for i, (_, cells) in enumerate(board.rows):
        for j, cell in enumerate(cells):
            ax.add_patch(plt.Rectangle((j, i), 1, 1, color=_COLOURS.get(cell.verdict, "#ffffff"), ec="#999999"))
            text = "—" if cell.score is None else f"{cell.score:.2f}"
            ax.text(j + 0.5, i + 0.5, text, ha="center", va="center", fontsize=8)
    ax.set_xlim(0, n_cols)
    ax.set_ylim(n_rows, 0)
    ax.set_xticks([j + 0.5 for j in range(n_cols)])
    ax.set_xticklabels([f"{s}\n{m}" for s, m in board.columns], fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(n_rows)])
    ax.set_yticklabels([board.explainer_label(e) for e, _ in board.rows], fontsize=8)
    ax.tick_params(length=0)
    ax.xaxis.tick_top()
    legend = [Patch(color=_COLOURS[v], label=v) for v in (PASS, FAIL, EXPECTED_FAIL)]
    legend.append(Patch(facecolor="#ffffff", edgecolor="#999999", label="not judged / not applicable / not run"))
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=7, frameon=False)
    return save(fig, path, dpi=110, rect=(0, 0.06, 1, 1))


def draw_cost(records: Sequence[Record], path: Path) -> bool:
    """Mean attribution time per explainer and suite (log scale), the bars' whiskers
    one standard deviation over the run's calls."""
    times: dict[tuple[str, str], list[float]] = {}
    for r in records:
        if r.metric == "time_ms" and r.explainer != MODEL_LEVEL and math.isfinite(r.value) and r.value > 0:
            times.setdefault((r.suite, r.explainer), []).append(r.value)
    if not times:
        return False
    plt = pyplot()
    suites = list(dict.fromkeys(s for s, _ in times))
    explainers = explainer_order(e for _, e in times)
    width = 0.8 / max(len(explainers), 1)
    fig, ax = plt.subplots(figsize=(1.5 + 1.6 * len(suites), 3.4))
    colours = plt.get_cmap("tab20")
    for k, explainer in enumerate(explainers):
        xs, means, sds = [], [], []
        for j, suite in enumerate(suites):
            values = times.get((suite, explainer))
            if values:
                xs.append(j - 0.4 + width * (k + 0.5))
                means.append(statistics.fmean(values))
                sds.append(statistics.stdev(values) if len(values) > 1 else 0.0)
        ax.bar(xs, means, width, yerr=sds, capsize=1.5, label=explainer, color=colours(k % 20), ecolor="#333333")
    ax.set_yscale("log")
    ax.set_xticks(range(len(suites)))
    ax.set_xticklabels(suites)
    ax.set_ylabel("time per attribution call (ms)")
    ax.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return save(fig, path, dpi=100)


def run_figures(records: list[Record], board: Leaderboard, out_dir: Path, every: bool) -> list[str]:
    """Draw the report's own figures into ``out_dir`` under ``every`` (summaries of the
    run: none a failure needs); the paths drawn."""
    drawn: list[str] = []
    if not every:
        return drawn
    if draw_leaderboard(board, out_dir / LEADERBOARD_PNG):
        drawn.append(str(out_dir / LEADERBOARD_PNG))
    if draw_cost(records, out_dir / COST_PNG):
        drawn.append(str(out_dir / COST_PNG))
    return drawn
