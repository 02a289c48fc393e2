"""Which cases of a suite its own-merit checks run on: a rotation each baseline steps.

Without a baseline they run on the plan's first case.  Against a baseline they run on
the case its rotation last moved to (its :data:`ROTATION` record 1) and on the next one
in the plan, wrapping: the baseline's own-merit results are judged again, and a run
whose results become the next baseline has moved them one case on, so that every case
is checked within as many baseline generations as the suite has cases.  The case a
baseline only carried (its :data:`ROTATION` record 0) is left behind: its own-merit
results are not missing (:meth:`Rotation.carried_by`).  ``--chaosmining-own-merit all``
checks every case.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_chaosmining.core.records import Record

#: the record of where the rotation stands on an explainer's own-merit case: 1 the case it
#: moved to in this run, 0 one it carried from the baseline (or checked under ``all``)
ROTATION = "own_merit_rotation"
#: the own-merit check every suite that has them records on each of its own-merit cases
PROBE_CHECK = "batch_consistency"

#: a case as records name it: its model, seed and fields (json)
CaseIdentity = tuple[str, int, str]


def case_identity(model: str, seed: int, fields: Mapping[str, object]) -> CaseIdentity:
    """The identity of a case that its records share."""
    return (model, seed, json.dumps(dict(fields), sort_keys=True))


def record_case(record: Record) -> CaseIdentity:
    """The identity of the case ``record`` was measured on."""
    return case_identity(record.model, record.seed, record.case)


@dataclass(frozen=True)
class Rotation:
    """Where a suite's own-merit checks run: ``checked`` (every case they run on) and
    ``moved_to`` (the one this run's rotation moved to: its :data:`ROTATION` record is 1)."""

    checked: frozenset[CaseIdentity]
    moved_to: CaseIdentity | None

    @staticmethod
    def of(plan: Sequence[CaseIdentity], baseline: Iterable[Record] | None, suite: str, every: bool) -> Rotation:
        """The rotation of ``suite``'s ``plan`` against ``baseline``'s records (None: none);
        ``every``: all cases checked, the rotation stepped as it would be."""
        if not plan:
            return Rotation(frozenset(), None)
        last = _last_moved_to(plan, [r for r in baseline or () if r.suite == suite])
        if last is None:
            moved_to, kept = plan[0], plan[0]
        else:
            kept = last
            moved_to = plan[(plan.index(last) + 1) % len(plan)]
        checked = frozenset(plan) if every else frozenset({kept, moved_to})
        return Rotation(checked, moved_to)

    @staticmethod
    def carried_by(records: Iterable[Record]) -> frozenset[tuple[str, str, CaseIdentity]]:
        """The (suite, explainer, case) a run's own-merit checks only carried (its
        :data:`ROTATION` record 0): a later run's rotation may leave them behind."""
        return frozenset(
            (r.suite, r.explainer, record_case(r)) for r in records if r.metric == ROTATION and not r.value
        )


def _last_moved_to(plan: Sequence[CaseIdentity], records: list[Record]) -> CaseIdentity | None:
    """The planned case a baseline's rotation last moved to; for a baseline older than the
    rotation, the first planned case it ran own-merit checks on; None where it has none."""
    moved = {record_case(r) for r in records if r.metric == ROTATION and r.value}
    checked = moved or {record_case(r) for r in records if r.metric == PROBE_CHECK}
    return next((case for case in plan if case in checked), None)
