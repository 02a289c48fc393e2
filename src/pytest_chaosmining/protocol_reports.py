"""Report sections and figures of the IteROAR and BAM suites (tables for
report.md, one PNG each), built from the run's records only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .report import MODEL_LEVEL, _explainer_order, _frame, _pm, _table
from .results import Record

ITEROAR_REFERENCE = "random-pixels"
LEAK_MARGIN = 0.10  # masks "leak" where they predict the class this much better than shuffled labels


def _values(group: Any, metric: str, explainer: str, **where: Any) -> Any:
    sel = group[(group.metric == metric) & (group.explainer == explainer)]
    for key, value in where.items():
        sel = sel[sel[key] == value]
    return sel["value"]


def iteroar_sections(df: Any) -> list[str]:
    """Accuracy per iteration, MMO, MAMO, CMA, mask-on-box shares and the leakage check."""
    it = df[df["suite"] == "iteroar"]
    if it.empty:
        return []
    lines = [
        "## IteROAR",
        "",
        "Each chain removes the top 1 − τ of the explainer's map (|attribution| averaged over channels) from every "
        "train and test image, retrains, and repeats; `random-pixels` removes uniformly random pixels.  Accuracy "
        "is on the (masked) test images, mean ± std over seeds.  `drop`: acc_0 − mean(acc_1 … acc_I); `gain`: drop "
        "minus the random-pixels drop (asserted).  MMO / MAMO: share of each new mask on the previous mask / on "
        "all earlier masks (0 = new pixels every time).  CMA: cumulative masked share of the canvas (ρ if masks "
        "never overlap).  `on box`: share of the removed mask on the true foreground box (at most box area / mask "
        "area); `box removed`: share of the box removed.  Leakage: test accuracy of a classifier trained on the "
        "first masks alone, with true and with shuffled labels (chance 0.10); **leaks** where the true labels win by "
        f"more than {LEAK_MARGIN}: the accuracy drop of that chain may then be partly the mask's own signal.  With zero fill and a zero baseline, "
        "DL and IG attribute exactly 0 to removed pixels, so their MAMO of 0 comes with the fill.",
        "",
    ]
    for (condition, fill), group in it.groupby(["condition", "fill"], sort=True):
        rho = group["rho"].dropna().iloc[0] if "rho" in group and group["rho"].notna().any() else float("nan")
        lines += [f"### {condition}, {fill} fill, ρ = {rho:g}", ""]
        iterations = sorted(int(i) for i in group["iteration"].dropna().unique())
        names = [ITEROAR_REFERENCE] + [e for e in _explainer_order(group["explainer"]) if e != ITEROAR_REFERENCE]
        rows = []
        for name in names:
            if _values(group, "accuracy", name).empty:
                continue
            curve = " → ".join(f"{_values(group, 'accuracy', name, iteration=i).mean():.3f}" for i in iterations
                               if not _values(group, "accuracy", name, iteration=i).empty)
            on_box = _values(group, "mask_on_box", name)
            rows.append([name, curve, _pm(_values(group, "accuracy_drop", name)),
                         _pm(_values(group, "drop_gain", name)) if name != ITEROAR_REFERENCE else "",
                         _pm(_values(group, "mmo", name)), _pm(_values(group, "mamo", name)),
                         _pm(_values(group, "cma", name)),
                         _pm(_values(group, "mask_on_box", name, iteration=0)) + (
                             f" (mean {on_box.mean():.3f})" if len(iterations) > 2 else ""),
                         _pm(_values(group, "box_removed", name, iteration=0)),
                         _leakage(_values(group, "leak_accuracy", name).mean(),
                                  _values(group, "leak_random_accuracy", name).mean())])
        lines += _table(["chain", "accuracy per iteration", "drop", "gain", "MMO", "MAMO", "CMA", "on box (first mask)",
                         "box removed (first)", "leakage true / shuffled"], rows) + [""]
    lines += ["Accuracy per iteration: `iteroar_accuracy.png`.", ""]
    return lines


def _leakage(true: float, shuffled: float) -> str:
    """The leakage cell; flagged where the masks alone predict the class clearly better than shuffled labels."""
    cell = f"{true:.3f} / {shuffled:.3f}"
    return cell + (" **leaks**" if true - shuffled > LEAK_MARGIN else "")


def plot_iteroar(records: list[Record], path: Path) -> bool:
    """Test accuracy against iteration, one panel per condition and fill, one line per chain."""
    df = _frame([r for r in records if r.suite == "iteroar" and r.metric == "accuracy" and r.explainer != MODEL_LEVEL])
    if df.empty or "iteration" not in df:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = list(df.groupby(["condition", "fill"], sort=True))
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.0, 4.5 * len(panels)), 3.8), squeeze=False)
    for ax, ((condition, fill), group) in zip(axes[0], panels):
        names = [ITEROAR_REFERENCE] + [e for e in _explainer_order(group["explainer"]) if e != ITEROAR_REFERENCE]
        for name in names:
            g = group[group.explainer == name].groupby("iteration")["value"].mean()
            if g.empty:
                continue
            style = {"color": "0.2", "ls": "--"} if name == ITEROAR_REFERENCE else {}
            ax.plot(g.index.astype(int), g.values, marker="o", label=name, **style)
        ax.axhline(0.1, color="0.6", lw=0.8, ls=":")
        ax.set_title(f"{condition}, {fill} fill", fontsize=9)
        ax.set_xlabel("iteration (masks removed)")
        ax.set_ylabel("test accuracy")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7)
    fig.suptitle("IteROAR: accuracy as the explainer's salient pixels are removed", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def bam_sections(df: Any) -> list[str]:
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
        rows.append([role] + [_pm(_values(model_level, "accuracy", MODEL_LEVEL, role=role, version=v))
                              for v in ("images", "no_object", "gray")])
    lines += _table(["model", "X_{o,s}", "X_{∅,s} (object removed)", "X_{o,g} (scene removed)"], rows) + [""]
    drops = model_level[model_level.metric == "cf_drop"]
    if not drops.empty:
        ks = sorted(drops["k"].unique())
        lines += ["Accuracy f_k loses on scene-0 images when the common feature is removed: "
                  + ", ".join(f"k={k:g}: {_pm(drops[drops.k == k]['value'])}" for k in ks), ""]
    scores = bam[bam.explainer != MODEL_LEVEL]
    explainers = _explainer_order(scores["explainer"])
    lines += ["### Scores", "",
              "MCS, IDR: higher is better; their gains over the baselines are asserted (IDR only where listed). "
              "IIR (t = 10%, δ found by gradient steps from the object's pixels) is reported, not asserted: an "
              "explainer that ignores its input scores 1.0.  `ρ(MCS_k, drop)`: Pearson correlation of MCS_k "
              "with the accuracy lost without the CF.", ""]
    rows = []
    for e in explainers:
        rows.append([e] + [_pm(_values(scores, m, e)) for m in
                           ("mcs", "mcs_baseline", "idr", "idr_baseline", "iir", "mcs_k_corr")])
    lines += _table(["explainer", "MCS", "MCS baseline", "IDR", "IDR baseline", "IIR", "ρ(MCS_k, drop)"], rows) + [""]
    series = scores[scores.metric == "mcs_k"]
    if not series.empty:
        ks = sorted(series["k"].unique())
        rows = [[e] + [_pm(series[(series.explainer == e) & (series.k == k)]["value"]) for k in ks]
                for e in explainers]
        lines += ["### MCS_k = G_CF(f_k) − G_CF(f_1.0)", ""]
        lines += _table(["explainer"] + [f"k={k:g}" for k in ks], rows) + [""]
    lines += ["Scores against baselines: `bam_scores.png`.", ""]
    return lines


def plot_bam(records: list[Record], path: Path) -> bool:
    """Bars of MCS, IDR and IIR per explainer with the random-region baselines."""
    df = _frame([r for r in records if r.suite == "bam" and r.explainer != MODEL_LEVEL])
    if df.empty:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    explainers = _explainer_order(df["explainer"])
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
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
