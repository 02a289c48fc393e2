"""BAM suite (shipped with pytest-chaosmining).

Parametrised over model set (sizes × seed) × explainer; see
``pytest_chaosmining.suites.bam.suite`` and the ``[bam.<tier>]`` sections of
``thresholds.toml``.
"""

from __future__ import annotations

import pytest

from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record
from pytest_chaosmining.judge import explainer_failures
from pytest_chaosmining.suites.bam.suite import SUITE, BamSuite, relative_importance

BAM = BamSuite()


def _record(case, explainer: str, metric: str, value: float, **extra) -> Record:
    return Record(SUITE, case.model_id, explainer, case.seed, metric, float(value), {**case.case_fields(), **extra})


def _section(chaosmining) -> dict:
    return chaosmining.thresholds.section(SUITE, chaosmining.settings.tier)


def _premise(chaosmining, models) -> list[str]:
    section = _section(chaosmining)
    gate = float(section["quality_gate"])
    low = [
        f"{name} accuracy {models.accuracy[f'{name}/images']:.3f} < gate {gate:.3f}"
        for name in ("f_o", "f_s")
        if models.accuracy[f"{name}/images"] < gate
    ]
    return low + relative_importance(models, float(section["chance_margin"]), float(section["keep_margin"]))


def test_relative_importance(chaosmining, bam_case, request):
    """The premise of MCS and IDR holds on our models: f_o and f_s clear the
    quality gate; removing the object brings f_o near chance and leaves f_s's
    accuracy; removing the scene brings f_s near chance and leaves f_o's."""
    node, models = request.node, BAM.models(chaosmining, bam_case)
    for key, value in models.accuracy.items():
        model, version = key.split("/")
        chaosmining.judge.record(node, _record(bam_case, MODEL_LEVEL, "accuracy", value, role=model, version=version))
    for k, drop in models.cf_drop.items():
        chaosmining.judge.record(node, _record(bam_case, MODEL_LEVEL, "cf_drop", drop, k=k))
    for role, seconds in models.train_seconds.items():
        chaosmining.judge.record(node, _record(bam_case, MODEL_LEVEL, "train_seconds", seconds, role=role))
    violations = _premise(chaosmining, models)
    chaosmining.judge.record(node, _record(bam_case, MODEL_LEVEL, "premise_holds", float(not violations)))
    if violations:
        pytest.fail(f"BAM premise does not hold on {bam_case.id}: " + "; ".join(violations), pytrace=False)


def test_bam_scores(chaosmining, bam_case, explainer_name, chaosmining_benchmark, request):
    """MCS above its random-region baseline by ``[…mcs_gain]`` and, where the
    table lists the explainer, IDR above its baseline by ``[…idr_gain]``; IIR
    and the MCS_k series are recorded."""
    chaosmining.judge.tag_test(request.node, SUITE, explainer_name)
    node, models = request.node, BAM.models(chaosmining, bam_case)
    violations = _premise(chaosmining, models)
    if violations:
        pytest.skip(f"BAM premise does not hold on {bam_case.id}; nothing to score ({'; '.join(violations)})")

    def cost_record(metric: str, value: float) -> Record:
        return _record(bam_case, explainer_name, metric, value)

    with (
        chaosmining.timer(chaosmining_benchmark, SUITE, bam_case.id, explainer_name, record=cost_record) as timer,
        explainer_failures(request.config),
    ):
        out = BAM.score(chaosmining, models, chaosmining.explainers[explainer_name])
    chaosmining.judge.record_costs(node, timer.cost_or(out["cost"]), cost_record)
    for metric in ("mcs", "mcs_baseline", "idr", "idr_baseline", "iir", "iir_pairs", "mcs_k_corr"):
        chaosmining.judge.record(node, _record(bam_case, explainer_name, metric, out[metric]))
    for k, value in out["mcs_k"].items():
        chaosmining.judge.record(node, _record(bam_case, explainer_name, "mcs_k", value, k=k))
    what = f"{explainer_name} on {bam_case.id}"
    name, key = chaosmining.settings.tier, bam_case.key
    checks = [
        (
            _record(bam_case, explainer_name, "mcs_gain", out["mcs"] - out["mcs_baseline"]),
            chaosmining.thresholds.optional_metric(SUITE, name, "mcs_gain", key, explainer_name),
            f"{what}: MCS {out['mcs']:.3f} against the random-region baseline {out['mcs_baseline']:.3f}",
        )
    ]
    idr_bar = chaosmining.thresholds.optional_metric(SUITE, name, "idr_gain", key, explainer_name)
    if idr_bar is not None:
        checks.append(
            (
                _record(bam_case, explainer_name, "idr_gain", out["idr"] - out["idr_baseline"]),
                idr_bar,
                f"{what}: IDR {out['idr']:.3f} against the random-region baseline {out['idr_baseline']:.3f}",
            )
        )
    else:
        chaosmining.judge.record(node, _record(bam_case, explainer_name, "idr_gain", out["idr"] - out["idr_baseline"]))
    chaosmining.judge.require_all(node, checks)
