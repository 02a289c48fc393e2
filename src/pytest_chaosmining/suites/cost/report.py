"""The cost suite's records go into the report's attribution-cost table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_chaosmining.reports.figures import Draw
from pytest_chaosmining.core.results import Record




def sections(df: Any) -> list[str]:
    """The suite has no section of its own (its timings are in the cost table)."""
    return []


#: the suite's figures: none of its own
FIGURES: dict[str, Draw] = {}
