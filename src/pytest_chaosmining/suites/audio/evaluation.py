"""The audio suite's heavy half: its example figure (the models and their scoring are the
audio testbed's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pytest_chaosmining.core.metrics.attribution import channel_mass
from pytest_chaosmining.core.records import Record
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.failing_samples import failing_samples
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.testbeds.audio.cases import SUITE, AudioCase, audio_code
from pytest_chaosmining.testbeds.audio.tiers import AUDIO
from pytest_chaosmining.testbeds.audio.training import attribution_call, run_model, segment_mask

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


def example_figure(run: RunView, path: Path, planned: Sequence[AudioCase], records: Sequence[Record] = ()) -> bool:
    """One validation clip of the first cached model (SB before RB, FP before RP; a
    case where an explainer's test failed first, and then the clip it failed on):
    each channel's waveform (speech channel in colour) beside each explainer's
    per-channel share of |attribution|, and the failing explainer's shares in the
    baseline where one was given.  Uses cached models only; returns False when there
    is nothing to draw."""
    plt = pyplot()
    order = {"SBFP": 0, "RBFP": 1, "SBRP": 2, "RBRP": 3}
    cached = [
        c for c in planned if run.runtime.cache.has(SUITE, c.training_config(run.runtime.device.type), audio_code())
    ]
    if not cached:
        return False
    baseline = run.judge.baseline
    found = {
        c.id: failing_samples(
            [r for r in records if r.suite == SUITE and r.nodeid.endswith(f"[{c.explainer_id(r.explainer)}]")],
            lambda r: baseline.fingerprints.get(r.key()) if baseline is not None else None,
            most=1,
        )
        for c in cached
    }
    case = min(cached, key=lambda c: (not found[c.id], order.get(c.condition, 9)))
    failing = found[case.id][0] if found[case.id] else None
    trained = run_model(run, case)
    names = run.explainers.in_suite(SUITE)
    correct = np.flatnonzero(trained.predictions == trained.val.labels)
    i = int(correct[0]) if len(correct) else 0  # a clip the model classifies correctly, where there is one
    i = failing.index if failing is not None else i
    wave = trained.val.waves[i].astype(np.float32) / 32767.0
    true = int(trained.val.channels[i])
    shares = {}
    for name in names:
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
    channels = wave.shape[0]
    fig, (ax_w, ax_s) = plt.subplots(1, 2, figsize=(11, 0.45 * channels + 1.5), gridspec_kw={"width_ratios": [3, 2]})
    t = np.arange(wave.shape[1]) / case.rate
    for c in range(channels):
        ax_w.plot(t, wave[c] * 0.45 + (channels - 1 - c), lw=0.4, color="tab:red" if c == true else "0.4")
    ax_w.set_yticks(range(channels), [f"ch {c}{' (speech)' if c == true else ''}" for c in range(channels)][::-1])
    ax_w.set_xlabel("s")
    label = trained.val.classes[trained.val.labels[i]]
    predicted = trained.val.classes[trained.predictions[i]]
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
    ax_s.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def _channel_shares(masses: Sequence[float], case: AudioCase) -> np.ndarray:
    """A fingerprint row (channel × segment masses) as each channel's share."""
    mask = np.asarray(segment_mask(case)[0].numpy())
    mask = mask.reshape(mask.shape[-2], -1) if mask.ndim > 1 else mask.reshape(1, -1)
    row = np.asarray(masses, dtype=np.float64)
    per_channel = np.array([row[np.unique(ids)].sum() for ids in mask])
    total = per_channel.sum()
    return per_channel / total if total > 0 else per_channel
