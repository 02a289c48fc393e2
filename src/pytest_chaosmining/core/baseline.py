"""Regression checks against the results.json of an earlier run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.results import HIGHER_IS_BETTER, Record


class Baseline:
    """Values of an earlier report, looked up by :meth:`Record.key`."""

    def __init__(self, records: list[Record], source: str):
        self.values = {r.key(): r.value for r in records if r.metric in HIGHER_IS_BETTER}
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
