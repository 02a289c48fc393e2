"""Where the shipped model pack lives (importable without torch)."""

from __future__ import annotations

from pathlib import Path

#: the pack of ready-trained smoke-tier models shipped with the package
SHIPPED = Path(__file__).resolve().parents[2] / "pack"
