"""The audio suite's heavy half: its example figure (the models and their scoring are the
audio testbed's)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pytest_chaosmining.core.metrics.attribution import channel_mass
from pytest_chaosmining.explainers import ExplainerError
from pytest_chaosmining.reports.figures import pyplot
from pytest_chaosmining.testbeds.audio.cases import SUITE, AudioCase, audio_code
from pytest_chaosmining.testbeds.audio.tiers import AUDIO
from pytest_chaosmining.testbeds.audio.training import attribution_call, run_model

if TYPE_CHECKING:
    from pytest_chaosmining.run_view import RunView


def example_figure(run: RunView, path: Path, planned: Sequence[AudioCase]) -> bool:
    """One validation clip of the first cached model (SB before RB, FP before RP):
    each channel's waveform (speech channel in colour) beside each explainer's
    per-channel share of |attribution|.  Uses cached models only; returns False
    when there is nothing to draw."""
    plt = pyplot()
    order = {"SBFP": 0, "RBFP": 1, "SBRP": 2, "RBRP": 3}
    cached = [
        c for c in planned if run.runtime.cache.has(SUITE, c.training_config(run.runtime.device.type), audio_code())
    ]
    if not cached:
        return False
    case = min(cached, key=lambda c: order.get(c.condition, 9))
    trained = run_model(run, case)
    names = run.explainers.in_suite(SUITE)
    correct = np.flatnonzero(trained.predictions == trained.val.labels)
    i = int(correct[0]) if len(correct) else 0  # a clip the model classifies correctly, where there is one
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
    channels = wave.shape[0]
    fig, (ax_w, ax_s) = plt.subplots(1, 2, figsize=(11, 0.45 * channels + 1.5), gridspec_kw={"width_ratios": [3, 2]})
    t = np.arange(wave.shape[1]) / case.rate
    for c in range(channels):
        ax_w.plot(t, wave[c] * 0.45 + (channels - 1 - c), lw=0.4, color="tab:red" if c == true else "0.4")
    ax_w.set_yticks(range(channels), [f"ch {c}{' (speech)' if c == true else ''}" for c in range(channels)][::-1])
    ax_w.set_xlabel("s")
    label = trained.val.classes[trained.val.labels[i]]
    predicted = trained.val.classes[trained.predictions[i]]
    ax_w.set_title(f"{case.id}: word {label!r}, predicted {predicted!r}", fontsize=9)
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
