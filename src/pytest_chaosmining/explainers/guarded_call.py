"""The guarded call of an explainer (torch at the top: loaded on first use through
:mod:`pytest_chaosmining.explainers`): isolated, time-limited, its output checked
against the contract, its errors named."""

from __future__ import annotations

import random
import time
import warnings

import numpy as np
import pytest
import torch

from pytest_chaosmining.core.training.determinism import reproducible
from pytest_chaosmining.explainers.binding import call_explainer
from pytest_chaosmining.explainers.call import CallTimeout, explainer_frames, plain_context, time_limit
from pytest_chaosmining.explainers.context import AttributionContext
from pytest_chaosmining.explainers.contract import (
    Explainer,
    ExplainerError,
    ExplainerNotApplicable,
    MissingInput,
    NotApplicable,
)
from pytest_chaosmining.explainers.isolation import IsolationViolation, isolated_call

#: how an explainer says where it does not apply (what a NotImplementedError or pytest.skip is not)
HOW_TO_DECLARE = "declare applies_to, or raise pytest_chaosmining.explainers.NotApplicable"


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
    not apply (declared by ``applies_to``, raising the plugin's ``NotApplicable``,
    or needing what the suite cannot offer) as :class:`ExplainerNotApplicable`.  A
    ``NotImplementedError`` from anywhere inside the call (a half-finished port, an op
    torch's dispatcher lacks on this backend) is the explainer's failure, naming it, and
    so is ``pytest.skip``, ``pytest.xfail`` or ``pytest.importorskip`` called inside it:
    an explainer may not skip or xfail its own test.

    ``context``: what the suite knows (:class:`AttributionContext`; default:
    :func:`plain_context`), offered to the explainer by parameter name."""
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
    except (NotApplicable, MissingInput) as exc:
        raise ExplainerNotApplicable(
            f"explainer {explainer.name!r} does not apply here ({type(exc).__name__}: {exc})"
        ) from exc
    except NotImplementedError as exc:
        raise ExplainerError(
            f"explainer {explainer.name!r} raised NotImplementedError: {exc} (not a declaration that it does "
            f"not apply: {HOW_TO_DECLARE}){explainer_frames(exc)}"
        ) from exc
    except (pytest.skip.Exception, pytest.xfail.Exception) as exc:
        called = "pytest.xfail" if isinstance(exc, pytest.xfail.Exception) else "pytest.skip"
        raise ExplainerError(
            f"explainer {explainer.name!r} called {called} ({exc.msg}): an explainer may not skip or xfail its "
            f"own test ({HOW_TO_DECLARE})"
        ) from None
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
