"""The explainer contract: what is registered (:class:`Explainer`) and the errors
of a call that breaks the contract or does not apply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_chaosmining.explainers.captum_methods import captum_class
from pytest_chaosmining.explainers.context import Applicability
from pytest_chaosmining.explainers.limitations import KnownLimitation

if TYPE_CHECKING:
    from pytest_chaosmining.explainers.diagnosis import MapNotes

#: a captum ``Attribution`` class or a callable ``(model, inputs, target) -> Tensor``
ExplainerMethod = Callable[..., object]


class ExplainerError(Exception):
    """An explainer raised or returned something unusable; names the explainer."""


class NotApplicable(Exception):
    """Raise from an explainer that does not apply to the model or inputs it was
    given (a CAM method on an MLP): its test is skipped with the reason.  A
    ``NotImplementedError`` is not taken so: it fails the test, naming it (it comes as
    readily from a missing op inside torch as from a declaration)."""


class MissingInput(Exception):
    """The explainer needs something this suite cannot offer (its test skips)."""


class ExplainerNotApplicable(ExplainerError):
    """The explainer declared itself not applicable here (its test skips)."""


#: seconds an explainer call may take before it is stopped and fails, unless the run says otherwise
#: (``--chaosmining-call-timeout``: the session's explainers carry the run's limit)
DEFAULT_CALL_TIMEOUT_S = 600.0


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
    ``completeness``: its attributions sum to ``f(x) − f(baseline)`` with the
    context's (zero) baseline (IG, DeepLift); the suites that can measure it judge
    the sign of that sum (``sign_agreement``) and its size (``completeness``).
    ``sized``: the size of its maps is part of what it returns (LRP relevance,
    attributions that sum to something; implied by ``completeness``): against a
    baseline, each sample's total |attribution| is compared too (``size_agreement``),
    so a rule that now scales every map (a bias counted twice) fails; zennit's
    composites (:func:`~pytest_chaosmining.explainers.adapters.zennit_method`) declare it (:attr:`size_promised`).
    ``stochastic``: its maps are samples (SmoothGrad, GradientShap, LIME): checks
    that compare its maps (batch consistency, drift against a baseline) allow the
    noise measured between its own draws.  An undeclared explainer whose maps move
    with the seed, or differ between two copies of one sample in a batch, is
    found so and judged the same way.
    ``same_as``: the name of a registered explainer (a built-in) whose method it
    implements with settings that make their maps comparable (zennit's gradient as
    ``"SA"``, shap's GradientExplainer as ``"GS"``), or the paper's formula it implements
    (:func:`pytest_chaosmining.references.formulas.paper`, with its settings:
    ``paper("IG", steps=50, rule="riemann_trapezoid")``; ``"paper:GradCAM++"`` with the
    defaults): the suites check that their maps agree (``equivalence``), within both
    explainers' own noise.
    ``known``: its known limitations, declared by whoever registers it
    (:class:`~pytest_chaosmining.explainers.limitations.KnownLimitation`: a check its
    library's reported defect makes it fail, held as a strict expected failure citing the
    reference; or a level it is judged at where it is correct but weaker than the shared
    bar); the built-ins declare theirs the same way.
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
    completeness: bool = False
    sized: bool = False
    stochastic: bool = False
    same_as: str | Explainer | None = None
    known: tuple[KnownLimitation, ...] = ()
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    map_notes: MapNotes | None = field(default=None, compare=False, repr=False)

    @property
    def size_promised(self) -> bool:
        """Whether a baseline compares the size of its maps: it declares ``sized`` or
        ``completeness``, or its method is marked so (an adapter's ``sized`` attribute)."""
        return self.sized or self.completeness or getattr(self.method, "sized", False) is True

    @property
    def is_captum(self) -> bool:
        """Whether ``method`` is a captum ``Attribution`` class, or one with constructor
        arguments bound by ``functools.partial`` (``partial(DeepLift, eps=1e-6)``)."""
        return captum_class(self.method) is not None
