"""Explainers: the contract, the built-ins, the registry and a guarded call.

An explainer is either a captum ``Attribution`` class (constructed with the
model, then ``.attribute(inputs, target=..., **kwargs)``) or any callable
``(model, inputs, target) -> Tensor`` of the inputs' shape.  Wrap either in
:class:`Explainer` to pass keyword arguments or to declare which exact ground
truth it estimates ('gradient', 'ablation' or 'path').

Registration, merged in this order: the built-ins, installed packages through
the ``pytest_chaosmining.explainers`` entry-point group (entry-point name =
explainer name), and ``pytest_chaosmining_explainers(config)`` hooks in
conftest files or plugins.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import warnings
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import torch

#: a captum ``Attribution`` class or a callable ``(model, inputs, target) -> Tensor``
ExplainerMethod = Callable[..., object]

ENTRY_POINT_GROUP = "pytest_chaosmining.explainers"
BUILTIN_NAMES = ("SA", "DL", "IG", "FA", "random")
CONTROL_NAME = "random"
IG_STEPS = 10


class ExplainerError(Exception):
    """An explainer raised or returned something unusable; names the explainer."""


class NotApplicable(Exception):
    """Raise from an explainer that does not apply to the model or inputs it was
    given (a CAM method on an MLP): its test is skipped with the reason.
    ``NotImplementedError`` is taken the same way."""


class ExplainerNotApplicable(ExplainerError):
    """The explainer declared itself not applicable here (its test skips)."""


#: seconds an explainer call may take before it is stopped and fails (``--chaosmining-call-timeout``)
CALL_TIMEOUT_S = 600.0


class CallTimeout(Exception):
    """Raised inside an explainer call that ran past :data:`CALL_TIMEOUT_S`."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`CallTimeout` in the block after ``seconds`` (SIGALRM: main
    thread on POSIX only; elsewhere no limit).  Python code is interrupted at
    once; a long native operation when it returns."""
    import signal
    import threading

    if seconds <= 0 or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise CallTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Explainer:
    """A registered explainer.

    ``method``: a captum Attribution class or a callable ``(model, inputs, target)``.
    ``attribute_kwargs``: extra keyword arguments for ``attribute``.
    ``ground_truth``: the exact quantity it estimates, if any ('gradient',
    'ablation', 'path'), used for the attribution-UScore report column.
    """

    name: str
    method: ExplainerMethod
    attribute_kwargs: dict[str, object] = field(default_factory=dict)
    ground_truth: str | None = None
    source: str = "user"
    control: bool = False

    @property
    def is_captum(self) -> bool:
        return inspect.isclass(self.method) and hasattr(self.method, "attribute")


def _random_attribution(model: Any, inputs: Any, target: Any) -> Any:
    """The control: uniform noise, seeded, independent of the model."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(0)
    return torch.rand(inputs.shape, generator=gen, dtype=inputs.dtype).to(inputs.device)


def builtin_explainers() -> dict[str, Explainer]:
    """SA, DL, IG (10 steps, zero baseline), FA (zero baseline) and the random control."""
    from captum.attr import DeepLift, FeatureAblation, IntegratedGradients, Saliency

    return {
        "SA": Explainer("SA", Saliency, {"abs": False}, "gradient", "builtin"),
        "DL": Explainer("DL", DeepLift, {}, "path", "builtin"),
        "IG": Explainer("IG", IntegratedGradients, {"n_steps": IG_STEPS, "internal_batch_size": 4096}, "path", "builtin"),
        "FA": Explainer("FA", FeatureAblation, {"perturbations_per_eval": 8}, "ablation", "builtin"),
        CONTROL_NAME: Explainer(CONTROL_NAME, _random_attribution, {}, None, "builtin", control=True),
    }


def as_explainer(name: str, obj: Any, source: str) -> Explainer:
    """Normalise a registered object into an :class:`Explainer`."""
    if isinstance(obj, Explainer):
        return dataclasses.replace(obj, name=name, source=source)  # the caller's object stays as it was
    if inspect.isclass(obj) and hasattr(obj, "attribute"):
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
    registry = builtin_explainers()

    def add(name: str, obj: Any, source: str) -> None:
        if name in registry:
            warnings.warn(f"chaosmining: explainer {name!r} from {source} replaces the one from {registry[name].source}")
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


def select(registry: dict[str, Explainer], names: list[str] | None) -> dict[str, Explainer]:
    """Keep only ``names`` (all when None); unknown names raise ``KeyError`` listing the known ones."""
    if not names:
        return registry
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise KeyError(f"unknown explainer(s) {unknown}; registered: {sorted(registry)}")
    return {n: registry[n] for n in names}


def captum_settings(explainer: Explainer, **settings: Any) -> dict[str, Any]:
    """The part of a suite's ``settings`` (``feature_mask``, ``internal_batch_size``,
    ...) that ``explainer``'s captum ``attribute`` accepts; none for other explainers."""
    if not explainer.is_captum:
        return {}
    params = inspect.signature(getattr(explainer.method, "attribute")).parameters
    return {name: value for name, value in settings.items() if name in params}


def attribute(
    explainer: Explainer,
    model: torch.nn.Module,
    inputs: torch.Tensor,
    target: int | torch.Tensor | None,
    extra_kwargs: dict[str, object] | None = None,
) -> torch.Tensor:
    """Run ``explainer`` in isolation (:func:`~pytest_chaosmining.isolation.isolated_call`:
    a private copy of the model and inputs, process state restored) and validate
    its output (tensor, same shape and device, finite).  Any failure, and any
    change it made to what it was given, is re-raised as :class:`ExplainerError`
    naming it.

    ``extra_kwargs`` are a suite's settings for captum explainers (a feature
    mask, a batch size); they take precedence over the explainer's own."""
    import torch

    from pytest_chaosmining.isolation import IsolationViolation, isolated_call

    def call(private_model: torch.nn.Module, private_inputs: torch.Tensor) -> object:
        private_target = target.clone() if isinstance(target, torch.Tensor) else target
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", module="captum")
            if explainer.is_captum:
                kwargs = {**explainer.attribute_kwargs, **(extra_kwargs or {})}
                attribution: Any = explainer.method(private_model)
                return attribution.attribute(private_inputs, target=private_target, **kwargs)
            return explainer.method(private_model, private_inputs, private_target)

    import time

    start = time.perf_counter()
    try:
        with time_limit(CALL_TIMEOUT_S):
            out = isolated_call(model, inputs, call)
    except IsolationViolation as exc:
        raise ExplainerError(f"explainer {explainer.name!r} changed what it was given: {exc}") from exc
    except CallTimeout:
        raise ExplainerError(f"explainer {explainer.name!r} was stopped after {time.perf_counter() - start:.1f} s: "
                             f"one call may take at most {CALL_TIMEOUT_S:g} s (--chaosmining-call-timeout)") from None
    except (NotApplicable, NotImplementedError) as exc:
        raise ExplainerNotApplicable(f"explainer {explainer.name!r} does not apply here "
                                     f"({type(exc).__name__}: {exc})") from exc
    except Exception as exc:
        raise ExplainerError(f"explainer {explainer.name!r} raised {type(exc).__name__}: {exc}") from exc
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, torch.Tensor):
        raise ExplainerError(f"explainer {explainer.name!r} returned {type(out).__name__}, expected a torch.Tensor")
    if out.shape != inputs.shape:
        raise ExplainerError(
            f"explainer {explainer.name!r} returned shape {tuple(out.shape)}, expected the inputs' shape {tuple(inputs.shape)}"
        )
    if out.device != inputs.device:
        raise ExplainerError(f"explainer {explainer.name!r} returned a tensor on {out.device}, inputs are on {inputs.device}")
    if not torch.is_floating_point(out):
        out = out.to(torch.float32)
    finite = torch.isfinite(out)
    if not bool(finite.all()):
        bad = int((~finite).sum())
        raise ExplainerError(f"explainer {explainer.name!r} returned {bad} non-finite value(s) (NaN/inf)")
    from pytest_chaosmining import diagnosis

    diagnosis.note(explainer.name, out)
    return out.detach()
