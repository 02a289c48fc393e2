"""BAM suite (shipped with pytest-chaosmining).

Parametrised over model set (sizes × seed) × explainer; see
``pytest_chaosmining.suites.bam.spec`` for the models and checks and the
``[bam.<tier>]`` sections of ``thresholds.toml``.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer
from pytest_chaosmining.suites.bam.suite import BamSuite, judge_premise

BAM = BamSuite()


def test_relative_importance(chaosmining, bam_case, request):
    """The premise of MCS and IDR holds on our models: f_o and f_s clear the
    quality gate; removing the object brings f_o near chance and leaves f_s's
    accuracy; removing the scene brings f_s near chance and leaves f_o's."""
    judge_premise(chaosmining, BAM, bam_case, request.node)


def test_bam_scores(chaosmining, bam_case, explainer_name, chaosmining_benchmark, request):
    """MCS above its random-region baseline by ``[…mcs_gain]`` and, where the
    table lists the explainer, IDR above its baseline by ``[…idr_gain]``; IIR
    and the MCS_k series are recorded."""
    judge_explainer(chaosmining, BAM, bam_case, explainer_name, chaosmining_benchmark, request.node)
