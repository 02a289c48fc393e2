"""Figure helpers the suites' report modules share (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from pytest_chaosmining.core.records import Record

#: ``--chaosmining-figures``: only the figures a failure needs (the default); every figure; every
#: figure, the example figures drawn again from the trained models
NEEDED, EVERY, FROM_MODELS = "needed", "all", "models"

#: draws a figure of some records into a path; False when there is nothing to draw
Draw = Callable[[list["Record"], Path], bool]


def headless() -> ModuleType:
    """matplotlib on the headless Agg backend (:mod:`.plotting`: ``plt``, ``Patch``),
    imported with the first figure drawn."""
    from pytest_chaosmining.reports import plotting

    return plotting


def pyplot() -> ModuleType:
    """matplotlib's pyplot on the headless Agg backend."""
    plt: ModuleType = headless().plt
    return plt


def save(fig: Figure, path: Path, dpi: int = 100, rect: tuple[float, float, float, float] = (0, 0, 1, 1)) -> bool:
    """Lay out (within ``rect`` of the figure: room for a figure legend), write and
    close ``fig``; True (a drawing function's "drawn")."""
    fig.tight_layout(rect=rect)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return True


def drawn(records: list[Record], out_dir: Path, figures: dict[str, Draw]) -> list[Path]:
    """Draw each of ``figures`` (file name → drawing function) into ``out_dir``; the paths drawn."""
    return [out_dir / name for name, draw in figures.items() if draw(records, out_dir / name)]
