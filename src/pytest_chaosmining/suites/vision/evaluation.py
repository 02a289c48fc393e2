"""The vision suite's heavy half: its example figure, drawn from the run's results (each
explainer's map as its 7×7 patch masses, the fingerprint the run kept) or, for a
paper-tier report, again from the trained models (the models and their scoring are the
digits testbed's)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from pytest_chaosmining.core.metrics.fingerprints import Fingerprint
from pytest_chaosmining.core.metrics.localisation import saliency_maps, top_k_box
from pytest_chaosmining.core.records import FINGERPRINT, Record
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.failing_samples import failing_samples
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.testbeds.digits.cases import SUITE, vision_code
from pytest_chaosmining.testbeds.digits.scoring import PAPER_CANVAS, PAPER_SIGMA, attribution_call
from pytest_chaosmining.testbeds.digits.tiers import VISION
from pytest_chaosmining.testbeds.digits.training import data_split, patch_mask, run_model

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


#: the key of the example figure's lines
KEY = (
    Line2D([], [], color="lime", lw=2, label="true foreground box"),
    Line2D([], [], color="red", lw=2, label="the explainer's top-k box (k = box area)"),
)


def example_figure(
    run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record] = (), per_condition: int = 1
) -> bool:
    """The example figure of the ``planned`` cases the run's ``records`` hold: drawn from
    the records (``--chaosmining-figures results``, the default) or again from the trained
    models (``models``); False where there is nothing to draw."""
    if run.plan.settings.figures == "models":
        return figure_from_models(run, path, planned, records, per_condition)
    return figure_from_results(run, path, planned, records, per_condition)


def _case_records(records: Sequence[Record], case: Any) -> list[Record]:
    """The vision records of ``case``'s explainer tests."""
    return [r for r in records if r.suite == SUITE and r.nodeid.endswith(f"[{case.explainer_id(r.explainer)}]")]


def figure_from_results(
    run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record], per_condition: int = 1
) -> bool:
    """For the first case of each condition the run explained: a few validation images
    (the data alone: no model loaded, no explainer called), each explainer's patch masses
    of that image as the run's fingerprint of its maps keeps them, with their top-k box
    (red; k = the box's area, one patch) and the true box (green); then, for each explainer
    whose test failed there, the sample it failed on, with the baseline's patch masses
    beside this run's where a baseline was given."""
    plt = pyplot()
    cases, seen, kept = [], set(), {}
    for case in planned:
        mine = {r.explainer: r for r in _case_records(records, case) if r.metric == FINGERPRINT and r.maps}
        if mine and case.condition not in seen:
            cases.append(case)
            seen.add(case.condition)
            kept[case.id] = mine
    if not cases:
        return False
    names = [n for n in run.explainers.in_suite(SUITE) if any(n in kept[c.id] for c in cases)]
    baseline = run.judge.baseline
    chosen = {
        case.id: failing_samples(
            _case_records(records, case),
            lambda r: baseline.fingerprints.get(r.key()) if baseline is not None else None,
        )
        for case in cases
    }
    rows = sum(per_condition + len(chosen[case.id]) for case in cases)
    against = any(f.then is not None for found in chosen.values() for f in found)
    columns = 1 + len(names) + (2 if against else 0)
    fig, axes = plt.subplots(rows, columns, figsize=(1.8 * columns, 1.8 * rows), squeeze=False)
    row = 0
    for case in cases:
        val = data_split(case, "val", run.runtime.cache)
        cells = -(-case.canvas // case.fg)
        index = np.arange(case.canvas) // case.fg
        grid = index[:, None] * cells + index[None, :]
        masses = {name: Fingerprint.read(r.maps).mass for name, r in kept[case.id].items()}  # type: ignore[arg-type]
        targets = next((r.labels for r in kept[case.id].values() if r.labels), None)
        shown = [(j, None) for j in range(per_condition)] + [(f.index, f) for f in chosen[case.id]]
        for j, failing in shown:
            ax_row = axes[row]
            row += 1
            x, y, w, h = (int(v) for v in val.boxes[j])
            predicted = f" ŷ={targets[j]}" if targets is not None and j < len(targets) else ""
            ax_row[0].imshow(val.images[j].transpose(1, 2, 0))
            ax_row[0].add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
            title = f"{case.condition} y={val.labels[j]}{predicted}"
            if failing is not None:
                title = "\n".join(
                    textwrap.wrap(f"{failing.explainer} failed: sample {j},{predicted}: {failing.why}", 34)
                )
            ax_row[0].set_title(title, fontsize=6 if failing is not None else 7, color="red" if failing else "black")
            for k, name in enumerate(names, start=1):
                ax = ax_row[k]
                if name not in masses or j >= len(masses[name]):
                    ax.set_title(f"{name}: not run", fontsize=7)
                    continue
                smap = masses[name][j][grid]
                bx, by, bw, bh = top_k_box(smap, w * h, (x, y, w, h))
                ax.imshow(smap, cmap="magma")
                ax.add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
                ax.add_patch(Rectangle((bx - 0.5, by - 0.5), bw, bh, fill=False, ec="red", lw=1.2))
                ax.set_title(name, fontsize=7)
            if failing is not None and failing.then is not None and failing.now is not None:
                for ax, then_now, when in ((ax_row[-2], failing.then, "baseline"), (ax_row[-1], failing.now, "now")):
                    ax.imshow(np.asarray(then_now)[grid], cmap="magma")
                    ax.set_title(f"{failing.explainer} {when}\n(patch masses)", fontsize=6)
    _finish(fig, axes, path, "each explainer's patch masses (the run's fingerprint of its maps)")
    plt.close(fig)
    return True


def _finish(fig: Any, axes: Any, path: Path, what: str) -> None:
    """The figure's empty axes off, its key and caption, saved to ``path``."""
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        if not ax.has_data() and not ax.get_title():
            ax.set_axis_off()
    fig.legend(handles=list(KEY), loc="lower center", ncol=2, fontsize=8, frameon=False, title=what, title_fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=90)


def figure_from_models(
    run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record] = (), per_condition: int = 1
) -> bool:
    """For the first cached model of each condition: a few validation images, each
    explainer's smoothed map with its top-k box (red) and the true box (green); then, for
    each explainer whose test failed there, the sample it failed on (its maps moved most
    from the baseline's, or it scored worst), with the baseline's patch masses beside this
    run's where a baseline was given.  Uses cached models only; returns False when there
    is nothing to draw."""
    plt = pyplot()
    cases, seen = [], set()
    for case in planned:
        if case.condition not in seen and run.runtime.cache.has(
            SUITE, case.training_config(run.runtime.device.type), vision_code()
        ):
            cases.append(case)
            seen.add(case.condition)
    if not cases:
        return False
    names = run.explainers.in_suite(SUITE)
    baseline = run.judge.baseline
    chosen = {
        case.id: failing_samples(
            _case_records(records, case),
            lambda r: baseline.fingerprints.get(r.key()) if baseline is not None else None,
        )
        for case in cases
    }
    rows = sum(per_condition + len(chosen[case.id]) for case in cases)
    against = any(f.then is not None for found in chosen.values() for f in found)
    columns = 1 + len(names) + (2 if against else 0)
    fig, axes = plt.subplots(rows, columns, figsize=(1.8 * columns, 1.8 * rows), squeeze=False)
    tier = VISION[run.plan.tier]
    row = 0
    for case in cases:
        trained = run_model(run, case)
        sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS
        shown = [(j, None) for j in range(per_condition)] + [(f.index, f) for f in chosen[case.id]]
        for j, failing in shown:
            ax_row = axes[row]
            row += 1
            x, y, w, h = (int(v) for v in trained.val.boxes[j])
            ax_row[0].imshow(trained.val.images[j].transpose(1, 2, 0))
            ax_row[0].add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
            title = f"{case.condition} y={trained.val.labels[j]} ŷ={trained.predictions[j]}"
            if failing is not None:
                title = "\n".join(
                    textwrap.wrap(
                        f"{failing.explainer} failed: sample {j}, ŷ={trained.predictions[j]}: {failing.why}", 34
                    )
                )
            ax_row[0].set_title(title, fontsize=6 if failing is not None else 7, color="red" if failing else "black")
            for k, name in enumerate(names, start=1):
                ax = ax_row[k]
                try:
                    call = attribution_call(
                        trained,
                        run.explainers[name],
                        run.runtime.device,
                        tier.internal_batch_size,
                        slice(j, j + 1),
                    )
                    attr = call().cpu().numpy()
                except ExplainerError:
                    ax.set_title(f"{name}: error", fontsize=7)
                    continue
                smap = saliency_maps(attr, sigma)[0]
                bx, by, bw, bh = top_k_box(smap, w * h, (x, y, w, h))
                ax.imshow(smap, cmap="magma")
                ax.add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
                ax.add_patch(Rectangle((bx - 0.5, by - 0.5), bw, bh, fill=False, ec="red", lw=1.2))
                ax.set_title(name, fontsize=7)
            if failing is not None and failing.then is not None and failing.now is not None:
                grid = np.asarray(patch_mask(case)[0].numpy()).reshape(-1, *trained.val.images[j].shape[1:])[0]
                for ax, masses, when in ((ax_row[-2], failing.then, "baseline"), (ax_row[-1], failing.now, "now")):
                    ax.imshow(np.asarray(masses)[grid], cmap="magma")
                    ax.set_title(f"{failing.explainer} {when}\n(patch masses)", fontsize=6)
    _finish(fig, axes, path, "each explainer's smoothed map, called again on the trained model")
    plt.close(fig)
    return True
