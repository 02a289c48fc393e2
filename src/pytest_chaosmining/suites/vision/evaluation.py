"""The vision suite's heavy half: its example figure, drawn from the run's results (each
explainer's map as its 7×7 patch masses, the fingerprint the run kept) or, for a
paper-tier report, again from the trained models (the models and their scoring are the
digits testbed's)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from pytest_chaosmining.core.metrics.fingerprints import Fingerprint
from pytest_chaosmining.core.metrics.localisation import saliency_maps, top_k_box
from pytest_chaosmining.core.records import FINGERPRINT, Record
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.failing_samples import FailingSample, failing_samples
from pytest_chaosmining.reports.figures import FROM_MODELS, pyplot
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
    the records (``--chaosmining-figures needed`` or ``all``) or again from the trained
    models (``models``); False where there is nothing to draw."""
    if run.plan.settings.figures == FROM_MODELS:
        return figure_from_models(run, path, planned, records, per_condition)
    return figure_from_results(run, path, planned, records, per_condition)


def _case_records(records: Sequence[Record], case: Any) -> list[Record]:
    """The vision records of ``case``'s explainer tests."""
    return [r for r in records if r.suite == SUITE and r.nodeid.endswith(f"[{case.explainer_id(r.explainer)}]")]


@dataclass(frozen=True)
class _ShownCase:
    """One case as the example figure draws it: its validation split, the classes the
    model predicted (None: not known), each explainer's map of a sample (a 2-D array, or
    the text its panel shows instead) and the samples its failed tests chose."""

    case: Any
    val: Any
    predicted: Sequence[int] | np.ndarray | None
    map_of: Callable[[str, int], np.ndarray | str]
    chosen: list[FailingSample]


def _chosen(run: RunView, records: Sequence[Record]) -> list[FailingSample]:
    """The samples a case's failed tests chose (:func:`failing_samples`)."""
    baseline = run.judge.baseline
    return failing_samples(records, lambda r: baseline.fingerprints.get(r.key()) if baseline is not None else None)


def figure_from_results(
    run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record], per_condition: int = 1
) -> bool:
    """For the first case of each condition the run explained: a few validation images
    (the data alone: no model loaded, no explainer called), each explainer's patch masses
    of that image as the run's fingerprint of its maps keeps them, with their top-k box
    (red; k = the box's area, one patch) and the true box (green); then, for each explainer
    whose test failed there, the sample it failed on, with the baseline's patch masses
    beside this run's where a baseline was given."""
    shown, seen = [], set()
    for case in planned:
        if case.condition in seen:
            continue
        own = _case_records(records, case)
        kept = {r.explainer: r for r in own if r.metric == FINGERPRINT and r.maps}
        if not kept:
            continue
        seen.add(case.condition)
        masses = {name: Fingerprint.read(r.maps).mass for name, r in kept.items()}  # type: ignore[arg-type]
        grid = _grid(case)

        def map_of(name: str, j: int, masses: dict[str, np.ndarray] = masses, grid: np.ndarray = grid) -> Any:
            return np.asarray(masses[name][j])[grid] if name in masses and j < len(masses[name]) else "not run"

        predicted = next((r.labels for r in kept.values() if r.labels), None)
        val = data_split(case, "val", run.runtime.cache)
        shown.append(_ShownCase(case, val, predicted, map_of, _chosen(run, own)))
    names = [n for n in run.explainers.in_suite(SUITE) if any(isinstance(c.map_of(n, 0), np.ndarray) for c in shown)]
    return _draw(path, shown, names, per_condition, "each explainer's patch masses (the run's fingerprint of its maps)")


def figure_from_models(
    run: RunView, path: Path, planned: Sequence[Any], records: Sequence[Record] = (), per_condition: int = 1
) -> bool:
    """For the first cached model of each condition: what :func:`figure_from_results`
    draws, each explainer's map called again on the model and smoothed.  Uses cached
    models only; returns False when there is nothing to draw."""
    tier, shown, seen = VISION[run.plan.tier], [], set()
    for case in planned:
        config = case.training_config(run.runtime.device.type)
        if case.condition in seen or not run.runtime.cache.has(SUITE, config, vision_code()):
            continue
        seen.add(case.condition)
        trained = run_model(run, case)
        sigma = PAPER_SIGMA * case.canvas / PAPER_CANVAS

        def map_of(name: str, j: int, trained: Any = trained, sigma: float = sigma) -> Any:
            explainer = run.explainers[name]
            try:
                call = attribution_call(
                    trained, explainer, run.runtime.device, tier.internal_batch_size, slice(j, j + 1)
                )
                return saliency_maps(call().cpu().numpy(), sigma)[0]
            except ExplainerError:
                return "error"

        shown.append(
            _ShownCase(case, trained.val, trained.predictions, map_of, _chosen(run, _case_records(records, case)))
        )
    names = list(run.explainers.in_suite(SUITE))
    return _draw(path, shown, names, per_condition, "each explainer's smoothed map, called again on the trained model")


def _grid(case: Any) -> np.ndarray:
    """Each pixel's patch of ``case``'s grid (the suite's feature mask, :func:`patch_mask`)."""
    return np.asarray(patch_mask(case)[0, 0].numpy())


def _draw(path: Path, shown: Sequence[_ShownCase], names: Sequence[str], per_condition: int, what: str) -> bool:
    """A row per sample of each ``shown`` case (its first ``per_condition`` validation
    images, then those its failed tests chose): the image with its true box, each of
    ``names``' maps with its top-k box, and a failing explainer's patch masses in the
    baseline and now; False where there is nothing to draw."""
    if not shown:
        return False
    plt = pyplot()
    rows = sum(per_condition + len(c.chosen) for c in shown)
    against = any(f.then is not None for c in shown for f in c.chosen)
    columns = 1 + len(names) + (2 if against else 0)
    fig, axes = plt.subplots(rows, columns, figsize=(1.8 * columns, 1.8 * rows), squeeze=False)
    row = 0
    for c in shown:
        samples: list[tuple[int, FailingSample | None]] = [(j, None) for j in range(per_condition)]
        for j, failing in samples + [(f.index, f) for f in c.chosen]:
            ax_row = axes[row]
            row += 1
            x, y, w, h = (int(v) for v in c.val.boxes[j])
            predicted = f" ŷ={c.predicted[j]}" if c.predicted is not None and j < len(c.predicted) else ""
            ax_row[0].imshow(c.val.images[j].transpose(1, 2, 0))
            ax_row[0].add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
            title = f"{c.case.condition} y={c.val.labels[j]}{predicted}"
            if failing is not None:
                title = "\n".join(
                    textwrap.wrap(f"{failing.explainer} failed: sample {j},{predicted}: {failing.why}", 34)
                )
            ax_row[0].set_title(title, fontsize=6 if failing is not None else 7, color="red" if failing else "black")
            for k, name in enumerate(names, start=1):
                smap = c.map_of(name, j)
                if isinstance(smap, str):
                    ax_row[k].set_title(f"{name}: {smap}", fontsize=7)
                    continue
                bx, by, bw, bh = top_k_box(smap, w * h, (x, y, w, h))
                ax_row[k].imshow(smap, cmap="magma")
                ax_row[k].add_patch(Rectangle((x - 0.5, y - 0.5), w, h, fill=False, ec="lime", lw=1.2))
                ax_row[k].add_patch(Rectangle((bx - 0.5, by - 0.5), bw, bh, fill=False, ec="red", lw=1.2))
                ax_row[k].set_title(name, fontsize=7)
            if failing is not None and failing.then is not None and failing.now is not None:
                grid = _grid(c.case)
                for ax, masses, when in ((ax_row[-2], failing.then, "baseline"), (ax_row[-1], failing.now, "now")):
                    ax.imshow(np.asarray(masses)[grid], cmap="magma")
                    ax.set_title(f"{failing.explainer} {when}\n(patch masses)", fontsize=6)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        if not ax.has_data() and not ax.get_title():
            ax.set_axis_off()
    fig.legend(handles=list(KEY), loc="lower center", ncol=2, fontsize=8, frameon=False, title=what, title_fontsize=8)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
