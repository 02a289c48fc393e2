"""Explainers: the contract, the built-ins, the registry and a guarded call.

An explainer is either a captum ``Attribution`` class (constructed with the
model, then ``.attribute(inputs, target=..., **kwargs)``; what it needs from the
suite is passed by parameter name, see :mod:`pytest_chaosmining.binding`) or any
callable ``(model, inputs, target) -> Tensor`` of the inputs' shape, which may
also take ``context=`` (:class:`~pytest_chaosmining.attribution_context.AttributionContext`).
Wrap either in :class:`Explainer` to pass keyword arguments, to declare where it
applies (:class:`~pytest_chaosmining.attribution_context.Applicability`) or which
exact ground truth it estimates ('gradient', 'ablation' or 'path').

Registration, merged in this order: the built-ins, installed packages through
the ``pytest_chaosmining.explainers`` entry-point group (entry-point name =
explainer name), and ``pytest_chaosmining_explainers(config)`` hooks in
conftest files or plugins.
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Any

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.attribution_context import PLAIN_SHAPES, Applicability, AttributedShape, AttributionContext

if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.diagnosis import MapNotes

#: a captum ``Attribution`` class or a callable ``(model, inputs, target) -> Tensor``
ExplainerMethod = Callable[..., object]

ENTRY_POINT_GROUP = "pytest_chaosmining.explainers"
#: the built-in explainers (the paper's four first), and the control
BUILTIN_NAMES = ("SA", "DL", "IG", "FA", "IxG", "GBP", "SG", "GS", "OCC", "GradCAM", "KS", "random")
#: the explainers of the ChaosMining paper
PAPER_NAMES = ("SA", "DL", "IG", "FA")
CONTROL_NAME = "random"
IG_STEPS = 10
#: noisy samples of SmoothGrad and GradientShap
NOISE_SAMPLES = 10


class ExplainerError(Exception):
    """An explainer raised or returned something unusable; names the explainer."""


class NotApplicable(Exception):
    """Raise from an explainer that does not apply to the model or inputs it was
    given (a CAM method on an MLP): its test is skipped with the reason.
    ``NotImplementedError`` is taken the same way."""


class ExplainerNotApplicable(ExplainerError):
    """The explainer declared itself not applicable here (its test skips)."""


#: seconds an explainer call may take before it is stopped and fails, unless the run says otherwise
#: (``--chaosmining-call-timeout``: the session's explainers carry the run's limit)
DEFAULT_CALL_TIMEOUT_S = 600.0


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
    import signal
    import threading
    import time

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


@dataclass
class Explainer:
    """A registered explainer.

    ``method``: a captum Attribution class or a callable ``(model, inputs, target)``.
    ``attribute_kwargs``: extra keyword arguments for ``attribute``.
    ``ground_truth``: the exact quantity it estimates, if any ('gradient',
    'ablation', 'path'), used for the attribution-UScore report column.
    ``applies_to``: where it applies (None: everywhere); elsewhere its tests skip.
    ``in_default_run``: run without ``--chaosmining-explainers`` naming it (the
    slow built-ins are not).
    ``call_timeout_s`` and ``map_notes``: what the run sets on its explainers (the
    call's time limit; where degenerate maps are noted for the judge).
    """

    name: str
    method: ExplainerMethod
    attribute_kwargs: dict[str, object] = field(default_factory=dict)
    ground_truth: str | None = None
    source: str = "user"
    control: bool = False
    applies_to: Applicability | None = None
    in_default_run: bool = True
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    map_notes: MapNotes | None = field(default=None, compare=False, repr=False)

    @property
    def is_captum(self) -> bool:
        """Whether ``method`` is a captum ``Attribution`` class, or one with constructor
        arguments bound by ``functools.partial`` (``partial(DeepLift, eps=1e-6)``)."""
        from pytest_chaosmining.binding import captum_class

        return captum_class(self.method) is not None


def _random_attribution(model: Any, inputs: Any, target: Any) -> Any:
    """The control: uniform noise, seeded, independent of the model."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    return torch.rand(inputs.shape, generator=gen, dtype=inputs.dtype).to(inputs.device)


def _smoothgrad(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """SmoothGrad: the mean gradient over :data:`NOISE_SAMPLES` copies of the inputs
    with Gaussian noise of 0.15 × the inputs' standard deviation (seeded per call)."""
    from captum.attr import NoiseTunnel, Saliency

    sigma = float(0.15 * inputs.detach().float().std())
    return NoiseTunnel(Saliency(model)).attribute(
        inputs,
        nt_type="smoothgrad",
        nt_samples=NOISE_SAMPLES,
        nt_samples_batch_size=NOISE_SAMPLES,
        stdevs=sigma,
        target=target,
        abs=False,
    )


def _occlusion(model: Any, inputs: Any, target: Any, context: AttributionContext) -> Any:
    """Occlusion with overlapping windows: one feature of the suite's grid per
    window, sliding by half a window (a tabular column: by one), zero baseline."""
    from captum.attr import Occlusion

    window = context.window or (1,) * (inputs.dim() - 1)
    strides = tuple(max(1, w // 2) if i > 0 or len(window) == 1 else w for i, w in enumerate(window))
    return Occlusion(model).attribute(
        inputs,
        sliding_window_shapes=window,
        strides=strides,
        target=target,
        perturbations_per_eval=int(context.settings.get("perturbations_per_eval", 8)),
    )


def builtin_explainers() -> dict[str, Explainer]:
    """The built-ins (each with a short name):

    - the paper's four: SA (Saliency), DL (DeepLift), IG (IntegratedGradients,
      10 steps, zero baseline), FA (FeatureAblation over the suite's features);
    - IxG (InputXGradient), GBP (GuidedBackprop), SG (SmoothGrad: Saliency
      under a NoiseTunnel), GS (GradientShap, 10 samples over a training
      background), OCC (Occlusion, overlapping windows), GradCAM (LayerGradCam
      on the last 2-D convolution, upsampled; images only) and KS (KernelShap
      over the features; tabular only);
    - ``random``: the control (seeded uniform noise, independent of the model).
    """
    from captum.attr import (
        DeepLift,
        FeatureAblation,
        GradientShap,
        GuidedBackprop,
        InputXGradient,
        IntegratedGradients,
        KernelShap,
        LayerGradCam,
        Saliency,
    )

    image = Applicability(domains=frozenset({"image"}), needs_layer=True)
    tabular = Applicability(domains=frozenset({"tabular"}))
    return {
        "SA": Explainer("SA", Saliency, {"abs": False}, "gradient", "builtin"),
        "DL": Explainer("DL", DeepLift, {}, "path", "builtin"),
        "IG": Explainer(
            "IG", IntegratedGradients, {"n_steps": IG_STEPS, "internal_batch_size": 4096}, "path", "builtin"
        ),
        "FA": Explainer("FA", FeatureAblation, {"perturbations_per_eval": 8}, "ablation", "builtin"),
        "IxG": Explainer("IxG", InputXGradient, {}, None, "builtin"),
        "GBP": Explainer("GBP", GuidedBackprop, {}, None, "builtin"),
        "SG": Explainer("SG", _smoothgrad, {}, None, "builtin"),
        "GS": Explainer("GS", GradientShap, {"n_samples": NOISE_SAMPLES, "stdevs": 0.0}, None, "builtin"),
        "OCC": Explainer("OCC", _occlusion, {}, None, "builtin"),
        "GradCAM": Explainer("GradCAM", LayerGradCam, {"relu_attributions": True}, None, "builtin", applies_to=image),
        "KS": Explainer(
            "KS", KernelShap, {"perturbations_per_eval": 64}, None, "builtin", applies_to=tabular, in_default_run=False
        ),
        CONTROL_NAME: Explainer(CONTROL_NAME, _random_attribution, {}, None, "builtin", control=True),
    }


def as_explainer(name: str, obj: Any, source: str) -> Explainer:
    """Normalise a registered object into an :class:`Explainer`."""
    if isinstance(obj, Explainer):
        return dataclasses.replace(obj, name=name, source=source)  # the caller's object stays as it was
    from pytest_chaosmining.binding import captum_class

    if captum_class(obj) is not None:
        return Explainer(name, obj, source=source)
    if callable(obj):
        return Explainer(name, obj, source=source)
    return Explainer(name, _not_an_explainer(name, obj), source=source)


def _not_an_explainer(name: str, obj: Any) -> Callable[..., Any]:
    def fail(model: Any, inputs: Any, target: Any) -> Any:
        raise TypeError(f"registered object {obj!r} is neither a captum Attribution class nor a callable")

    return fail


def _failed_load(error: BaseException) -> Callable[..., Any]:
    def fail(model: Any, inputs: Any, target: Any) -> Any:
        raise RuntimeError(f"could not load entry point: {type(error).__name__}: {error}")

    return fail


def collect_explainers(hook_results: list[dict[str, Any]]) -> dict[str, Explainer]:
    """Merge built-ins, entry-point explainers and hook results (later wins, with a warning)."""
    from importlib.metadata import entry_points

    registry = builtin_explainers()

    def add(name: str, obj: Any, source: str) -> None:
        if name in registry:
            warnings.warn(
                f"chaosmining: explainer {name!r} from {source} replaces the one from {registry[name].source}",
                ChaosminingWarning,
                stacklevel=2,
            )
        registry[name] = as_explainer(name, obj, source)

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken package fails its own tests, not the session
            obj = _failed_load(exc)
        add(ep.name, obj, f"entry point {ep.value}")
    for result in hook_results:
        if not isinstance(result, dict):
            raise TypeError(f"pytest_chaosmining_explainers must return a dict, got {type(result).__name__}")
        for name, obj in result.items():
            add(str(name), obj, "pytest_chaosmining_explainers hook")
    return registry


def select(
    registry: dict[str, Explainer],
    names: list[str] | None,
    suites: Mapping[str, Sequence[AttributedShape]] | None = None,
) -> dict[str, Explainer]:
    """Keep only ``names`` (when None: those ``in_default_run``, less the
    built-ins that apply in none of ``suites``: suite name → the shapes it
    attributes); unknown names raise ``KeyError`` listing the known ones, and a
    named or registered explainer that applies in none of ``suites`` (when given)
    raises ``ValueError``."""
    if not names:
        chosen = {
            n: e
            for n, e in registry.items()
            if e.in_default_run and not (e.source == "builtin" and suites is not None and applies_nowhere(e, suites))
        }
    else:
        unknown = [n for n in names if n not in registry]
        if unknown:
            raise KeyError(f"unknown explainer(s) {unknown}; registered: {sorted(registry)}")
        chosen = {n: registry[n] for n in names}
    if suites is not None:
        nowhere = [n for n, e in chosen.items() if applies_nowhere(e, suites)]
        if nowhere:
            raise ValueError(
                f"explainer(s) {nowhere} apply in none of the selected suites {list(suites)} "
                f"(declared: {[chosen[n].applies_to for n in nowhere]})"
            )
    return chosen


#: the frames of a failed call shown at most
SHOWN_FRAMES = 8


def explainer_frames(exc: BaseException) -> str:
    """Where ``exc`` was raised, outside this plugin: the last frames of its
    traceback (the explainer's own code and the libraries it called), formatted
    as Python does; empty when there are none."""
    import traceback
    from pathlib import Path

    package = str(Path(__file__).resolve().parent)
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


def applies_nowhere(explainer: Explainer, suites: Mapping[str, Sequence[AttributedShape]]) -> bool:
    """Whether ``explainer`` declares an applicability none of ``suites`` (name → shapes) attributes."""
    return explainer.applies_to is not None and not explainer.applies_to.applies_in(
        shape for shapes in suites.values() for shape in shapes
    )


def attribute(
    explainer: Explainer,
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: int | torch.Tensor | None,
    context: AttributionContext | None = None,
) -> torch.Tensor:
    """Run ``explainer`` in isolation (:func:`~pytest_chaosmining.isolation.isolated_call`:
    a private copy of the model and inputs, process state restored, the random
    generators seeded with 0) and validate its output (tensor, same shape and
    device, finite).  Any failure, and any change it made to what it was given,
    is re-raised as :class:`ExplainerError` naming it; an explainer that does
    not apply (declared, ``NotApplicable``, ``NotImplementedError``, or needing
    what the suite cannot offer) as :class:`ExplainerNotApplicable`.

    ``context``: what the suite knows (:class:`AttributionContext`; default:
    :func:`plain_context`), offered to the explainer by parameter name."""
    import random
    import time

    import numpy as np
    import torch

    from pytest_chaosmining.binding import MissingInput, call_explainer
    from pytest_chaosmining.isolation import IsolationViolation, isolated_call

    base = context if context is not None else plain_context(model, inputs)
    if explainer.applies_to is not None:
        reason = explainer.applies_to.reason(base, model, inputs.dim())
        if reason is not None:
            raise ExplainerNotApplicable(f"explainer {explainer.name!r} does not apply here: {reason}")

    def call(private_model: torch.nn.Module, private_inputs: torch.Tensor) -> object:
        private_target = target.clone() if isinstance(target, torch.Tensor) else target
        torch.manual_seed(0)  # a sampling explainer draws the same numbers in any test order
        np.random.seed(0)
        random.seed(0)
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
        with time_limit(explainer.call_timeout_s):
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
