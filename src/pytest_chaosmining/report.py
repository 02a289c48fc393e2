"""Report writers: results.json, results.csv, report.md, a PNG plot and the
terminal summary table."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

from .atomic import atomic_write_text
from .results import MODEL_LEVEL, Record

SCORE_METRICS = ("fprec", "iou", "channel_share", "drop_gain", "mcs")  # the judged metric of each suite, for the terminal summary
VARIANT_FIELDS = ("noise_features", "label_noise", "n_samples")


def _frame(records: list[Record]) -> Any:
    import pandas as pd

    rows = [{**{k: v for k, v in r.to_dict().items() if k != "condition"}, **r.condition} for r in records]
    return pd.DataFrame(rows)


def _pm(values: Any, digits: int = 3) -> str:
    values = [float(v) for v in values]
    if not values:
        return ""
    import numpy as np

    mean = float(np.mean(values))
    std = float(np.std(values)) if len(values) > 1 else 0.0
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _variant(row: Any) -> str:
    return f"nf={int(row['noise_features'])}, ln={row['label_noise']:g}, n={int(row['n_samples'])}, {row['model']}"


def _explainer_order(names: Any) -> list[str]:
    fixed = ["SA", "DL", "IG", "FA"]
    names = [n for n in dict.fromkeys(names) if n != MODEL_LEVEL]
    return [n for n in fixed if n in names] + sorted(n for n in names if n not in fixed and n != "random") + (
        ["random"] if "random" in names else []
    )


def _symbolic_sections(df: Any) -> list[str]:
    sym = df[df["suite"] == "symbolic"].copy()
    if sym.empty:
        return []
    sym["variant"] = sym.apply(_variant, axis=1)
    explainers = _explainer_order(sym["explainer"])
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
        row = [variant, _pm(pred.groupby("seed")["value"].mean())]
        for e in explainers:
            sel = group[(group.metric == "fprec") & (group.explainer == e)]
            row.append(_pm(sel.groupby("seed")["value"].mean()))
        rows.append(row)
    lines += _table(header, rows) + [""]

    lines += ["### Per formula (mean ± std over seeds)", ""]
    for variant, group in sym.groupby("variant", sort=False):
        lines += [f"**{variant}**", ""]
        rows = []
        for formula, fg in group.groupby("formula"):
            pred = fg[(fg.metric == "uscore") & (fg.explainer == MODEL_LEVEL)]["value"]
            row = [f"f{int(formula):02d}", _pm(pred)]
            for e in explainers:
                sel = fg[(fg.metric == "fprec") & (fg.explainer == e)]
                row.append(_pm(sel["value"]) if len(sel) else "skipped")
            rows.append(row)
        lines += _table(["formula", "Pred (UScore)"] + [f"{e} (FPrec)" for e in explainers], rows) + [""]

    gt = sym[sym.metric == "attr_uscore"]
    if not gt.empty:
        lines += [
            "### Attributions against exact ground truth (UScore of L1-normalised vectors)",
            "",
            "SA is compared with ∂f/∂x, FA with the ablation delta, IG and DL with the 10-step path sum.",
            "",
        ]
        gexpl = _explainer_order(gt["explainer"])
        rows = []
        for variant, group in gt.groupby("variant", sort=False):
            rows.append([variant] + [_pm(group[group.explainer == e].groupby("seed")["value"].mean()) for e in gexpl])
        lines += _table(["condition"] + gexpl, rows) + [""]
    return lines


def _condition_cells(group: Any, conditions: list[str], metric: str, explainers: list[str]) -> list[str]:
    """Per condition: accuracy (%) and each explainer's ``metric`` (mean ± std; "skipped" when not measured)."""
    cells = []
    for condition in conditions:
        g = group[group["condition"] == condition]
        cells.append(_pm(g[(g.metric == "accuracy") & (g.explainer == MODEL_LEVEL)]["value"] * 100, 2))
        for e in explainers:
            sel = g[(g.metric == metric) & (g.explainer == e)]["value"]
            cells.append(_pm(sel) if len(sel) else "skipped")
    return cells


def _per_condition_table(frame: Any, explainers: list[str]) -> list[str]:
    """One row per (model, condition): each explainer's mean ± std of ``frame``'s values."""
    rows = [[model, cond] + [_pm(group[group.explainer == e]["value"]) for e in explainers]
            for (model, cond), group in frame.groupby(["model", "condition"], sort=True)]
    return _table(["model", "condition"] + explainers, rows) + [""]


def _vision_sections(df: Any) -> list[str]:
    vis = df[df["suite"] == "vision"]
    if vis.empty:
        return []
    explainers = _explainer_order(vis["explainer"])
    lines = [
        "## Vision",
        "",
        "Shaped like ChaosMining Tables 2 and 3: validation accuracy (%) and IoU of the top-k box "
        "(k = foreground area) per explainer, mean ± std over seeds.  Chance: 10% accuracy, IoU ≈ 1/49.",
        "",
    ]
    for background, title in (("RB", "random background"), ("SB", "structural background")):
        conds = [c for c in ("FP", "RP") if (vis["condition"] == background + c).any()]
        if not conds:
            continue
        header = ["model", "params (M)", "canvas"]
        for c in conds:
            header += [f"{background}{c} Pred (ACC%)"] + [f"{background}{c} {e} (IoU)" for e in explainers]
        rows = []
        for (model, canvas), group in vis.groupby(["model", "canvas"], sort=True):
            params = group[group.metric == "params_m"]["value"]
            row = [model, f"{params.iloc[0]:.2f}" if len(params) else "", f"{int(canvas)} px"]
            rows.append(row + _condition_cells(group, [background + c for c in conds], "iou", explainers))
        lines += [f"### {title}", ""] + _table(header, rows) + [""]
    share = vis[vis.metric == "box_share"]
    if not share.empty:
        lines += ["### Share of |attribution| inside the true box (chance ≈ 1/49 = 0.020)", ""]
        lines += _per_condition_table(share, explainers)
    return lines


def _audio_sections(df: Any) -> list[str]:
    aud = df[df["suite"] == "audio"]
    if aud.empty:
        return []
    explainers = _explainer_order(aud["explainer"])
    channels = sorted(int(c) for c in aud["channels"].dropna().unique())
    chance = ", ".join(f"1/{c} = {1 / c:.3f}" for c in channels)
    lines = [
        "## Audio",
        "",
        "Shaped like ChaosMining Table 4: validation accuracy (%) and the speech channel's share of "
        f"Σ|attribution| (the paper's audio \"FPrec\") per explainer, mean ± std over seeds.  Chance share: {chance}.",
        "",
    ]
    for position, title in (("FP", "speech at a fixed channel (FP)"), ("RP", "speech at a random channel (RP)")):
        conds = [b + position for b in ("RB", "SB") if (aud["condition"] == b + position).any()]
        if not conds:
            continue
        header = ["model", "params (M)", "input"]
        for c in conds:
            header += [f"{c} Pred (ACC%)"] + [f"{c} {e} (share)" for e in explainers]
        rows = []
        for (model, arch), group in aud.groupby(["model", "arch"], sort=False):
            params = group[group.metric == "params_m"]["value"]
            first = group.iloc[0]
            shape = f"{int(first['channels'])} ch × {first['duration']:g} s @ {int(first['rate'])} Hz"
            row = [model, f"{params.iloc[0]:.3f}" if len(params) else "", shape]
            rows.append(row + _condition_cells(group, conds, "channel_share", explainers))
        lines += [f"### {title}", ""] + _table(header, rows) + [""]
    hits = aud[aud.metric == "top1_hit"]
    if not hits.empty:
        lines += ["### Top-1 channel hit rate (the speech channel holds strictly the largest mass; "
                  f"chance: {chance})", ""]
        lines += _per_condition_table(hits, explainers)
    return lines


def _rfe_method(row: Any) -> str:
    return f"RFEwNA-{row['explainer']}" if row["model"] == "RFEwNA" else row["model"]


def _rfe_sections(df: Any) -> list[str]:
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
        metrics = [m for m in ("fprec", "r2", "mae", "uscore", "accuracy", "bi_r2", "bi_mae", "bi_uscore",
                               "bi_accuracy", "fit_seconds") if (group.metric == m).any()]
        rows = []
        for method, mg in group.groupby("method", sort=False):
            rows.append([method] + [_pm(mg[mg.metric == m]["value"], 2 if m == "fit_seconds" else 3) for m in metrics])
        chance = f"{int(first['k'])} / {int(first['total_features'])} = {first['k'] / first['total_features']:.3f}"
        lines += [f"### {dataset} ({first['task']}, k = {int(first['k'])}, chance FPrec {chance})", ""]
        lines += _table(["method"] + [m.replace("fit_seconds", "time (s)") for m in metrics], rows) + [""]
    return lines


def _plot_rfe(records: list[Record], path: Path) -> bool:
    """ChaosMining Figure 6: validation score against the number of remaining
    features, one panel per dataset, one line per method (mean over seeds)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = _frame(records)
    if "n_remaining" not in df.columns:
        return False
    curves = df[(df.suite == "rfe") & (df.metric == "val_score")]
    if curves.empty:
        return False
    curves = curves.assign(method=curves.apply(_rfe_method, axis=1))
    datasets = sorted(curves["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.6 * len(datasets), 3.2), squeeze=False)
    for ax, dataset in zip(axes[0], datasets):
        sub = curves[curves.dataset == dataset]
        for method, g in sub.groupby("method", sort=False):
            mean = g.groupby("n_remaining")["value"].mean()
            ax.plot(mean.index, mean.values, marker="o", ms=3, lw=1.2 if method.startswith("RFEwNA") else 0.9,
                    ls="-" if method.startswith("RFEwNA") else "--", label=method)
        ax.set_xscale("log")
        ax.set_xlabel("features remaining")
        ax.set_title(f"{dataset} ({sub.iloc[0]['task']})", fontsize=9)
        ax.set_ylabel("validation R² / accuracy")
        lo = max(-0.5, float(sub["value"].min()))
        ax.set_ylim(lo - 0.05, 1.02)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


SALIENCY_TOLERANCE = 0.05  # |Δ| within this reads "unchanged" in the saliency report


def _verdict(changes: Any) -> str:
    mean = float(changes.mean()) if len(changes) else float("nan")
    if mean < -SALIENCY_TOLERANCE:
        return "**drops**"
    return "improves" if mean > SALIENCY_TOLERANCE else "unchanged"


def _saliency_sections(df: Any) -> list[str]:
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
        rows.append([key, group["model"].iloc[0].split("-sg")[0], metric, _pm(std[std.metric == metric]["value"]),
                     _pm(guided[guided.metric == metric]["value"]), _pm(changes), _verdict(changes),
                     _pm(t_std, 1), _pm(t_guided, 1), ratio])
    lines += _table(["comparison", "model", "quality", "standard", "guided", "Δ", "verdict", "train s standard",
                     "train s guided", "cost"], rows) + [""]
    lines += ["### Explainers' scores", ""]
    rows = []
    attr = sal[sal.explainer != MODEL_LEVEL]
    for key, group in attr.groupby("comparison", sort=True):
        for explainer in _explainer_order(group["explainer"]):
            eg = group[group.explainer == explainer]
            for metric in ("fprec", "iou", "box_share", "channel_share", "top1_hit"):
                changes = eg[eg.metric == f"{metric}_change"]["value"]
                if changes.empty:
                    continue
                std = eg[(eg.metric == metric) & (eg.arm == "standard")]["value"]
                guided = eg[(eg.metric == metric) & (eg.arm == "guided")]["value"]
                rows.append([key, explainer, metric, _pm(std), _pm(guided), _pm(changes), _verdict(changes)])
    lines += _table(["comparison", "explainer", "score", "standard", "guided", "Δ", "verdict"], rows) + [""]
    lines += ["Paired differences per explainer: `saliency_changes.png`.", ""]
    return lines


def _plot_saliency(records: list[Record], path: Path) -> bool:
    """Bars of the mean paired change (± std over seeds) of each comparison's main score, per explainer."""
    df = _frame([r for r in records if r.suite == "saliency" and r.seed >= 0 and r.explainer != MODEL_LEVEL])
    if df.empty:
        return False
    df = df[df.metric.isin(["fprec_change", "iou_change", "channel_share_change"])]
    if df.empty:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    keys = sorted(df["comparison"].unique())
    explainers = _explainer_order(df["explainer"])
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(keys) * max(1, len(explainers)) / 3), 4))
    width = 0.8 / max(1, len(explainers))
    for i, e in enumerate(explainers):
        g = df[df.explainer == e].groupby("comparison")["value"]
        mean, std = g.mean(), g.std().fillna(0.0)
        ax.bar(np.arange(len(keys)) + i * width, [mean.get(k, np.nan) for k in keys], width,
               yerr=[std.get(k, 0.0) for k in keys], label=e)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(np.arange(len(keys)) + 0.4 - width / 2)
    ax.set_xticklabels(keys, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("Δ score (guided − standard)")
    ax.set_title("Saliency guided training: change of FPrec / IoU / channel share")
    ax.legend(ncol=len(explainers), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _cost_sections(df: Any) -> list[str]:
    cost = df[df.metric.isin(["time_ms", "peak_mem_mb"])]
    if cost.empty:
        return []
    lines = [
        "## Attribution cost",
        "",
        "Time and peak memory of one attribution call over the whole test set "
        "(CPU memory: sampled peak RSS growth; CUDA: max_memory_allocated growth).",
        "",
    ]
    rows = []
    for (suite, e), group in cost.groupby(["suite", "explainer"], sort=True):
        t = group[group.metric == "time_ms"]["value"]
        m = group[group.metric == "peak_mem_mb"]["value"]
        rows.append([suite, e, _pm(t, 1), _pm(m, 1), str(len(t))])
    lines += _table(["suite", "explainer", "time (ms)", "peak memory (MiB)", "calls"], rows) + [""]
    return lines


def _outcome_section(outcomes: dict[str, int]) -> list[str]:
    if not outcomes:
        return []
    table: dict[tuple[str, str], Counter[str]] = {}
    for key, n in outcomes.items():
        suite, explainer, outcome = key.split("|")
        table.setdefault((suite, explainer), Counter())[outcome] += n
    kinds = ["passed", "failed", "skipped", "xfailed", "xpassed"]
    rows = [[s, e] + [str(c.get(k, 0)) for k in kinds] for (s, e), c in sorted(table.items())]
    return [
        "## Conformance tests",
        "",
        "`random` is the control: its tests are expected to fail (xfailed); an xpassed control means a threshold is too low.",
        "",
    ] + _table(["suite", "explainer"] + kinds, rows) + [""]


def uncalibrated_note(suites: list[str], tier: str) -> str:
    """The warning that a run judged some suites with bars never checked on held-out seeds."""
    return (f"bars not calibrated on held-out seeds at tier {tier}: {', '.join(suites)} "
            "(their verdicts carry no stated false-fail rate)")


def build_markdown(records: list[Record], meta: dict[str, Any], outcomes: dict[str, int]) -> str:
    """The Markdown report: run metadata, paper-style tables, cost, outcomes."""
    lines = ["# ChaosMining conformance report", ""]
    versions = ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items() if v)
    lines += [
        f"tier **{meta.get('tier')}**, seeds per suite {meta.get('seeds')}, device {meta.get('device')}, "
        f"explainers {', '.join(meta.get('explainers', []))}; {versions}",
        "",
    ]
    if meta.get("uncalibrated_bars"):
        lines += [f"**{uncalibrated_note(meta['uncalibrated_bars'], str(meta.get('tier')))}**", ""]
    lines += _outcome_section(outcomes)
    if records:
        df = _frame(records)
        lines += _symbolic_sections(df)
        lines += _vision_sections(df)
        lines += _audio_sections(df)
        lines += _rfe_sections(df)
        lines += _saliency_sections(df)
        from .protocol_reports import bam_sections, iteroar_sections

        lines += iteroar_sections(df)
        lines += bam_sections(df)
        lines += _cost_sections(df)
    return "\n".join(lines)


def _plot(records: list[Record], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    df = _frame(records)
    sym = df[(df.suite == "symbolic") & (df.metric == "fprec")]
    if sym.empty:
        return False
    sym = sym.assign(variant=sym.apply(_variant, axis=1))
    first = sym["variant"].iloc[0]
    sym = sym[sym.variant == first]
    explainers = _explainer_order(sym["explainer"])
    formulas = sorted(sym["formula"].unique())
    fig, ax = plt.subplots(figsize=(max(8, len(formulas) * 0.7), 4))
    width = 0.8 / max(1, len(explainers))
    for i, e in enumerate(explainers):
        g = sym[sym.explainer == e].groupby("formula")["value"]
        mean, std = g.mean(), g.std().fillna(0.0)
        xs = np.arange(len(formulas)) + i * width
        ax.bar(xs, [mean.get(f, np.nan) for f in formulas], width, yerr=[std.get(f, 0) for f in formulas], label=e)
    ax.set_xticks(np.arange(len(formulas)) + 0.4 - width / 2)
    ax.set_xticklabels([f"f{int(f)}" for f in formulas])
    ax.set_ylim(0, 1.2)
    ax.set_ylabel("FPrec")
    ax.set_title(f"Symbolic suite, {first}")
    ax.legend(ncol=len(explainers), fontsize=8, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_reports(
    out_dir: Path, records: list[Record], meta: dict[str, Any], outcomes: dict[str, int], markdown: str
) -> list[str]:
    """Write results.json, results.csv, report.md and the suites' plots into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    payload = {"meta": meta, "outcomes": outcomes, "records": [r.to_dict() for r in records]}
    atomic_write_text(out_dir / "results.json", json.dumps(payload, indent=1, sort_keys=True))
    written.append(str(out_dir / "results.json"))
    cond_keys = sorted({k for r in records for k in r.condition})
    fields = ["suite", "model", "explainer", *cond_keys, "seed", "metric", "value", "threshold", "passed", "nodeid"]
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in records:
        row = {k: v for k, v in r.to_dict().items() if k != "condition"}
        writer.writerow({**row, **r.condition})
    atomic_write_text(out_dir / "results.csv", buffer.getvalue())
    written.append(str(out_dir / "results.csv"))
    atomic_write_text(out_dir / "report.md", markdown + "\n")
    written.append(str(out_dir / "report.md"))
    if _plot(records, out_dir / "fprec.png"):
        written.append(str(out_dir / "fprec.png"))
    if _plot_rfe(records, out_dir / "rfe_curves.png"):
        written.append(str(out_dir / "rfe_curves.png"))
    if _plot_saliency(records, out_dir / "saliency_changes.png"):
        written.append(str(out_dir / "saliency_changes.png"))
    from .protocol_reports import plot_bam, plot_iteroar

    for plot, name in ((plot_iteroar, "iteroar_accuracy.png"), (plot_bam, "bam_scores.png")):
        if plot(records, out_dir / name):
            written.append(str(out_dir / name))
    return written


def terminal_table(records: list[Record], outcomes: Counter[tuple[str, str, str]]) -> list[str]:
    """Per suite and explainer: test outcomes, mean FPrec and mean attribution time."""
    stats: dict[tuple[str, str], dict[str, list[float]]] = {}
    for r in records:
        if r.explainer == MODEL_LEVEL:
            continue
        stats.setdefault((r.suite, r.explainer), {}).setdefault(r.metric, []).append(r.value)
    keys = sorted(set(stats) | {(s, e) for s, e, _ in outcomes})
    lines = [f"{'suite':<10} {'explainer':<14} {'passed':>6} {'failed':>6} {'skipped':>7} {'xfailed':>7} {'score':>20} {'time ms':>8}"]
    for suite, e in keys:
        counts = {o: n for (s, x, o), n in outcomes.items() if s == suite and x == e}
        st = stats.get((suite, e), {})
        metric = next((m for m in SCORE_METRICS if m in st), None)
        score = f"{metric} {sum(st[metric]) / len(st[metric]):.3f}" if metric else "-"
        tm = st.get("time_ms", [])
        lines.append(
            f"{suite:<10} {e:<14} {counts.get('passed', 0):>6} {counts.get('failed', 0):>6} "
            f"{counts.get('skipped', 0):>7} {counts.get('xfailed', 0):>7} "
            f"{score:>20} {(sum(tm) / len(tm)) if tm else float('nan'):>8.1f}"
        )
    return lines
