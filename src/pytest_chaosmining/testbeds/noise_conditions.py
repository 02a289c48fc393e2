"""The ChaosMining noise conditions the vision and audio data share: background
(RB random, SB structural) × foreground position (FP fixed, RP random), and the splits."""

from __future__ import annotations

BACKGROUNDS = ("RB", "SB")
POSITIONS = ("FP", "RP")
CONDITIONS = tuple(b + p for b in BACKGROUNDS for p in POSITIONS)
SPLITS = ("train", "val")


def check_condition_and_split(condition: str, split: str) -> None:
    """ValueError unless ``condition`` is one of :data:`CONDITIONS` and ``split`` one of :data:`SPLITS`."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition must be one of {CONDITIONS}, got {condition!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
