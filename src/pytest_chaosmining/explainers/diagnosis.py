"""What is wrong with an explainer's maps, for its failure message.

:func:`~pytest_chaosmining.explainers.attribute` notes degenerate maps (all
zeros, constant across features, identical for every sample) per explainer; the
judge adds the notes to a failure of that explainer's test.  The notes live in
the session's :class:`MapNotes`, which the session's explainers carry; a test of
an explainer starts with its notes cleared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def describe(attributions: torch.Tensor) -> str | None:
    """What is degenerate about a batch of maps (one row per sample), or None."""
    flat = (
        attributions.detach().reshape(attributions.shape[0], -1)
        if attributions.dim() > 1
        else attributions.detach().reshape(1, -1)
    )
    if flat.numel() == 0:
        return None
    if not bool(flat.any()):
        return "all zeros"
    if flat.shape[1] > 1 and bool((flat == flat[:, :1]).all()):
        return "constant across features in every sample (every feature tied)"
    if flat.shape[0] > 1 and bool((flat == flat[:1]).all()):
        return "identical for every sample (it ignores the input)"
    return None


class MapNotes:
    """What was degenerate about each explainer's maps since its current test started."""

    def __init__(self) -> None:
        self._notes: dict[str, list[str]] = {}

    def note(self, explainer: str, attributions: torch.Tensor) -> None:
        """Remember what is degenerate about ``explainer``'s maps, if anything."""
        text = describe(attributions)
        if text is not None and text not in self._notes.setdefault(explainer, []):
            self._notes[explainer].append(text)

    def notes(self, explainer: str) -> list[str]:
        """The notes on ``explainer``'s maps since its current test started."""
        return list(self._notes.get(explainer, []))

    def clear(self, explainer: str) -> None:
        """Forget the notes on ``explainer`` (a new test of it starts)."""
        self._notes.pop(explainer, None)
