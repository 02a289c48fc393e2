"""What the guarded call of an explainer (:mod:`.guarded_call`) is made of, light: its time
limit, the frames of its failures, the context of a call outside the suites."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from pytest_chaosmining.explainers.context import PLAIN_SHAPES, AttributionContext

if TYPE_CHECKING:
    import torch


class CallTimeout(Exception):
    """Raised inside an explainer call that ran past its limit (:attr:`Explainer.call_timeout_s`)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CallTimeout` in the block after ``seconds`` (SIGALRM: main
    thread on POSIX only; elsewhere no limit).  Python code is interrupted at
    once; a long native operation when it returns.

    Another SIGALRM timer running when the block starts (pytest-timeout's) is
    kept: if it is due first its own handler runs, once, when it is due (and the
    block's own limit goes on if that handler returns); otherwise it is armed
    again after the block with the time it had left."""
    if seconds <= 0 or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGALRM)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_first = 0 < outer_left < seconds
    outer_fired: list[bool] = []
    start = time.monotonic()

    def expire(signum: int, frame: FrameType | None) -> None:
        if outer_first and not outer_fired:
            outer_fired.append(True)  # the outer timer was due first: its handler decides, once
            signal.setitimer(signal.ITIMER_REAL, max(seconds - outer_left, 1e-3))  # then ours, for the rest
            if callable(previous):
                previous(signum, frame)
            return
        raise CallTimeout

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, outer_left if outer_first else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer_left > 0 and not outer_fired:
            left = outer_left - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), outer_interval)


#: the frames of a failed call shown at most
SHOWN_FRAMES = 8


def explainer_frames(exc: BaseException) -> str:
    """Where ``exc`` was raised, outside this plugin: the last frames of its
    traceback (the explainer's own code and the libraries it called), formatted
    as Python does; empty when there are none."""
    package = str(Path(__file__).resolve().parents[1])  # the plugin package, not only explainers/
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if not str(Path(f.filename).resolve()).startswith(package)
    ]
    if not frames:
        return ""
    return (
        "\nTraceback of the explainer (most recent call last):\n"
        + "".join(traceback.format_list(frames[-SHOWN_FRAMES:])).rstrip()
    )


def plain_context(model: torch.nn.Module, inputs: torch.Tensor) -> AttributionContext:
    """The context of a call outside the suites: the domain read off the input
    rank (2 tabular, 3 audio, 4 image), no feature mask, the inputs themselves
    as the background sample."""
    domain, task, kind, _ = PLAIN_SHAPES.get(inputs.dim(), PLAIN_SHAPES[2])
    background = inputs.detach().clone()
    return AttributionContext(
        suite="", domain=domain, task=task, model_kind=kind, device=inputs.device, background_source=lambda: background
    )
