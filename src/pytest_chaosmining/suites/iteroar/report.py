"""Report section and figure of the IteROAR suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import Draw, pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, markdown_table, mean_sd, records_frame, values_of

ITEROAR_REFERENCE = "random-pixels"
LEAK_MARGIN = 0.10  # masks "leak" where they predict the class this much better than shuffled labels


def sections(df: Any) -> list[str]:
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
        f"more than {LEAK_MARGIN}: the accuracy drop of that chain may then be partly the mask's own signal.  "
        "With zero fill and a zero baseline, "
        "DL and IG attribute exactly 0 to removed pixels, so their MAMO of 0 comes with the fill.",
        "",
    ]
    for (condition, fill), group in it.groupby(["condition", "fill"], sort=True):
        rho = group["rho"].dropna().iloc[0] if "rho" in group and group["rho"].notna().any() else float("nan")
        lines += [f"### {condition}, {fill} fill, ρ = {rho:g}", ""]
        iterations = sorted(int(i) for i in group["iteration"].dropna().unique())
        names = [ITEROAR_REFERENCE] + [e for e in explainer_order(group["explainer"]) if e != ITEROAR_REFERENCE]
        rows = []
        for name in names:
            if values_of(group, "accuracy", name).empty:
                continue
            curve = " → ".join(
                f"{values_of(group, 'accuracy', name, iteration=i).mean():.3f}"
                for i in iterations
                if not values_of(group, "accuracy", name, iteration=i).empty
            )
            on_box = values_of(group, "mask_on_box", name)
            rows.append(
                [
                    name,
                    curve,
                    mean_sd(values_of(group, "accuracy_drop", name)),
                    mean_sd(values_of(group, "drop_gain", name)) if name != ITEROAR_REFERENCE else "",
                    mean_sd(values_of(group, "mmo", name)),
                    mean_sd(values_of(group, "mamo", name)),
                    mean_sd(values_of(group, "cma", name)),
                    mean_sd(values_of(group, "mask_on_box", name, iteration=0))
                    + (f" (mean {on_box.mean():.3f})" if len(iterations) > 2 else ""),
                    mean_sd(values_of(group, "box_removed", name, iteration=0)),
                    _leakage(
                        values_of(group, "leak_accuracy", name).mean(),
                        values_of(group, "leak_random_accuracy", name).mean(),
                    ),
                ]
            )
        lines += markdown_table(
            [
                "chain",
                "accuracy per iteration",
                "drop",
                "gain",
                "MMO",
                "MAMO",
                "CMA",
                "on box (first mask)",
                "box removed (first)",
                "leakage true / shuffled",
            ],
            rows,
        ) + [""]
    lines += ["Accuracy per iteration: `iteroar_accuracy.png`.", ""]
    return lines


def _leakage(true: float, shuffled: float) -> str:
    """The leakage cell; flagged where the masks alone predict the class clearly better than shuffled labels."""
    cell = f"{true:.3f} / {shuffled:.3f}"
    return cell + (" **leaks**" if true - shuffled > LEAK_MARGIN else "")


def plot_iteroar(records: list[Record], path: Path) -> bool:
    """Test accuracy against iteration, one panel per condition and fill, one line per chain."""
    df = records_frame(
        [r for r in records if r.suite == "iteroar" and r.metric == "accuracy" and r.explainer != MODEL_LEVEL]
    )
    if df.empty or "iteration" not in df:
        return False
    plt = pyplot()

    panels = list(df.groupby(["condition", "fill"], sort=True))
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6.0, 4.5 * len(panels)), 3.8), squeeze=False)
    for ax, ((condition, fill), group) in zip(axes[0], panels):
        names = [ITEROAR_REFERENCE] + [e for e in explainer_order(group["explainer"]) if e != ITEROAR_REFERENCE]
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
    return save(fig, path)


#: the suite's figures: file name → drawing function
FIGURES: dict[str, Draw] = {"iteroar_accuracy.png": plot_iteroar}
