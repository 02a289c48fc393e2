"""The vision suite's heavy half: its example figure (the models and their scoring are
the digits testbed's)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from pytest_chaosmining.core.metrics.localisation import saliency_maps, top_k_box
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.failing_samples import failing_samples
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.testbeds.digits.cases import SUITE, vision_code
from pytest_chaosmining.testbeds.digits.scoring import PAPER_CANVAS, PAPER_SIGMA, attribution_call
from pytest_chaosmining.testbeds.digits.tiers import VISION
from pytest_chaosmining.testbeds.digits.training import patch_mask, run_model

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


def example_figure(
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
            [r for r in records if r.suite == SUITE and r.nodeid.endswith(f"[{case.explainer_id(r.explainer)}]")],
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
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        if not ax.has_data() and not ax.get_title():
            ax.set_axis_off()
    key = [
        Line2D([], [], color="lime", lw=2, label="true foreground box"),
        Line2D([], [], color="red", lw=2, label="the explainer's top-k box (k = box area)"),
    ]
    fig.legend(handles=key, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
