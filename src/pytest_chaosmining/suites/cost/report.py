"""The cost suite's records go into the report's attribution-cost table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_chaosmining.core.results import Record




def sections(df: Any) -> list[str]:
    """The suite has no section of its own (its timings are in the cost table)."""
    return []


def figures(records: list[Record], out_dir: Path) -> list[Path]:
    """The suite has no figure of its own."""
    return []
