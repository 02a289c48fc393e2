"""One intra-op torch thread for the plugin's own work (training, attribution):
results independent of the thread count and of xdist workers, and the user's
own code left with its setting."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_intra_op_thread() -> Iterator[None]:
    """torch with one intra-op thread inside the block, the previous count restored after it."""
    import torch  # heavy: the plugin's first own work loads it

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
