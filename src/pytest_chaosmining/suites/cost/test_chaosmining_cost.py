"""ChaosMining cost suite (ChaosMining Figure 5): time, peak memory, consistency
and convergence of each explainer on one symbolic model.

The timing goes through pytest-benchmark's ``benchmark`` fixture, five rounds
after a warm-up (``--benchmark-only`` runs it, ``--benchmark-json`` /
``--benchmark-autosave`` carry it, with the suite, case, explainer and peak
memory in ``extra_info``).  Where the fixture is disabled or absent
(``--benchmark-disable``, ``--benchmark-skip``, ``-p no:benchmark``, or under
xdist with pytest-benchmark's own warning) the rounds are timed by hand.  Records, never asserts, these values; with
``--chaosmining-baseline`` the time and memory are gated against the baseline's.
"""

from __future__ import annotations

from pytest_chaosmining.suites.cost.suite import CostSuite

COST = CostSuite()
ROUNDS = 5


def test_attribution_cost(chaosmining, explainer_name, chaosmining_benchmark, request):
    """Time and memory of one attribution of the whole test set, and the
    consistency of its maps (recorded in the report, gated only against a baseline)."""
    COST.judge_cost(chaosmining, explainer_name, chaosmining_benchmark, request.node, ROUNDS)


def test_convergence(chaosmining, explainer_name, request):
    """FPrec of the explainer on snapshots of the model over its training, and the
    area under that curve per epoch (recorded; the report normalises it to SA)."""
    COST.record_convergence(chaosmining, explainer_name, request.node)
