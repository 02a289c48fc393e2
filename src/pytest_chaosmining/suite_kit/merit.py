"""The checks of an explainer's own merit that every model suite shares (symbolic,
vision, audio): batch consistency, its noise, target sensitivity, and the noise
that excuses a stochastic explainer's drift from a baseline; on classifiers also
the signs of a signed map against the model's own (:mod:`.class_effects`) and,
where declared, completeness.

They need no baseline: each compares the explainer's maps with its own maps of the
same samples, called again in another batch, with another seed or another target,
or with the model's exact effects (:mod:`pytest_chaosmining.core.metrics.properties`).
They run on a few samples of the suite's own-merit cases (:func:`own_merit_rotation`: the
plan's first case, against a baseline the case its rotation last moved to and the next),
as checks of that case's explainer test.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import torch

from pytest_chaosmining.core.metrics import properties as p
from pytest_chaosmining.core.metrics.attribution import feature_sums
from pytest_chaosmining.core.metrics.drift import (
    NOISE_DRAWS,
    NOISE_SAMPLES,
    DrawNoise,
    map_agreement,
    outline,
    outline_change,
)
from pytest_chaosmining.core.metrics.fingerprints import Fingerprint, fingerprint_of
from pytest_chaosmining.core.metrics.properties import NOISE_FACTOR
from pytest_chaosmining.core.records import NOISE_SOURCE
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.explainers import Explainer, ExplainerNotApplicable, attribute
from pytest_chaosmining.references.formulas import named
from pytest_chaosmining.suite_kit.class_effects import ClassEffects, class_effects
from pytest_chaosmining.suite_kit.probe import Probe
from pytest_chaosmining.suite_kit.seam import number
from pytest_chaosmining.verdict.class_moves import Retargeting
from pytest_chaosmining.verdict.judge import Check, explainer_failures
from pytest_chaosmining.verdict.rotation import ROTATION, Rotation, case_identity

if TYPE_CHECKING:
    import pytest

    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.seam import CaseT, ModelSuite, ModelT, RecordedCase, Recorder

#: the distinct samples of a probe (the checks run on these few, once per explainer and suite)
PROBE_SAMPLES = 6
#: the samples of a classifier's probe whose signs and sums are checked against the model's effects
EFFECT_SAMPLES = 24
#: samples that appear twice in the probe's batch (two copies: two draws of a stochastic map)
TWINS = 2
#: the seeds of the further draws that measure a stochastic explainer's mean noise
EXTRA_SEEDS = (2, 3)
#: the seeds and copies per batch of the draws the drift check's noise is measured from
NOISE_SEEDS, NOISE_COPIES = (0, 1), NOISE_DRAWS // 2
#: the version of the checks' measurements, part of a built-in's cached result's key
PROBE_VERSION = 8


def _rows(target: int | torch.Tensor | None, index: torch.Tensor) -> int | torch.Tensor | None:

    return target[index] if isinstance(target, torch.Tensor) and target.dim() > 0 else target


def _explain(
    explainer: Explainer, probe: Probe, index: list[int], target: int | torch.Tensor | None = None, seed: int = 0
) -> np.ndarray:
    """The explainer's maps of the probe's samples ``index`` (in that order) under ``seed``."""

    rows = torch.tensor(index, dtype=torch.long, device=probe.inputs.device)
    chosen = _rows(probe.target if target is None else target, rows)
    with probe.guard():
        out = attribute(explainer, probe.model, probe.inputs[rows], chosen, probe.context, seed=seed)
    return out.detach().cpu().double().numpy()


def measured_merit(explainer: Explainer, probe: Probe, effects: ClassEffects | None = None) -> dict[str, object]:
    """Measure the explainer on ``probe``: its maps of a batch of the first
    :data:`PROBE_SAMPLES` samples and :data:`TWINS` copies, again with the same seed
    and with another, in reversed order, of the first half on its own and
    (classifiers) for other classes; with the model's ``effects`` on all of the
    probe's samples, its maps' signs and (declared) sums against them.  The checks'
    values, the noise and what moved most.  Target sensitivity allows only the noise
    of two calls with the same seed (a seeded sampler draws the same numbers for
    either class, so a map that ignores the target cannot hide in it)."""
    n = min(PROBE_SAMPLES, len(probe.inputs))
    batch = list(range(n)) + list(range(TWINS))
    pairs = [(i, n + i) for i in range(TWINS)]
    first = _explain(explainer, probe, batch)
    repeated = p.dissimilarity(first, _explain(explainer, probe, batch))  # same seed: 0 unless it draws unseeded
    reseeded = np.maximum(p.dissimilarity(first, _explain(explainer, probe, batch, seed=1)), repeated)
    twins = p.dissimilarity(first[:TWINS], first[n:])
    twins_ok = p.twins_identified(first, pairs)
    noise = p.measured_noise(reseeded, twins, twins_ok)
    # a sampler's mean noise from more draws: two more seeds, or copies of every sample in one
    # call (a declared sampler that seeds itself draws anew only there, and where its draws
    # dominate its maps two copies of a sample are not each other's nearest map: no twins)
    if noise.stochastic or explainer.stochastic:
        if noise.source == "seed":
            more = [p.dissimilarity(first, _explain(explainer, probe, batch, seed=s)) for s in EXTRA_SEEDS]
            drawn = np.concatenate([reseeded, *more])
        else:
            apart = p.spread_of_draws(lambda index: _explain(explainer, probe, index), first[:n])
            # twins apart that are not each other's nearest map may be a batch bug, not noise
            parts = ([twins] if twins_ok else []) + ([] if apart is None else [apart])
            drawn = np.concatenate(parts) if parts else np.zeros(1)
        worst = max(noise.dissimilarity, float(drawn.max()))
        if worst >= p.EQUAL:
            noise = p.Noise(worst, "seed" if noise.source == "seed" else "twins", float(drawn.mean()))
    reversed_maps = _explain(explainer, probe, batch[::-1])[::-1]
    half = n // 2
    alone = _explain(explainer, probe, list(range(half)))
    moved = {
        "in reversed order": p.dissimilarity(first, reversed_maps),
        "on its own with half the batch": p.dissimilarity(first[:half], alone),
    }
    if not twins_ok:  # two copies of one sample got maps that are not each other's nearest: not noise
        moved["beside a copy of itself"] = twins
    how, worst = max(((how, float(d.max())) for how, d in moved.items()), key=lambda item: item[1])
    sample = int(np.argmax(moved[how])) % n
    blind = p.sample_blind(first[:n])
    out: dict[str, object] = {
        "batch_consistency": 0.0 if blind else p.batch_consistency(np.concatenate(list(moved.values())), noise),
        "self_agreement": noise.agreement,
        NOISE_SOURCE: noise.source,
        "moved_most": f"sample {sample} {how} (1 - cosine {worst:.2e})",
        "sample_blind": blind,
    }
    if probe.other_target is not None:
        other = _explain(explainer, probe, list(range(n)), target=probe.other_target)
        between = p.dissimilarity(first[:n], other)
        out["target_sensitivity"] = p.target_sensitivity(between, repeated[:n])  # same seed: noise cancels
        out["target_moved_least"] = float(between.min())
    if effects is not None:
        out |= effect_merit(explainer, probe, effects)
    return out


def effect_merit(explainer: Explainer, probe: Probe, effects: ClassEffects) -> dict[str, object]:
    """The explainer's maps of all the probe's samples against the model's ``effects``
    per feature group: ``truth_sign`` for a signed map (one-sided where the effects
    agree on one sign only, :func:`~pytest_chaosmining.core.metrics.properties.truth_sign_agreement`)
    and, where it declares completeness, ``completeness`` of its sums against f(x) − f(0)."""
    maps = _explain(explainer, probe, list(range(len(probe.inputs))))
    sums = feature_sums(maps, probe.fingerprint_mask)
    out: dict[str, object] = {}
    if p.is_signed(maps):
        sign = p.truth_sign_agreement(sums, list(effects.truths), one_sided=True)
        if sign is not None:
            out["truth_sign"] = sign
            out["truth_sign_counted"] = p.counted_signs(list(effects.truths))
    if explainer.completeness:
        out["completeness"] = p.completeness_fit(sums.sum(axis=1), effects.change)
    return out


def agreement_with(explainer: Explainer, reference: Explainer, probe: Probe) -> dict[str, object]:
    """How well ``explainer``'s maps of the probe's samples agree with ``reference``'s
    (the method it declares it implements): ``equivalence`` and the sample furthest apart,
    each explainer's noise measured between two seeds."""
    index = list(range(len(probe.inputs)))
    mine, theirs = _explain(explainer, probe, index), _explain(reference, probe, index)
    noise = np.maximum(
        p.dissimilarity(mine, _explain(explainer, probe, index, seed=1)),
        p.dissimilarity(theirs, _explain(reference, probe, index, seed=1)),
    )
    apart = p.dissimilarity(mine, theirs)
    worst = int(np.argmax(apart))
    return {
        "equivalence": p.equivalence(apart, noise),
        "apart_most": f"sample {worst} (1 - cosine {apart[worst]:.2e}; mean {apart.mean():.2e}, their mean noise "
        f"{noise.mean():.2e})",
    }


def fingerprint_noise(explainer: Explainer, probe: Probe) -> DrawNoise:
    """How well two of the explainer's own draws of the probe's maps agree, as the
    drift check compares maps (:func:`~pytest_chaosmining.core.metrics.drift.map_agreement`
    of their fingerprints): the least mean agreement and the least one sample's
    agreement between any two of 16 draws (8 copies of each sample in one batch, under
    two seeds: a few draws miss a sampler's rare ones, and the drift a reseed causes
    then exceeds them many times); 1 and 1 for a deterministic explainer."""
    n, mask = len(probe.inputs), probe.fingerprint_mask
    draws = []
    for seed in NOISE_SEEDS:
        copies = _explain(explainer, probe, list(range(n)) * NOISE_COPIES, seed=seed)
        draws += [copies[i * n : (i + 1) * n] for i in range(NOISE_COPIES)]
    prints = [fingerprint_of(d, mask) for d in draws]
    pairs = [map_agreement(a, b) for i, a in enumerate(prints) for b in prints[i + 1 :]]
    outlines = [outline(d) for d in draws]
    changes = [1.0 - outline_change(a, b).kept for i, a in enumerate(outlines) for b in outlines[i + 1 :]]
    signs = [s for s in (p.signs for p in pairs) if s is not None]
    return DrawNoise(
        min(p.mean for p in pairs), min(p.least for p in pairs), max(changes), min(signs) if signs else 1.0
    )


def _measurement_key(
    check: str, run: RunView, case: CaseT, model: torch.nn.Module, samples: int | list[int]
) -> dict[str, object]:
    """What a built-in's measurement of ``check`` on ``case``'s trained ``model`` depends
    on, beside the explainer's code: the key its result is reused under."""
    return {
        "check": check,
        "version": PROBE_VERSION,
        "model": getattr(case, "training_config")(run.runtime.device.type),
        "weights": weights_digest(model),
        "samples": samples,
    }


def is_first_case(run: RunView, suite: ModelSuite[CaseT, ModelT], case: CaseT) -> bool:
    """Whether ``case`` is the first case of the run's plan of ``suite`` (whatever the
    shard: every shard agrees), where the checks that need one case run once."""
    plan = suite.plan(run)
    return bool(plan) and plan[0].id == case.id


def own_merit_rotation(run: RunView, suite: ModelSuite[CaseT, ModelT]) -> Rotation:
    """The cases of ``suite`` its own-merit checks run on in this run
    (:class:`~pytest_chaosmining.verdict.rotation.Rotation`: against the run's baseline,
    or every case under ``--chaosmining-own-merit all``)."""
    planned = cast("Sequence[RecordedCase]", suite.plan(run))  # a model suite plans recorded cases
    plan = [case_identity(c.model_id, c.seed, c.case_fields()) for c in planned]
    baseline = run.judge.baseline
    rotation_records = baseline.rotation_records if baseline is not None else None
    return Rotation.of(plan, rotation_records, suite.name, run.plan.settings.own_merit == "all")


def own_merit_checks(
    run: RunView,
    suite: ModelSuite[CaseT, ModelT],
    case: CaseT,
    explainer_name: str,
    node: pytest.Item,
    record: Recorder,
    what: str,
) -> list[Check]:
    """On the suite's own-merit cases (:func:`own_merit_rotation`), the judged checks of
    the explainer's own merit with the suite's bars and messages that name the property,
    the sample and by how much, and where the rotation stands (:data:`ROTATION`);
    elsewhere none."""

    rotation = own_merit_rotation(run, suite)
    here = case_identity(case.model_id, case.seed, case.case_fields())
    if here not in rotation.checked:
        return []
    explainer = run.explainers[explainer_name]
    trained = suite.model(run, case)
    probe = suite.probe(trained, EFFECT_SAMPLES)
    key = _measurement_key("own_merit", run, case, trained.model, [PROBE_SAMPLES, EFFECT_SAMPLES])
    effects = model_effects(run, suite, probe, key) if probe.other_target is not None else None
    with explainer_failures(node.config):
        values = run.results.evaluated(suite.name, key, explainer, lambda: measured_merit(explainer, probe, effects))
    bars, tier = run.judge.thresholds, run.plan.tier
    noise = (
        f"its own noise: draws agree to {number(values, 'self_agreement'):.4f} ({values['noise_source']})"
        if values[NOISE_SOURCE] != "none"
        else "it is deterministic: nothing may move beyond float rounding"
    )
    blind = " every sample got the same map;" if values["sample_blind"] else ""
    sampler = judged_as_sampler(run, suite.name, explainer_name, values[NOISE_SOURCE])
    n = len(probe.inputs)
    messages = {
        "batch_consistency": f"batch consistency (a sample's map must not depend on the other samples of its "
        f"batch):{blind} {values['moved_most']}; {noise}",
        "target_sensitivity": "target sensitivity (the map asked for another class, whose logit differs, must "
        f"differ): share of {n} samples whose maps differ; the closest pair at 1 - cosine "
        f"{number(values, 'target_moved_least') if 'target_moved_least' in values else 0.0:.2e}",
        "truth_sign": "signs (a signed map gives each feature the sign of its effect on the class's logit, where "
        f"its gradient, its path from zero and its ablation agree): share of agreeing signs over {n} samples, "
        f"{values.get('truth_sign_counted')} counted",
        "completeness": "completeness (it declares it: its sums are f(x) - f(0) of the class's logit): 1 - mean "
        f"|sum of attributions - (f(x) - f(0))| / mean |f(x) - f(0)| over {n} samples",
    }
    checks: list[Check] = [
        (
            record(metric, number(values, metric)),
            bars.optional_metric(suite.name, tier, metric, "default", explainer_name, stochastic=sampler),
            f"{what}: {message}",
        )
        for metric, message in messages.items()
        if metric in values
    ]
    if explainer.same_as is not None:
        checks += _equivalence_check(run, suite, explainer, probe, key, record, what)
    run.judge.record(node, record("self_agreement", number(values, "self_agreement")))
    run.judge.record(node, record(ROTATION, float(here == rotation.moved_to)))
    return checks


def judged_as_sampler(run: RunView, suite: str, explainer: str, noise_source: object) -> bool:
    """Whether ``explainer``'s results in ``suite`` get the samplers' bars (``sampler_default``):
    only for noise its draws show here (``noise_source``: where it showed, ``none`` or None where
    none was measured), never for a declaration, nor for noise its baseline's run lacked."""
    baseline = run.judge.baseline
    steady = baseline is not None and baseline.was_deterministic(suite, explainer)
    return noise_source not in (None, "none") and not steady


def model_effects(run: RunView, suite: ModelSuite[CaseT, ModelT], probe: Probe, key: dict[str, object]) -> ClassEffects:
    """The model's :class:`~.class_effects.ClassEffects` on a classifier's probe, computed
    once per model (the derived-results cache, under the probe's ``key``)."""

    target, mask = probe.target, probe.fingerprint_mask
    assert isinstance(target, torch.Tensor) and mask is not None

    def compute() -> dict[str, list[object]]:
        found = class_effects(probe.model, probe.inputs, target, mask, probe.guard)
        return {"truths": [t.tolist() for t in found.truths], "change": found.change.tolist()}

    stored = run.results.reused(suite.name, {**key, "check": "class_effects"}, compute)
    gradient, path, ablation = (np.asarray(t, dtype=np.float64) for t in stored["truths"])
    return ClassEffects((gradient, path, ablation), np.asarray(stored["change"], dtype=np.float64))


def _equivalence_check(
    run: RunView,
    suite: ModelSuite[CaseT, ModelT],
    explainer: Explainer,
    probe: Probe,
    key: dict[str, object],
    record: Recorder,
    what: str,
) -> list[Check]:
    """The check that ``explainer`` agrees with the explainer it declares it implements
    (none where that one does not apply)."""
    same, name = explainer.same_as, str(explainer.same_as)
    if isinstance(same, Explainer):
        reference: Explainer | None = same
    else:
        reference = run.explainers.get(name) or run.explainers.registered.get(name) or named(name)
    if reference is None:
        raise ValueError(
            f"explainer {explainer.name!r} declares same_as={name!r}, which is not a registered "
            f"explainer ({sorted(run.explainers.registered)})"
        )
    with explainer_failures():
        try:
            found = run.results.evaluated(
                suite.name,
                {**key, "check": "equivalence", "reference": reference.name},
                explainer,
                lambda: agreement_with(explainer, reference, probe),
            )
        except ExplainerNotApplicable:  # the reference does not apply here: nothing to compare
            return []
    return [
        (
            record("equivalence", number(found, "equivalence")),
            run.judge.thresholds.optional_metric(suite.name, run.plan.tier, "equivalence", "default", explainer.name),
            f"{what}: declared equivalence (it declares it implements {reference.name}; their maps must agree "
            f"within {NOISE_FACTOR:g} x their own noise): furthest apart {found['apart_most']}",
        )
    ]


def drift_noise(
    run: RunView, suite: ModelSuite[CaseT, ModelT], case: CaseT, explainer_name: str
) -> Callable[[], DrawNoise]:
    """A call measuring how well two of the explainer's own draws of ``case``'s
    fingerprinted samples agree (:func:`fingerprint_noise`), for the drift check: the same
    samples the drift compares (a probe of the first 4 showed no noise where a reseed moved
    later samples' maps far).  A built-in's is reused from the derived-results cache."""

    def measure() -> DrawNoise:
        explainer = run.explainers[explainer_name]
        trained = suite.model(run, case)
        key = _measurement_key("drift_noise", run, case, trained.model, NOISE_SAMPLES)
        return run.results.evaluated(
            suite.name,
            key,
            explainer,
            lambda: fingerprint_noise(explainer, suite.probe(trained, NOISE_SAMPLES)),
            (DrawNoise,),
        )

    return measure


def retargeting(run: RunView, suite: ModelSuite[CaseT, ModelT], case: CaseT, explainer_name: str) -> Retargeting:
    """How the drift check asks the explainer again for another target of some of
    ``case``'s explained samples (the probe's first samples are the explained ones, in
    order), to tell a wrong target from another change (no classes where the suite's
    models do not classify)."""

    @functools.cache  # one probe per size: a target asked of several samples builds it once
    def probe_of(samples: int) -> Probe:
        return suite.probe(suite.model(run, case), samples)

    def maps(rows: Sequence[int], target: int) -> Fingerprint:
        probe = probe_of(max(rows) + 1)
        with explainer_failures():
            found = _explain(run.explainers[explainer_name], probe, list(rows), target=target)
        return fingerprint_of(found, probe.fingerprint_mask)

    def classes() -> int:
        probe = probe_of(1)
        if probe.other_target is None:  # not a classifier
            return 0
        with torch.no_grad(), probe.guard():
            return int(probe.model(probe.inputs).shape[-1])

    return Retargeting(maps, classes)
