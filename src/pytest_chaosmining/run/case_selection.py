"""Which of the planned cases (and explainers on them) the run selected, so that
training and shared work follow ``-k``, ``-m``, node ids and shards."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

C = TypeVar("C")


class CaseSelection:
    """The case ids among the selected tests' parameters, per suite, with their
    explainers; ``explainers_in(suite)``: the suite's explainers in registry order."""

    def __init__(self, explainers_in: Callable[[str], list[str]]):
        self._explainers_in = explainers_in
        self._cases: dict[str, set[str]] = {}
        self._explainers: dict[tuple[str, str], set[str]] = {}
        #: set once pytest has collected and selected the run's tests
        self.collection_done = False

    def note(self, suite: str, params: Mapping[str, object]) -> None:
        """Record the case ids among one selected test's parameters and, with them, its explainer."""
        ids = self._cases.setdefault(suite, set())
        case_ids = [str(getattr(p, "id")) for p in params.values() if isinstance(getattr(p, "id", None), str)]
        ids.update(case_ids)
        explainer = params.get("explainer_name")
        if isinstance(explainer, str):
            for case_id in case_ids:
                self._explainers.setdefault((suite, case_id), set()).add(explainer)

    def cases(self, suite: str, cases: Sequence[C]) -> list[C]:
        """Those of ``cases`` (of ``suite``) whose tests the run selected (all of them
        before collection has finished)."""
        if not self.collection_done:
            return list(cases)
        ids = self._cases.get(suite, set())
        return [c for c in cases if str(getattr(c, "id")) in ids]

    def explainers(self, suite: str, case_id: str) -> list[str]:
        """The explainers of ``suite`` whose tests on case ``case_id`` the run selected
        (all of them before collection has finished), in registry order."""
        names = self._explainers_in(suite)
        if not self.collection_done:
            return list(names)
        chosen = self._explainers.get((suite, case_id), set())
        return [name for name in names if name in chosen]
