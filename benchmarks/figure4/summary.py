"""The summary of the Figure 4 chunks: ``figure4.md`` and ``figure4.png`` (run.py --summary)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

from pytest_chaosmining.suites.symbolic.figure4 import PAPER_POINTS
from pytest_chaosmining.testbeds.formulas.cases import default_condition
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC

METHODS = ("SA", "IG", "DL", "FA")
#: how far a reproduced point may lie from the paper's
AGREEMENT = 0.05


def _points(chunks: list[dict]) -> dict[str, dict[object, dict[str, list[float]]]]:
    """factor → value → method (and ``model``) → per-seed means over formulas."""
    default = default_condition(SYMBOLIC["paper"])
    per_seed: dict[tuple[str, object, str, int], list[float]] = defaultdict(list)
    for chunk in chunks:
        factor, seed = chunk["factor"], chunk["seed"]
        for r in chunk["records"]:
            if any(r["case"][k] != v for k, v in default.items() if k != factor):
                continue
            who = "model" if r["metric"] == "uscore" else r["explainer"]
            if (r["metric"] == "uscore") == (r["explainer"] == "-"):
                per_seed[(factor, r["case"][factor], who, seed)].append(r["value"])
    out: dict[str, dict[object, dict[str, list[float]]]] = defaultdict(lambda: defaultdict(dict))
    for (factor, value, who, _), values in per_seed.items():
        out[factor][value].setdefault(who, []).append(statistics.fmean(values))
    return out


def write_summary(chunks_dir: Path, out_dir: Path) -> None:
    chunks = [json.loads(p.read_text()) for p in sorted(chunks_dir.glob("*.json"))]
    points = _points(chunks)
    lines = [
        "# Figure 4 at the paper tier (symbolic suite, SA / IG / DL / FA)",
        "",
        "`python benchmarks/figure4/run.py` (chunks: one factor at one seed, resumable), then "
        "`--summary`.  Each cell: the mean FPrec over the 15 formulas (mean over the seeds run); "
        f"in brackets the paper's reference point (REFERENCE.md §7) and whether it lies within {AGREEMENT}. "
        "`Pred`: the model's UScore.",
        "",
        "| chunk | seconds | code | exit | pytest |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {c['factor']} seed {c['seed']} | {c['seconds']} | {c['code']} | {c['exit']} | {' '.join(c['summary'])} |"
        for c in chunks
    ]
    lines.append("")
    for factor, values in points.items():
        lines += [f"## {factor}", "", "| value | seeds | Pred | " + " | ".join(METHODS) + " |", "|---" * 7 + "|"]
        for value in sorted(values, key=lambda v: (isinstance(v, str), v)):
            cells = values[value]
            pred = statistics.fmean(cells.get("model", [float("nan")]))
            row = [str(value), str(len(cells.get("SA", []))), f"{pred:.3f}"]
            for method in METHODS:
                got = cells.get(method)
                text = f"{statistics.fmean(got):.3f}" if got else "—"
                paper = PAPER_POINTS.get((factor, value), {}).get(method)
                if paper is not None and got:
                    within = abs(statistics.fmean(got) - paper) <= AGREEMENT
                    text += f" ({paper:.3f}, {'within' if within else 'outside'})"
                row.append(text)
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    (out_dir / "figure4.md").write_text("\n".join(lines))
    _draw(points, out_dir / "figure4.png")


def _draw(points: dict[str, dict[object, dict[str, list[float]]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    factors = list(points)
    fig, axes = plt.subplots(1, len(factors), figsize=(4 * len(factors), 3.6), squeeze=False)
    for ax, factor in zip(axes[0], factors, strict=True):
        values = sorted(points[factor], key=lambda v: (isinstance(v, str), v))
        xs = range(len(values))
        for i, method in enumerate(METHODS):
            colour = plt.get_cmap("tab10")(i)
            ys = [statistics.fmean(points[factor][v].get(method, [float("nan")])) for v in values]
            ax.plot(xs, ys, marker="o", ms=3, color=colour, label=method)
            ref = [(x, PAPER_POINTS.get((factor, v), {}).get(method)) for x, v in zip(xs, values, strict=True)]
            ref = [(x, y) for x, y in ref if y is not None]
            if ref:
                ax.scatter(*zip(*ref, strict=True), marker="*", s=70, facecolors="none", edgecolors=colour)
        model = [statistics.fmean(points[factor][v].get("model", [float("nan")])) for v in values]
        ax.plot(xs, model, color="black", ls="--", label="model (UScore)")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f"{v:g}" if isinstance(v, float) else str(v) for v in values], fontsize=7)
        ax.set_xlabel(factor)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("FPrec (mean over formulas)")
    axes[0][-1].scatter([], [], marker="*", facecolors="none", edgecolors="black", label="paper")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
