"""A scorecard per explainer: per suite, its judged checks passed and failed, its
smallest margin to a bar (and where), its attribution time relative to SA's, and
with a baseline the mean change of its judged values against it."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers import CONTROL_NAME
from pytest_chaosmining.reports.tables import explainer_order, markdown_table

#: the explainer every other one's cost is compared with
COST_REFERENCE = "SA"


@dataclass(frozen=True)
class SuiteLine:
    """One explainer in one suite."""

    suite: str
    judged: int
    failed: int
    closest: tuple[float, str] | None  # smallest margin value - bar, and the check it belongs to
    time_ratio: float | None  # mean attribution time / SA's in the same suite
    change: float | None  # mean change of its judged values against the baseline

    def cells(self) -> list[str]:
        """The line's cells as the Markdown and HTML tables show them."""
        closest = "—" if self.closest is None else f"{self.closest[0]:+.3f} ({self.closest[1]})"
        ratio = "—" if self.time_ratio is None else f"{self.time_ratio:.2f}×"
        change = "—" if self.change is None else f"{self.change:+.4f}"
        return [self.suite, str(self.judged), str(self.failed), closest, ratio, change]


HEADS = ["suite", "judged checks", "failed checks", "smallest margin (check)", "time vs SA", "change vs baseline"]


def _mean_time(records: Sequence[Record], suite: str, explainer: str) -> float | None:
    times = [r.value for r in records if (r.suite, r.explainer, r.metric) == (suite, explainer, "time_ms")]
    times = [t for t in times if math.isfinite(t)]
    return statistics.fmean(times) if times else None


def _where(record: Record) -> str:
    """The case of a record as its test id names it (``RBRP-42px-small_cnn-e16-SA-s0``), else its model."""
    if "[" in record.nodeid:
        return record.nodeid.rsplit("[", 1)[-1].rstrip("]")
    return record.model


def _changes(baseline: object) -> dict[tuple[str, str], list[float]]:
    """(suite, explainer) → changes of its judged values against the baseline (the report's baseline rows)."""
    out: dict[tuple[str, str], list[float]] = {}
    rows = baseline.get("rows", []) if isinstance(baseline, Mapping) else []
    for suite, _model, explainer, _metric, _condition, _seed, value, old in rows:
        if isinstance(value, int | float) and isinstance(old, int | float):
            out.setdefault((suite, explainer), []).append(value - old)
    return out


def scorecards(records: Sequence[Record], baseline: object = None) -> dict[str, list[SuiteLine]]:
    """explainer → a line per suite where it has judged checks (the random control left out)."""
    judged = [r for r in records if r.threshold is not None and r.explainer not in (MODEL_LEVEL, CONTROL_NAME)]
    changes = _changes(baseline)
    cards: dict[str, list[SuiteLine]] = {}
    for explainer in explainer_order(r.explainer for r in judged):
        lines = []
        for suite in dict.fromkeys(r.suite for r in judged if r.explainer == explainer):
            mine = [r for r in judged if (r.suite, r.explainer) == (suite, explainer)]
            margins = [
                (r.value - float(r.threshold), f"{r.metric}, {_where(r)}")
                for r in mine
                if r.threshold is not None and math.isfinite(r.value) and math.isfinite(float(r.threshold))
            ]
            own, reference = _mean_time(records, suite, explainer), _mean_time(records, suite, COST_REFERENCE)
            change = changes.get((suite, explainer))
            lines.append(
                SuiteLine(
                    suite,
                    len(mine),
                    sum(1 for r in mine if r.passed is False and not r.expected),
                    min(margins) if margins else None,
                    own / reference if own is not None and reference else None,
                    statistics.fmean(change) if change else None,
                )
            )
        cards[explainer] = lines
    return cards


def scorecard_markdown(records: Sequence[Record], baseline: object = None) -> list[str]:
    """The scorecards as a Markdown section: a table per explainer."""
    cards = scorecards(records, baseline)
    if not cards:
        return []
    lines = [
        "## Scorecards",
        "",
        "Per explainer and suite: its judged checks and how many failed, its smallest margin to a bar "
        "(value − bar, negative: failed) and the check it belongs to, its mean attribution time relative to "
        f"{COST_REFERENCE}'s in the same suite, and with a baseline the mean change of its judged values.",
        "",
    ]
    for explainer, card in cards.items():
        lines += [f"### {explainer}", ""] + markdown_table(HEADS, [line.cells() for line in card]) + [""]
    return lines
