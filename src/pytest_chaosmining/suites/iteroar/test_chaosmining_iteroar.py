"""IteROAR suite (shipped with pytest-chaosmining).

Parametrised over chain setting (vision condition × fill × seed) × explainer;
see ``pytest_chaosmining.suites.iteroar.spec`` for the chains and checks and the
``[iteroar.<tier>]`` sections of ``thresholds.toml``.
"""

from __future__ import annotations

from pytest_chaosmining.suite_kit.judging import judge_explainer
from pytest_chaosmining.suites.iteroar.suite import IteroarSuite, judge_reference

ITEROAR = IteroarSuite()


def test_reference_chain(chaosmining, iteroar_case, request):
    """The reference chain (uniformly random removal) runs; f_0 has learned."""
    judge_reference(chaosmining, ITEROAR, iteroar_case, request.node)


def test_salient_removal(chaosmining, iteroar_case, explainer_name, chaosmining_benchmark, request):
    """Removing what the explainer marks costs more accuracy than removing random
    pixels (by at least ``drop_gain``), and the first mask falls on the true
    box more with f_0's maps than with the untrained model's (``training_gain``:
    a map that ignores the model, such as an edge detector, gains nothing).
    MAMO is reported, not judged: with zero fill DL, IG and FA score 0 by
    construction, and with mean fill no method stays near 0 (docs/suites.md)."""
    judge_explainer(chaosmining, ITEROAR, iteroar_case, explainer_name, chaosmining_benchmark, request.node)
