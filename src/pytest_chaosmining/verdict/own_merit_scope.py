"""Where a run's own-merit checks went: they run on each suite's rotating cases
(:mod:`~pytest_chaosmining.verdict.rotation`), so a run that deselects them judges none
of them, and says so rather than dropping them silently."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.verdict.rotation import PROBE_CHECK


def own_merit_not_run(
    tests: Mapping[str, tuple[str, str, str]], records: Iterable[Record], suites: Iterable[str], control: str
) -> list[str]:
    """One note per suite of ``suites`` (those that run own-merit checks) whose explainers'
    tests ran (``tests``: node id → suite, explainer, outcome) but that recorded no
    :data:`~pytest_chaosmining.verdict.rotation.PROBE_CHECK`: its own-merit cases did not run."""
    ran = {suite for suite, explainer, _ in tests.values() if explainer not in (MODEL_LEVEL, control)}
    probed = {r.suite for r in records if r.metric == PROBE_CHECK}
    return [
        f"chaosmining: {suite}'s checks of an explainer's own merit (batch consistency, target sensitivity, "
        "signs, completeness) run on its own-merit cases (docs/properties.md), which this run did not run "
        "(deselected): none was judged in this run"
        for suite in sorted(set(suites) & ran - probed)
    ]
