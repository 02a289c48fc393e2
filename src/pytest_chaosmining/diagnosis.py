"""What is wrong with an explainer's maps, for its failure message.

:func:`~pytest_chaosmining.explainers.attribute` notes degenerate maps (all
zeros, constant across features, identical for every sample) per explainer; the
judge adds the notes to a failure of that explainer's test.  Notes are per
process and cleared when a test of the explainer starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

_NOTES: dict[str, list[str]] = {}


def describe(attributions: torch.Tensor) -> str | None:
    """What is degenerate about a batch of maps (one row per sample), or None."""
    flat = attributions.detach().reshape(attributions.shape[0], -1) if attributions.dim() > 1 \
        else attributions.detach().reshape(1, -1)
    if flat.numel() == 0:
        return None
    if not bool(flat.any()):
        return "all zeros"
    if flat.shape[1] > 1 and bool((flat == flat[:, :1]).all()):
        return "constant across features in every sample (every feature tied)"
    if flat.shape[0] > 1 and bool((flat == flat[:1]).all()):
        return "identical for every sample (it ignores the input)"
    return None


def note(explainer: str, attributions: torch.Tensor) -> None:
    """Remember what is degenerate about ``explainer``'s maps, if anything."""
    text = describe(attributions)
    if text is not None and text not in _NOTES.setdefault(explainer, []):
        _NOTES[explainer].append(text)


def notes(explainer: str) -> list[str]:
    """The notes on ``explainer``'s maps since its current test started."""
    return list(_NOTES.get(explainer, []))


def clear(explainer: str) -> None:
    """Forget the notes on ``explainer`` (a new test of it starts)."""
    _NOTES.pop(explainer, None)
