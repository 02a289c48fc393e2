"""The audio suite's heavy half: its example figure, drawn from the run's results (each
explainer's channel shares from the fingerprint of its maps the run kept) or, for a
paper-tier report, again from the trained models (the models and their scoring are the
audio testbed's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chaosmining.core.metrics.attribution import channel_mass
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint
from pytest_chaosmining.core.records import FINGERPRINT, Record
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.failing_samples import FailingSample, failing_samples
from pytest_chaosmining.reports.figures import FROM_MODELS, pyplot
from pytest_chaosmining.testbeds.audio.cases import SUITE, AudioCase, audio_code
from pytest_chaosmining.testbeds.audio.tiers import AUDIO
from pytest_chaosmining.testbeds.audio.training import attribution_call, data_split, run_model, segment_mask

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


#: the conditions in the order the figure prefers them
ORDER = {"SBFP": 0, "RBFP": 1, "SBRP": 2, "RBRP": 3}


def example_figure(run: RunView, path: Path, planned: Sequence[AudioCase], records: Sequence[Record] = ()) -> bool:
    """The example figure of the ``planned`` cases the run's ``records`` hold: drawn from
    the records (``--chaosmining-figures needed`` or ``all``) or again from the trained
    models (``models``); False where there is nothing to draw."""
    if run.plan.settings.figures == FROM_MODELS:
        return figure_from_models(run, path, planned, records)
    return figure_from_results(run, path, planned, records)


def _case_records(records: Sequence[Record], case: AudioCase) -> list[Record]:
    """The audio records of ``case``'s explainer tests."""
    return [r for r in records if r.suite == SUITE and r.nodeid.endswith(f"[{case.explainer_id(r.explainer)}]")]


def _failing(run: RunView, records: Sequence[Record], cases: Sequence[AudioCase]) -> dict[str, list[FailingSample]]:
    """Each case's sample to draw of the first explainer whose test failed there."""
    baseline = run.judge.baseline
    return {
        c.id: failing_samples(
            _case_records(records, c),
            lambda r: baseline.fingerprints.get(r.key()) if baseline is not None else None,
            most=1,
        )
        for c in cases
    }


def figure_from_results(run: RunView, path: Path, planned: Sequence[AudioCase], records: Sequence[Record]) -> bool:
    """One validation clip of a case the run explained (SB before RB, FP before RP; a case
    where an explainer's test failed first, and then the clip it failed on): each
    channel's waveform (the data alone: no model loaded, no explainer called) beside each
    explainer's per-channel share of |attribution| as the run's fingerprint of its maps
    keeps it, and the failing explainer's shares in the baseline where one was given."""
    kept = {}
    for c in planned:
        mine = {r.explainer: r for r in _case_records(records, c) if r.metric == FINGERPRINT and r.maps}
        if mine:
            kept[c.id] = (c, mine)
    if not kept:
        return False
    cases = [c for c, _ in kept.values()]
    found = _failing(run, records, cases)
    case = min(cases, key=lambda c: (not found[c.id], ORDER.get(c.condition, 9)))
    failing = found[case.id][0] if found[case.id] else None
    mine = kept[case.id][1]
    val = data_split(case, "val", run.runtime.cache)
    masses = {name: Fingerprint.read(r.maps).mass for name, r in mine.items()}  # type: ignore[arg-type]
    targets = next((r.labels for r in mine.values() if r.labels), None) or []
    explained = min(len(targets), len(val.labels))
    correct = [j for j in range(explained) if targets[j] == val.labels[j]]
    i = failing.index if failing is not None else (correct[0] if correct else 0)
    shares = {
        name: _channel_shares(masses[name][i], case)
        for name in run.explainers.in_suite(SUITE)
        if name in masses and i < len(masses[name])
    }
    if failing is not None and failing.then is not None:
        shares[f"{failing.explainer} (baseline)"] = _channel_shares(failing.then, case)
    predicted = val.classes[targets[i]] if i < len(targets) else "?"
    _draw(path, case, val, i, predicted, failing, shares, "from the run's fingerprints")
    return True


def _draw(
    path: Path,
    case: AudioCase,
    val: Any,
    i: int,
    predicted: str,
    failing: FailingSample | None,
    shares: dict[str, np.ndarray],
    source: str,
) -> None:
    """Clip ``i`` of ``val``, its channels' waveforms beside each explainer's channel ``shares``."""
    plt = pyplot()
    wave = val.waves[i].astype(np.float32) / 32767.0
    true = int(val.channels[i])
    channels = wave.shape[0]
    fig, (ax_w, ax_s) = plt.subplots(1, 2, figsize=(11, 0.45 * channels + 1.5), gridspec_kw={"width_ratios": [3, 2]})
    t = np.arange(wave.shape[1]) / case.rate
    for c in range(channels):
        ax_w.plot(t, wave[c] * 0.45 + (channels - 1 - c), lw=0.4, color="tab:red" if c == true else "0.4")
    ax_w.set_yticks(range(channels), [f"ch {c}{' (speech)' if c == true else ''}" for c in range(channels)][::-1])
    ax_w.set_xlabel("s")
    label = val.classes[val.labels[i]]
    title = f"{case.id}: word {label!r}, predicted {predicted!r}"
    if failing is not None:
        title += f"\n{failing.explainer} failed on clip {i}: {failing.why}"
    ax_w.set_title(title, fontsize=9, color="red" if failing is not None else "black")
    width = 0.8 / max(1, len(shares))
    for k, (name, share) in enumerate(shares.items()):
        ax_s.barh(np.arange(channels)[::-1] + (k - (len(shares) - 1) / 2) * width, share, height=width, label=name)
    ax_s.axvline(1 / channels, color="0.5", ls=":", lw=1)
    ax_s.set_yticks(range(channels), [f"ch {c}" for c in range(channels)][::-1])
    ax_s.set_xlabel("share of Σ|attribution| (dotted: chance)")
    ax_s.legend(fontsize=7, title=source, title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def figure_from_models(run: RunView, path: Path, planned: Sequence[AudioCase], records: Sequence[Record] = ()) -> bool:
    """One validation clip of the first cached model (SB before RB, FP before RP; a
    case where an explainer's test failed first, and then the clip it failed on):
    each channel's waveform (speech channel in colour) beside each explainer's
    per-channel share of |attribution|, and the failing explainer's shares in the
    baseline where one was given.  Uses cached models only; returns False when there
    is nothing to draw."""
    cached = [
        c for c in planned if run.runtime.cache.has(SUITE, c.training_config(run.runtime.device.type), audio_code())
    ]
    if not cached:
        return False
    found = _failing(run, records, cached)
    case = min(cached, key=lambda c: (not found[c.id], ORDER.get(c.condition, 9)))
    failing = found[case.id][0] if found[case.id] else None
    trained = run_model(run, case)
    correct = np.flatnonzero(trained.predictions == trained.val.labels)
    i = int(correct[0]) if len(correct) else 0  # a clip the model classifies correctly, where there is one
    i = failing.index if failing is not None else i
    shares = {}
    for name in run.explainers.in_suite(SUITE):
        try:
            call = attribution_call(
                trained,
                run.explainers[name],
                run.runtime.device,
                AUDIO[run.plan.tier].internal_batch_size,
                slice(i, i + 1),
            )
            mass = channel_mass(call().detach().cpu().numpy())[0]
        except ExplainerError:
            continue
        shares[name] = mass / mass.sum() if mass.sum() > 0 else mass
    if failing is not None and failing.then is not None:
        shares[f"{failing.explainer} (baseline)"] = _channel_shares(failing.then, case)
    predicted = trained.val.classes[trained.predictions[i]]
    _draw(path, case, trained.val, i, predicted, failing, shares, "called again on the model")
    return True


def _channel_shares(masses: Sequence[float], case: AudioCase) -> np.ndarray:
    """A fingerprint row (channel × segment masses) as each channel's share."""
    mask = np.asarray(segment_mask(case)[0].numpy())
    mask = mask.reshape(mask.shape[-2], -1) if mask.ndim > 1 else mask.reshape(1, -1)
    row = np.asarray(masses, dtype=np.float64)
    per_channel = np.array([row[np.unique(ids)].sum() for ids in mask])
    total = per_channel.sum()
    return per_channel / total if total > 0 else per_channel
