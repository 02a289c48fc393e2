"""ChaosMining audio suite (shipped with pytest-chaosmining).

Parametrised over condition (RB/SB × FP/RP) × model × explainer × seed; see
``pytest_chaosmining.suites.audio.suite`` and ``thresholds.toml``.
"""

from __future__ import annotations

import functools

import pytest

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL
from pytest_chaosmining.suites.audio.suite import SUITE, AudioSuite
from pytest_chaosmining.suites.properties import drift_noise, own_merit_checks
from pytest_chaosmining.suites.scoring import case_record, drift_checks, scored

AUDIO = AudioSuite()


def _unlearned(chaosmining, case) -> str | None:
    return chaosmining.thresholds.unlearned(
        SUITE, chaosmining.settings.tier, case.threshold_key, case.model, case.condition
    )


def test_accuracy(chaosmining, audio_case, request):
    """The classifier learned the spoken word: accuracy at least the tier's gate."""
    trained = AUDIO.model(chaosmining, audio_case)
    node = request.node
    chaosmining.judge.record(node, case_record(SUITE, audio_case, MODEL_LEVEL, "train_seconds", trained.train_seconds))
    params = sum(p.numel() for p in trained.model.parameters()) / 1e6
    chaosmining.judge.record(node, case_record(SUITE, audio_case, MODEL_LEVEL, "params_m", params))
    gate = chaosmining.thresholds.quality_gate(SUITE, chaosmining.settings.tier)
    reason = _unlearned(chaosmining, audio_case)
    if reason and trained.accuracy < gate:
        chaosmining.judge.record(node, case_record(SUITE, audio_case, MODEL_LEVEL, "accuracy", trained.accuracy))
        pytest.xfail(f"{reason} (accuracy {trained.accuracy:.3f} < gate {gate:.3f})")
    chaosmining.judge.require(
        node, case_record(SUITE, audio_case, MODEL_LEVEL, "accuracy", trained.accuracy), gate, f"model {audio_case.id}"
    )


def test_channel_attribution(chaosmining, audio_case, explainer_name, chaosmining_benchmark, request):
    """The explainer finds the speech channel: its top-1 channel hit rate and (where
    calibrated) the speech channel's share of Σ|attribution| at least their
    thresholds, and the hit rate at least ``training_gain`` above the same
    explainer's on the untrained model (it follows what the model learned)."""
    node, make = request.node, functools.partial(case_record, SUITE, audio_case, explainer_name)
    result = scored(
        chaosmining,
        AUDIO,
        audio_case,
        explainer_name,
        chaosmining_benchmark,
        node,
        make,
    )
    for metric in ("untrained_share", "untrained_top1_hit"):
        chaosmining.judge.record(node, make(metric, result[metric]))
    thresholds, tier_name, key = chaosmining.thresholds, chaosmining.settings.tier, audio_case.threshold_key
    what = f"{explainer_name} on {audio_case.id}"
    share_bar = thresholds.optional_metric(SUITE, tier_name, "channel_share", key, explainer_name)
    share = make("channel_share", result["channel_share"])
    checks = []
    if share_bar is None:
        chaosmining.judge.record(node, share)  # not judged here: calibration found it too close to chance
    else:
        checks.append((share, share_bar, what))
    checks.append(
        (
            make("top1_hit", result["top1_hit"]),
            thresholds.optional_metric(SUITE, tier_name, "top1_hit", key, explainer_name),
            what,
        )
    )
    min_gain = thresholds.optional_metric(SUITE, tier_name, "training_gain", key, explainer_name)
    checks.append(
        (
            make("training_gain", result["training_gain"]),
            min_gain,
            f"{what} (top-1 hit rate on the untrained model {result['untrained_top1_hit']:.3f}: "
            "does the explainer depend on the model?)",
        )
    )
    checks += own_merit_checks(chaosmining, AUDIO, audio_case, explainer_name, node, make, what)
    noise = drift_noise(chaosmining, AUDIO, audio_case, explainer_name)
    checks += drift_checks(chaosmining, node, SUITE, explainer_name, result, make, key, what, noise)
    chaosmining.judge.require_all(node, checks)
