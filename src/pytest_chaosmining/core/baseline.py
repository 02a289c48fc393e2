"""Regression checks against the results.json of an earlier run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.results import HIGHER_IS_BETTER, Record

#: cost metrics gated against a baseline → the growth always allowed on top of the factor
#: (below it a single-round timing or a page-resolution memory reading is noise)
COST_SLACK = {"time_ms": 20.0, "peak_mem_mb": 16.0}


class Baseline:
    """Values of an earlier report, looked up by :meth:`Record.key`."""

    def __init__(self, records: list[Record], source: str):
        self.values = {r.key(): r.value for r in records if r.metric in HIGHER_IS_BETTER}
        self.costs = {r.key(): r.value for r in records if r.metric in COST_SLACK}
        self.source = source

    @classmethod
    def load(cls, path: Path) -> "Baseline":
        """Read a results.json written by this plugin."""
        try:
            payload: dict[str, Any] = json.loads(Path(path).read_text())
            records = [Record.from_dict(r) for r in payload["records"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"cannot read chaosmining baseline {path}: {exc}") from exc
        return cls(records, str(path))

    def coverage(self, records: list[Record]) -> tuple[int, int]:
        """``(compared, judged)``: how many of the judged records (with a threshold,
        of a metric where higher is better) have a value in this baseline."""
        judged = [r for r in records if r.threshold is not None and r.metric in HIGHER_IS_BETTER]
        return sum(r.key() in self.values for r in judged), len(judged)

    def regression(self, record: Record, max_drop: float) -> str | None:
        """A message if ``record`` fell more than ``max_drop`` below the baseline, else None."""
        old = self.values.get(record.key())
        if old is None or record.value >= old - max_drop:
            return None
        return (
            f"{record.metric} regressed: {record.value:.4f} < baseline {old:.4f} - max drop {max_drop:g} "
            f"(drop {old - record.value:.4f}; baseline {self.source})"
        )

    def cost_regression(self, record: Record, max_factor: float) -> str | None:
        """A message if ``record`` (a time or peak memory) grew beyond ``max_factor`` ×
        the baseline's value plus the metric's :data:`COST_SLACK`, else None."""
        old = self.costs.get(record.key())
        if old is None or record.metric not in COST_SLACK:
            return None
        allowed = max_factor * old + COST_SLACK[record.metric]
        if record.value <= allowed:
            return None
        unit = "ms" if record.metric == "time_ms" else "MiB"
        return (f"{record.metric} regressed: {record.value:.1f} {unit} > {max_factor:g} × baseline {old:.1f} {unit} + "
                f"{COST_SLACK[record.metric]:g} {unit} ({record.value / old if old else float('inf'):.2f}× the "
                f"baseline; baseline {self.source})")
