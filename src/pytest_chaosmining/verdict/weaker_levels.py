"""A declared weaker level must still reject the random control: a level the control reaches
on the same case judges nothing (a verdict is only as good as what it rejects)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.explainers.contract import Explainer
from pytest_chaosmining.explainers.limitations import known_limitation


def _case_of(record: Record) -> tuple[object, ...]:
    return record.suite, record.model, json.dumps(record.case, sort_keys=True), record.seed, record.metric


def levels_the_control_reaches(
    records: Sequence[Record], explainers: Mapping[str, Explainer], control: str
) -> list[str]:
    """One line per check judged at an explainer's declared weaker level (its floor, below the
    shared bar) where the ``control`` explainer's result on the same model, case and seed
    reaches that level: the declaration admits random maps there, so the run fails."""
    controls = {_case_of(r): r.value for r in records if r.explainer == control}
    lines = []
    for record in records:
        explainer = explainers.get(record.explainer)
        if explainer is None or not explainer.known or record.threshold is None or record.explainer == control:
            continue
        known = known_limitation(explainer.known, record.suite, record.metric, record.case)
        if known is None or not known.weaker or record.threshold != known.floor:
            continue
        reached = controls.get(_case_of(record))
        if reached is not None and reached >= known.floor:
            lines.append(
                f"explainer {record.explainer!r} declares {record.metric} on {known.where} weaker, judged at "
                f"{known.floor:.4f} ({', '.join(known.references)}), and the random control scores {reached:.4f} "
                f"there ({record.nodeid}): a level the control reaches rejects nothing; raise the floor above the "
                "control's or drop the declaration"
            )
    return lines
