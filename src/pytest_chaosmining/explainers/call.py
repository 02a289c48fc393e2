"""The guarded call of an explainer: isolated, time-limited, its output checked
against the contract, its errors named."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING

from pytest_chaosmining.explainers.context import PLAIN_SHAPES, AttributionContext

if TYPE_CHECKING:
    import torch


import random
import signal
import threading
import time
import traceback
from pathlib import Path

from pytest_chaosmining.explainers.binding import MissingInput, call_explainer
from pytest_chaosmining.explainers.contract import (
    Explainer,
    ExplainerError,
    ExplainerNotApplicable,
    NotApplicable,
)

# numpy, torch and the package's modules that load them are imported where used: heavy, they wait for
# --chaosmining.

# numpy, pathlib, random, signal, threading, time, torch, traceback and the package's modules that load them


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


def attribute(
    explainer: Explainer,
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: int | torch.Tensor | None,
    context: AttributionContext | None = None,
    seed: int = 0,
) -> torch.Tensor:
    """Run ``explainer`` in isolation (:func:`~pytest_chaosmining.explainers.isolation.isolated_call`:
    a private copy of the model and inputs, process state restored, the random
    generators seeded with ``seed``: 0 but where a check measures the explainer's
    noise) and validate its output (tensor, same shape and
    device, finite).  Any failure, and any change it made to what it was given,
    is re-raised as :class:`ExplainerError` naming it; an explainer that does
    not apply (declared, ``NotApplicable``, ``NotImplementedError``, or needing
    what the suite cannot offer) as :class:`ExplainerNotApplicable`.

    ``context``: what the suite knows (:class:`AttributionContext`; default:
    :func:`plain_context`), offered to the explainer by parameter name."""
    import numpy as np
    import torch

    # on use, as numpy and torch above: the entry module loads this one
    from pytest_chaosmining.core.training.determinism import reproducible
    from pytest_chaosmining.explainers.isolation import IsolationViolation, isolated_call

    base = context if context is not None else plain_context(model, inputs)
    if explainer.applies_to is not None:
        reason = explainer.applies_to.reason(base, model, inputs.dim())
        if reason is not None:
            raise ExplainerNotApplicable(f"explainer {explainer.name!r} does not apply here: {reason}")

    def call(private_model: torch.nn.Module, private_inputs: torch.Tensor) -> object:
        private_target = target.clone() if isinstance(target, torch.Tensor) else target
        torch.manual_seed(seed)  # a sampling explainer draws the same numbers in any test order
        np.random.seed(seed)
        random.seed(seed)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="captum")
            return call_explainer(
                explainer,
                private_model,
                private_inputs,
                private_target,
                base.for_call(private_model, private_inputs, private_target),
            )

    start = time.perf_counter()
    try:
        with time_limit(explainer.call_timeout_s), reproducible(inputs.device):  # on CUDA: true fp32, fixed kernels
            out = isolated_call(model, inputs, call)
    except IsolationViolation as exc:
        raise ExplainerError(f"explainer {explainer.name!r} changed what it was given: {exc}") from exc
    except CallTimeout:
        raise ExplainerError(
            f"explainer {explainer.name!r} was stopped after {time.perf_counter() - start:.1f} s: "
            f"one call may take at most {explainer.call_timeout_s:g} s (--chaosmining-call-timeout)"
        ) from None
    except (NotApplicable, NotImplementedError, MissingInput) as exc:
        raise ExplainerNotApplicable(
            f"explainer {explainer.name!r} does not apply here ({type(exc).__name__}: {exc})"
        ) from exc
    except Exception as exc:
        raise ExplainerError(
            f"explainer {explainer.name!r} raised {type(exc).__name__}: {exc}{explainer_frames(exc)}"
        ) from exc
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if isinstance(out, np.ndarray):  # shap, pytorch-grad-cam, Quantus explain_funcs return numpy
        try:
            out = torch.from_numpy(np.ascontiguousarray(out)).to(inputs.device)
        except TypeError as exc:
            raise ExplainerError(f"explainer {explainer.name!r} returned a numpy array of {out.dtype}: {exc}") from None
    if not isinstance(out, torch.Tensor):
        raise ExplainerError(f"explainer {explainer.name!r} returned {type(out).__name__}, expected a torch.Tensor")
    if out.shape != inputs.shape:
        raise ExplainerError(
            f"explainer {explainer.name!r} returned shape {tuple(out.shape)}, "
            f"expected the inputs' shape {tuple(inputs.shape)}"
        )
    if out.device != inputs.device:
        raise ExplainerError(
            f"explainer {explainer.name!r} returned a tensor on {out.device}, inputs are on {inputs.device}"
        )
    if not torch.is_floating_point(out):
        out = out.to(torch.float32)
    finite = torch.isfinite(out)
    if not bool(finite.all()):
        bad = int((~finite).sum())
        raise ExplainerError(f"explainer {explainer.name!r} returned {bad} non-finite value(s) (NaN/inf)")
    if explainer.map_notes is not None:
        explainer.map_notes.note(explainer.name, out)
    return out.detach()
