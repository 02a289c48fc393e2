"""ChaosMining's Figure 4: FPrec and the model's quality against each swept factor.

A sweep run (``--chaosmining-sweep``) adds one-factor variations of the tier's default
condition.  :func:`default_condition` finds that condition among the records (a tier's
default; else the one judged with bars; else the one every other condition differs
from in one field at most), :func:`sweeps` the factors varied from it, and :func:`draw_figure4` one panel
per factor: the mean FPrec over formulas and seeds per explainer, the model's UScore,
and the paper's reference points (REFERENCE.md §7, measured at the paper's default
setting: comparable at the paper tier only).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.reports.figures import pyplot, save
from pytest_chaosmining.reports.tables import explainer_order, records_frame
from pytest_chaosmining.testbeds.formulas.cases import default_condition as tier_default
from pytest_chaosmining.testbeds.formulas.tiers import CONDITION_FIELDS, SYMBOLIC

#: the paper's reference points (factor, value) → explainer → mean FPrec over the 15
#: formulas, at its default setting otherwise (REFERENCE.md §7)
PAPER_POINTS: dict[tuple[str, object], dict[str, float]] = {
    ("noise_features", 0): {"SA": 1.0, "IG": 1.0, "DL": 1.0, "FA": 1.0},
    ("noise_features", 100): {"SA": 0.822, "IG": 0.719, "DL": 0.690, "FA": 0.665},
    ("noise_features", 200): {"SA": 0.627, "FA": 0.416},
    ("label_noise", 0.01): {"SA": 0.822, "IG": 0.719, "DL": 0.690, "FA": 0.665},
    ("label_noise", 0.16): {"SA": 0.552, "FA": 0.304},
}
#: the control's line: grey and dotted
CONTROL = "random"

Condition = tuple[Any, ...]


def _condition(row: Any) -> Condition:
    return tuple(row.get(name) for name in CONDITION_FIELDS)


def default_condition(frame: Any) -> Condition | None:
    """The run's default condition among the symbolic FPrec rows of ``frame``: a tier's
    default condition where one is among them, else the one whose FPrec was judged
    against bars, else the one no other condition differs from in more than one field
    (None without such rows)."""
    if frame.empty:
        return None
    conditions = list(dict.fromkeys(_condition(row) for _, row in frame.iterrows()))
    defaults = {tuple(tier_default(tier).values()) for tier in SYMBOLIC.values()}
    if found := [c for c in conditions if c in defaults]:
        return found[0]
    judged = frame[frame["threshold"].notna()] if "threshold" in frame else frame.iloc[0:0]
    barred = list(dict.fromkeys(_condition(row) for _, row in judged.iterrows()))
    if len(barred) == 1:
        return barred[0]

    def spread(c: Condition) -> int:
        return max(sum(a != b for a, b in zip(c, other, strict=True)) for other in conditions)

    return min(conditions, key=spread)


def in_default_condition(records: Sequence[Record]) -> list[Record]:
    """Those of ``records`` (the symbolic suite's) made in the run's default condition."""
    frame = records_frame([r for r in records if r.metric == "fprec"])
    default = default_condition(frame)
    if default is None:
        return list(records)
    return [r for r in records if tuple(r.case.get(name) for name in CONDITION_FIELDS) == default]


def sweeps(frame: Any, default: Condition) -> dict[str, list[Any]]:
    """Each factor varied alone from ``default`` in ``frame``'s rows → its values, in order."""
    found: dict[str, set[Any]] = {}
    for condition in {_condition(row) for _, row in frame.iterrows()}:
        differing = [i for i, (a, b) in enumerate(zip(condition, default, strict=True)) if a != b]
        if len(differing) == 1:
            found.setdefault(CONDITION_FIELDS[differing[0]], set()).add(condition[differing[0]])
    out = {}
    for factor, values in found.items():
        values.add(default[CONDITION_FIELDS.index(factor)])
        out[factor] = sorted(values, key=lambda v: (isinstance(v, str), v))
    return out


def _on_sweep(frame: Any, default: Condition, factor: str) -> Any:
    """The rows of ``frame`` in ``default`` or in ``factor``'s sweep from it."""
    index = CONDITION_FIELDS.index(factor)
    keep = [
        all(a == b for i, (a, b) in enumerate(zip(_condition(row), default, strict=True)) if i != index)
        for _, row in frame.iterrows()
    ]
    return frame[keep]


def draw_figure4(records: list[Record], path: Path) -> bool:
    """Figure 4 of a sweep run into ``path``; False where the run swept nothing."""
    frame = records_frame(records)
    if frame.empty or "suite" not in frame:
        return False
    symbolic = frame[frame["suite"] == "symbolic"]
    fprec = symbolic[symbolic["metric"] == "fprec"]
    default = default_condition(fprec)
    factors = sweeps(fprec, default) if default is not None else {}
    if not factors:
        return False
    quality = symbolic[(symbolic["metric"] == "uscore") & (symbolic["explainer"] == MODEL_LEVEL)]
    plt = pyplot()
    fig, axes = plt.subplots(1, len(factors), figsize=(4.2 * len(factors), 3.8), squeeze=False)
    explainers = explainer_order(fprec["explainer"])
    colours = {e: plt.get_cmap("tab10")(i % 10) for i, e in enumerate(e for e in explainers if e != CONTROL)}
    assert default is not None
    for ax, (factor, values) in zip(axes[0], factors.items(), strict=True):
        xs = list(range(len(values)))
        rows = _on_sweep(fprec, default, factor)
        for explainer in explainers:
            means = [_mean(rows, factor, v, explainer) for v in values]
            style = {"color": "0.5", "ls": ":"} if explainer == CONTROL else {"color": colours[explainer]}
            ax.plot(xs, means, marker="o", ms=3, label=explainer, **style)
            points = [(x, PAPER_POINTS.get((factor, v), {}).get(explainer)) for x, v in zip(xs, values, strict=True)]
            shown = [(x, y) for x, y in points if y is not None]
            if shown:
                ax.scatter(*zip(*shown, strict=True), marker="*", s=70, facecolors="none", edgecolors=style["color"])
        model = _on_sweep(quality, default, factor)
        ax.plot(xs, [_mean(model, factor, v) for v in values], color="black", ls="--", label="model (UScore)")
        ax.axvline(values.index(default[CONDITION_FIELDS.index(factor)]), color="0.85", lw=4, zorder=0)
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{v:g}" if isinstance(v, float) else str(v) for v in values])
        ax.set_xlabel(factor)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel("FPrec (mean over formulas and seeds)")
    axes[0][-1].scatter([], [], marker="*", facecolors="none", edgecolors="black", label="paper (its default setting)")
    axes[0][-1].legend(fontsize=7, loc="lower left")
    fig.suptitle("Symbolic suite: one-factor sweeps (ChaosMining Figure 4); grey band: the default condition")
    return save(fig, path)


def _mean(rows: Any, factor: str, value: object, explainer: str | None = None) -> float:
    """The mean over seeds of the per-seed mean over formulas at ``factor = value``."""
    picked = rows[rows[factor] == value]
    if explainer is not None:
        picked = picked[picked["explainer"] == explainer]
    if picked.empty:
        return float("nan")
    return float(picked.groupby("seed")["value"].mean().mean())
