"""What a suite knows about one attribution call, offered to the explainer.

A callable explainer that names a ``context`` parameter receives an
:class:`AttributionContext` by keyword (``(model, inputs, target, *, context)``);
the three-argument form keeps working.  captum classes receive the same values
by parameter name (see :mod:`pytest_chaosmining.explainers.binding`).

An explainer can declare where it applies with :class:`Applicability`; where it
does not, its test is skipped with the reason, as when it raises
:class:`~pytest_chaosmining.explainers.NotApplicable` (a ``NotImplementedError`` fails it).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import numpy as np
    import torch

#: the kinds of data the suites attribute
DOMAINS = ("tabular", "image", "audio")
#: what the suites' models predict
TASKS = ("regression", "classification")
#: the suites' model families: MLPs on tabular data, 2-D CNNs on images, 1-D sequence models on audio
MODEL_KINDS = ("mlp", "cnn", "sequence")
#: the input ranks the suites attribute (batch included): tabular 2, audio 3, images 4
INPUT_RANKS = (2, 3, 4)
#: training samples in a context's background
BACKGROUND_SIZE = 32


class AttributedShape(NamedTuple):
    """What a suite attributes: domain, task, model kind and input rank (each suite
    declares its shapes, ``Suite.shapes``)."""

    domain: str
    task: str
    model_kind: str
    rank: int


TABULAR_REGRESSION = AttributedShape("tabular", "regression", "mlp", 2)
TABULAR_CLASSIFICATION = AttributedShape("tabular", "classification", "mlp", 2)
IMAGE_CLASSIFICATION = AttributedShape("image", "classification", "cnn", 4)
AUDIO_CLASSIFICATION = AttributedShape("audio", "classification", "sequence", 3)
#: the shape of a call outside the suites, read off the input rank
PLAIN_SHAPES = {2: TABULAR_REGRESSION, 3: AUDIO_CLASSIFICATION, 4: IMAGE_CLASSIFICATION}


@dataclass(frozen=True)
class Applicability:
    """Where an explainer applies; an empty field means "anywhere".

    ``domains`` ⊆ :data:`DOMAINS`, ``tasks`` ⊆ :data:`TASKS`, ``model_kinds`` ⊆
    :data:`MODEL_KINDS`, ``input_ranks`` ⊆ :data:`INPUT_RANKS`; ``needs_layer``:
    the explainer needs a 2-D convolution layer (CAM methods)."""

    domains: frozenset[str] = frozenset()
    tasks: frozenset[str] = frozenset()
    model_kinds: frozenset[str] = frozenset()
    input_ranks: frozenset[int] = frozenset()
    needs_layer: bool = False

    def __post_init__(self) -> None:
        for name, known in (
            ("domains", DOMAINS),
            ("tasks", TASKS),
            ("model_kinds", MODEL_KINDS),
            ("input_ranks", INPUT_RANKS),
        ):
            value = getattr(self, name)
            object.__setattr__(self, name, frozenset(value))
            unknown = sorted(str(v) for v in value if v not in known)
            if unknown:
                raise ValueError(f"Applicability.{name}: unknown {unknown}; known: {list(known)}")

    def admits(self, domain: str, task: str, model_kind: str, rank: int) -> bool:
        """Whether a call of this shape is in scope (the layer is checked at call time)."""
        return (
            (not self.domains or domain in self.domains)
            and (not self.tasks or task in self.tasks)
            and (not self.model_kinds or model_kind in self.model_kinds)
            and (not self.input_ranks or rank in self.input_ranks)
            and (not self.needs_layer or model_kind == "cnn")
        )

    def reason(self, context: AttributionContext, model: torch.nn.Module, rank: int) -> str | None:
        """Why the explainer does not apply to ``model`` and inputs of ``rank`` in
        ``context`` (None: it applies)."""
        for name, value in (
            ("domains", context.domain),
            ("tasks", context.task),
            ("model_kinds", context.model_kind),
            ("input_ranks", rank),
        ):
            allowed = getattr(self, name)
            if allowed and value not in allowed:
                return f"declared for {name} {sorted(allowed)}, this is {value!r}"
        if self.needs_layer and last_conv2d(model) is None:
            return "needs a 2-D convolution layer, the model has none"
        return None

    def applies_in(self, shapes: Iterable[AttributedShape]) -> bool:
        """Whether this explainer admits any of ``shapes`` (what some suites attribute)."""
        return any(self.admits(*shape) for shape in shapes)


@dataclass(frozen=True)
class AttributionContext:
    """What the suite knows about one attribution call.

    - ``suite``, ``domain`` (:data:`DOMAINS`), ``task`` (:data:`TASKS`),
      ``model_kind`` (:data:`MODEL_KINDS`), ``device``;
    - ``target``: the explained output (an int, or one class per sample);
    - ``baseline``: zeros shaped like the inputs; ``background``: a sample of
      the training data (rows of the same per-sample shape), made on first use;
    - ``feature_mask``: the suite's features as integer groups broadcastable to
      the inputs (image patches, channel × time segments; None: every input
      element is a feature); ``window``: one feature's extent per sample (for
      sliding-window methods such as occlusion);
    - ``layer``: the suggested layer for layer methods (the last 2-D
      convolution of the model the explainer was given; None where there is
      none), ``layer_name`` its qualified name;
    - ``settings``: batch sizes the suite picked for captum methods
      (``internal_batch_size``, ``perturbations_per_eval``).
    """

    suite: str
    domain: str
    task: str
    model_kind: str
    device: torch.device
    target: int | torch.Tensor | None = None
    baseline: torch.Tensor | None = None
    feature_mask: torch.Tensor | None = None
    window: tuple[int, ...] | None = None
    layer: torch.nn.Module | None = None
    layer_name: str | None = None
    settings: Mapping[str, int] = field(default_factory=dict)
    background_source: Callable[[], torch.Tensor] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def background(self) -> torch.Tensor | None:
        """A sample of the training data on :attr:`device` (None where the suite offers none)."""
        if self.background_source is None:
            return None
        return self.background_source().to(self.device).clone()  # never the (memoised) source tensor itself

    @property
    def n_features(self) -> int:
        """How many features one sample has (mask groups, or input elements)."""
        if self.feature_mask is not None:
            return int(self.feature_mask.unique().numel())
        assert self.baseline is not None
        return int(self.baseline[0].numel())

    def for_call(
        self, model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None
    ) -> AttributionContext:
        """This context completed for one call: the target, the zero baseline and
        the suggested layer resolved on ``model`` (the explainer's private copy)."""
        name = last_conv2d(model)
        mask = None if self.feature_mask is None else self.feature_mask.clone()  # the call's own copy
        completed = dataclasses.replace(
            self,
            target=target,
            baseline=inputs.new_zeros(inputs.shape),
            feature_mask=mask,
            layer_name=name,
            layer=model.get_submodule(name) if name else None,
        )
        if "background" in self.__dict__:  # already made: not made again, but each call gets its own copy
            made = self.__dict__["background"]
            completed.__dict__["background"] = None if made is None else made.clone()
        return completed


def last_conv2d(model: torch.nn.Module) -> str | None:
    """Qualified name of the last ``Conv2d`` module of ``model`` in registration order."""
    import torch  # the model's own: loaded already

    names = [name for name, module in model.named_modules() if isinstance(module, torch.nn.Conv2d)]
    return names[-1] if names else None


def tabular_context(
    suite: str, x_train: np.ndarray, device: torch.device, task: str = "regression"
) -> AttributionContext:
    """A tabular suite's context: every column a feature (window: one column), a
    background of the first :data:`BACKGROUND_SIZE` training rows."""
    import numpy as np  # the suite's (numpy and torch): loaded already, never by the entry module
    import torch

    rows = np.ascontiguousarray(x_train[:BACKGROUND_SIZE])
    return AttributionContext(
        suite=suite,
        domain="tabular",
        task=task,
        model_kind="mlp",
        device=device,
        window=(1,),
        background_source=lambda: torch.from_numpy(rows),
    )
