"""Files from disk decoded in parallel: a DataLoader's worker processes map a reader
over a list of items (paths, dataset indices), and the results come back in order.

The suites' real data (Speech Commands clips, Rainforest recordings, Flowers102 and
published ChaosMining images) is decoded once into compact in-memory arrays; this is
where the decoding (audio read and resample, JPEG decode and resize) runs side by side.
The reader must be picklable (a module-level function or a ``functools.partial`` of
one) where worker processes are spawned rather than forked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar, cast

from torch.utils import data as torch_data
from torch.utils.data import Dataset

Item = TypeVar("Item")
Out = TypeVar("Out")

#: fewest items worth starting worker processes for
MIN_ITEMS_FOR_WORKERS = 64
#: most decoding worker processes
MAX_WORKERS = 4


def default_workers(n_items: int) -> int:
    """Worker processes for ``n_items``: none for a few items or a single usable core,
    else one per usable core (at most :data:`MAX_WORKERS`; this process only waits);
    ``CHAOSMINING_DECODE_WORKERS`` overrides it."""
    forced = os.environ.get("CHAOSMINING_DECODE_WORKERS")
    if forced is not None:
        return max(0, int(forced))
    if n_items < MIN_ITEMS_FOR_WORKERS:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 0 if cores < 2 else min(MAX_WORKERS, cores)


class _Mapped(Generic[Item, Out]):
    """A map-style dataset: ``read(items[i])``."""

    def __init__(self, items: Sequence[Item], read: Callable[[Item], Out]) -> None:
        self.items, self.read = items, read

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Out:
        return self.read(self.items[i])


def _as_is(sample: Out) -> Out:
    """The DataLoader's collate function: the reader's result, unconverted."""
    return sample


def decode_all(read: Callable[[Item], Out], items: Sequence[Item], workers: int | None = None) -> list[Out]:
    """``[read(item) for item in items]``, in order, decoded by ``workers`` DataLoader
    worker processes (default :func:`default_workers`; 0: in this process)."""
    workers = default_workers(len(items)) if workers is None else workers
    if workers == 0 or len(items) < 2:
        return [read(item) for item in items]
    dataset = cast("Dataset[Out]", _Mapped(items, read))
    loader: torch_data.DataLoader[Out] = torch_data.DataLoader(
        dataset, batch_size=None, num_workers=min(workers, len(items)), collate_fn=_as_is
    )
    return list(loader)
