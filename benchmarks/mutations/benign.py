"""Benign changes of correct methods, as a library really makes them: many, cheap, of
several kinds, split into a calibration half and a held-out half.

Each change is registered as an explainer of its own beside its unchanged built-in
(``base-<name>``), declaring what its base declares; ``benign_run.py`` runs them in
chunks through the judged suites of the default run and judges each change against
its base as a run against the base's baseline would.

Kinds: path methods' step counts and quadrature rules (IG), internal batch sizes,
float64, a batch explained in two halves, equivalent reimplementations by hand
(integrated gradients, input × gradient, saliency), samplers' sample counts and seeds
(SmoothGrad, GradientShap).  Within each kind the changes alternate between the two
halves (:func:`split`), so both hold every kind; a second held-out batch
(:func:`_more_held_out`) was added after the calibration was set, a third and a fourth
(:func:`_third_held_out`, :func:`_fourth_held_out`) with kinds never calibrated on, a
fifth (:func:`_fifth_held_out`) of fresh sampler seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from mutants import Method, _float64, _reseeded, builtin

from pytest_chaosmining.explainers import IG_STEPS, NOISE_SAMPLES, Explainer, builtin_explainers
from pytest_chaosmining.explainers.context import AttributionContext

CALIBRATION, HELD_OUT = "calibration", "held-out"


@dataclass(frozen=True)
class Change:
    """A benign change ``name`` of built-in ``base``, of ``kind``, in ``half``."""

    name: str
    base: str
    kind: str
    what: str
    method: Method
    half: str = ""


def _halves(base: Method) -> Method:
    """``base`` on each half of the batch, concatenated (a refactor that batches differently)."""

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        cut = max(1, inputs.shape[0] // 2)
        parts = []
        for rows in (slice(0, cut), slice(cut, None)):
            if inputs[rows].shape[0] == 0:
                continue
            part_target = target[rows] if isinstance(target, torch.Tensor) and target.dim() > 0 else target
            ctx = context
            if context.baseline is not None and context.baseline.shape[:1] == inputs.shape[:1]:
                ctx = dataclasses.replace(context, baseline=context.baseline[rows])
            parts.append(base(model, inputs[rows], part_target, ctx))
        return torch.cat(parts)

    return call


def _outputs(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    """The explained output per sample (a regressor's only one, a classifier's target class)."""
    out = model(inputs)
    if out.dim() == 1:
        return out
    if isinstance(target, torch.Tensor) and target.dim() > 0:
        return out.gather(1, target.view(-1, 1)).squeeze(1)
    return out[:, int(target) if target is not None else 0]


def _gradient(model: torch.nn.Module, inputs: torch.Tensor, target: object) -> torch.Tensor:
    x = inputs.detach().clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_outputs(model, x, target).sum(), x)
    return grad


def _ig_by_hand(steps: int, rule: str) -> Method:
    """Integrated gradients from the zero baseline written out by hand: Gauss-Legendre
    nodes (captum's default rule) or the trapezoid rule."""
    if rule == "gausslegendre":
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        alphas, scales = (nodes + 1) / 2, weights / 2
    else:
        alphas = np.linspace(0.0, 1.0, steps)
        scales = np.full(steps, 1.0 / (steps - 1))
        scales[[0, -1]] /= 2

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        total = torch.zeros_like(inputs)
        for alpha, scale in zip(alphas, scales):
            total += float(scale) * _gradient(model, float(alpha) * inputs, target)
        return total * inputs.detach()

    return call


def _ixg_by_hand(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> object:
    return _gradient(model, inputs, target) * inputs.detach()


def _saliency_by_hand(
    model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext
) -> object:
    return _gradient(model, inputs, target)


def _changes() -> list[Change]:
    ig = "path method's steps"
    out = [Change(f"ig-steps-{n}", "IG", ig, f"IG with {n} steps", builtin("IG", n_steps=n)) for n in
           (6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22, 24, 25, 28, 30, 32, 40)]  # fmt: skip
    rule = "path method's rule"
    for method in ("riemann_left", "riemann_right", "riemann_middle", "riemann_trapezoid"):
        for n in (IG_STEPS, 12, 16, 20):
            short = method.removeprefix("riemann_")
            out.append(Change(f"ig-{short}-{n}", "IG", rule, f"IG by the {short} rule, {n} steps",
                              builtin("IG", method=method, n_steps=n)))  # fmt: skip
    batch = "internal batch size"
    out += [Change(f"ig-batch-{b}", "IG", batch, f"IG in internal batches of {b}", builtin("IG", internal_batch_size=b))
            for b in (1, 3, 5, 7, 13, 33)]  # fmt: skip
    wide = "float64"
    out += [Change(f"{b.lower()}-float64", b, wide, f"{b} in float64", _float64(builtin(b)))
            for b in ("IG", "DL", "SA", "IxG", "GBP", "FA")]  # fmt: skip
    halves = "batch in two halves"
    out += [Change(f"{b.lower()}-halves", b, halves, f"{b} on each half of the batch", _halves(builtin(b)))
            for b in ("IG", "DL", "SA", "IxG", "GBP")]  # fmt: skip
    hand = "reimplementation by hand"
    out += [
        Change("ig-by-hand", "IG", hand, "IG by hand (Gauss-Legendre, 10)", _ig_by_hand(IG_STEPS, "gausslegendre")),
        Change("ig-by-hand-trapezoid-20", "IG", hand, "IG by hand (trapezoid, 20)", _ig_by_hand(20, "trapezoid")),
        Change("ixg-by-hand", "IxG", hand, "input x gradient by hand", _ixg_by_hand),
        Change("sa-by-hand", "SA", hand, "saliency by hand (the signed gradient)", _saliency_by_hand),
        Change("ig-by-hand-12", "IG", hand, "IG by hand (Gauss-Legendre, 12 nodes)", _ig_by_hand(12, "gausslegendre")),
    ]  # fmt: skip
    seeds = "sampler's seed"
    out += [Change(f"{b.lower()}-seed-{s}", b, seeds, f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
            for b in ("SG", "GS") for s in (1, 2, 3, 4, 5, 6)]  # fmt: skip
    samples = "sampler's sample count"
    out += [Change(f"gs-samples-{n}", "GS", samples, f"GradientShap with {n} samples", builtin("GS", n_samples=n))
            for n in (NOISE_SAMPLES + 2, NOISE_SAMPLES + 5, 2 * NOISE_SAMPLES, 3 * NOISE_SAMPLES)]  # fmt: skip
    return split(out)


def split(changes: list[Change]) -> list[Change]:
    """Within each kind, the changes alternate: calibration, held-out, calibration, …"""
    seen: dict[str, int] = {}
    halves = []
    for change in changes:
        i = seen[change.kind] = seen.get(change.kind, -1) + 1
        halves.append(dataclasses.replace(change, half=CALIBRATION if i % 2 == 0 else HELD_OUT))
    return halves


def _more_held_out() -> list[Change]:
    """A second held-out batch, added after the calibration (never calibrated on): more
    step counts, rules, batch sizes, reimplementations and seeds."""
    out = [Change(f"ig-steps-{n}", "IG", "path method's steps", f"IG with {n} steps", builtin("IG", n_steps=n))
           for n in (19, 21, 23, 26, 27, 29, 31, 35, 45, 50)]  # fmt: skip
    out += [Change(f"ig-middle-{n}", "IG", "path method's rule", f"IG by the middle rule, {n} steps",
                   builtin("IG", method="riemann_middle", n_steps=n)) for n in (8, 14, 24, 30)]  # fmt: skip
    out += [Change(f"ig-batch-{b}", "IG", "internal batch size", f"IG in internal batches of {b}",
                   builtin("IG", internal_batch_size=b)) for b in (2, 4, 9, 17)]  # fmt: skip
    out += [
        Change("ig-by-hand-16", "IG", "reimplementation by hand", "IG by hand (Gauss-Legendre, 16)",
               _ig_by_hand(16, "gausslegendre")),
        Change("ig-by-hand-8", "IG", "reimplementation by hand", "IG by hand (Gauss-Legendre, 8)",
               _ig_by_hand(8, "gausslegendre")),
        Change("sa-halves-float64", "SA", "float64", "saliency on each half of the batch, in float64",
               _halves(_float64(builtin("SA")))),
        Change("dl-halves-float64", "DL", "float64", "DeepLift on each half of the batch, in float64",
               _halves(_float64(builtin("DL")))),
    ]  # fmt: skip
    out += [Change(f"{b.lower()}-seed-{s}", b, "sampler's seed", f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
            for b in ("SG", "GS") for s in (7, 8, 9, 10)]  # fmt: skip
    counts = (NOISE_SAMPLES + 1, NOISE_SAMPLES + 8, 4 * NOISE_SAMPLES)
    out += [Change(f"gs-samples-{n}", "GS", "sampler's sample count", f"GradientShap with {n} samples",
                   builtin("GS", n_samples=n)) for n in counts]  # fmt: skip
    return [dataclasses.replace(c, half=HELD_OUT) for c in out]


def _smoothgrad(sigma: float, samples: int) -> Method:
    """The built-in SmoothGrad with noise of ``sigma`` × the inputs' spread and ``samples`` draws."""

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        from captum.attr import NoiseTunnel, Saliency

        stdevs = float(sigma * inputs.detach().float().std())
        return NoiseTunnel(Saliency(model)).attribute(inputs, nt_type="smoothgrad", nt_samples=samples,
                                                      nt_samples_batch_size=samples, stdevs=stdevs, target=target,
                                                      abs=False)  # fmt: skip

    return call


def _saliency_by_vjp(
    model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext
) -> object:
    """The signed gradient through torch.func.vjp (another autograd path)."""
    x = inputs.detach()
    out, pull = torch.func.vjp(lambda z: _outputs(model, z, target), x)
    return pull(torch.ones_like(out))[0]


def _third_held_out() -> list[Change]:
    """A third held-out batch (issue 53; never calibrated on): more of every kind, and two new
    kinds, the samplers' noise level and a gradient through another autograd path."""
    steps, rule = "path method's steps", "path method's rule"
    out = [Change(f"ig-steps-{n}", "IG", steps, f"IG with {n} steps", builtin("IG", n_steps=n))
           for n in (33, 34, 36, 38, 42, 48, 55, 60)]  # fmt: skip
    out += [Change(f"ig-middle-{n}", "IG", rule, f"IG by the middle rule, {n} steps",
                   builtin("IG", method="riemann_middle", n_steps=n)) for n in (9, 11, 13, 18, 22, 26)]  # fmt: skip
    out += [Change(f"ig-batch-{b}", "IG", "internal batch size", f"IG in internal batches of {b}",
                   builtin("IG", internal_batch_size=b)) for b in (6, 8, 11, 15, 21)]  # fmt: skip
    out += [Change(f"{b.lower()}-seed-{s}", b, "sampler's seed", f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
            for b in ("SG", "GS") for s in (11, 12, 13, 14, 15)]  # fmt: skip
    level = "sampler's noise level"
    out += [Change(f"sg-sigma-{round(100 * f)}", "SG", level, f"SmoothGrad with noise of {f:g} x the spread",
                   _smoothgrad(f, NOISE_SAMPLES)) for f in (0.12, 0.13, 0.14, 0.16, 0.17, 0.18)]  # fmt: skip
    out += [Change(f"gs-stdevs-{round(100 * f)}", "GS", level, f"GradientShap with input noise {f:g}",
                   builtin("GS", stdevs=f)) for f in (0.01, 0.02, 0.05)]  # fmt: skip
    out += [Change(f"sg-samples-{n}", "SG", "sampler's sample count", f"SmoothGrad with {n} samples",
                   _smoothgrad(0.15, n)) for n in (8, 12, 15, 20)]  # fmt: skip
    out += [Change("sa-by-vjp", "SA", "reimplementation by hand", "saliency through torch.func.vjp",
                   _saliency_by_vjp)]  # fmt: skip
    out += [Change(f"ig-steps-{n}", "IG", steps, f"IG with {n} steps", builtin("IG", n_steps=n))
            for n in (44, 52, 58, 65, 70)]  # fmt: skip
    out += [Change(f"ig-middle-{n}", "IG", rule, f"IG by the middle rule, {n} steps",
                   builtin("IG", method="riemann_middle", n_steps=n)) for n in (15, 17, 19, 21)]  # fmt: skip
    out += [Change(f"{b.lower()}-seed-{s}", b, "sampler's seed", f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
            for b in ("SG", "GS") for s in (16, 17, 18, 19, 20)]  # fmt: skip
    out += [Change(f"sg-sigma-{round(100 * f)}", "SG", level, f"SmoothGrad with noise of {f:g} x the spread",
                   _smoothgrad(f, NOISE_SAMPLES)) for f in (0.11, 0.19)]  # fmt: skip
    out += [Change(f"gs-stdevs-{round(100 * f)}", "GS", level, f"GradientShap with input noise {f:g}",
                   builtin("GS", stdevs=f)) for f in (0.03, 0.04)]  # fmt: skip
    out += [Change(f"sg-samples-{n}", "SG", "sampler's sample count", f"SmoothGrad with {n} samples",
                   _smoothgrad(0.15, n)) for n in (9, 11, 14, 16, 25)]  # fmt: skip
    out += [Change(f"gs-samples-{n}", "GS", "sampler's sample count", f"GradientShap with {n} samples",
                   builtin("GS", n_samples=n)) for n in (9, 13, 16)]  # fmt: skip
    return [dataclasses.replace(c, half=HELD_OUT) for c in out]


def _reordered(base: Method, seed: int | None) -> Method:
    """``base`` on the batch in another order (reversed, or a fixed permutation drawn from
    ``seed``), its maps put back in the caller's order: a refactor that gathers or sorts
    the samples differently (a sampler's draws then fall on other samples)."""

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        n = inputs.shape[0]
        if seed is None:
            order = torch.arange(n - 1, -1, -1, device=inputs.device)
        else:
            order = torch.from_numpy(np.random.default_rng(seed).permutation(n)).to(inputs.device)
        back = torch.argsort(order)
        moved_target = target[order] if isinstance(target, torch.Tensor) and target.dim() > 0 else target
        ctx = context
        if context.baseline is not None and context.baseline.shape[:1] == inputs.shape[:1]:
            ctx = dataclasses.replace(context, baseline=context.baseline[order])
        return base(model, inputs[order], moved_target, ctx)[back]

    return call


def _strided(base: Method) -> Method:
    """``base`` on inputs in another memory layout (channels-last for images, a transposed
    copy viewed back elsewhere): the same values, other kernels' summation order."""

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        if inputs.dim() == 4:
            laid = inputs.contiguous(memory_format=torch.channels_last)
        else:
            laid = inputs.transpose(0, -1).contiguous().transpose(0, -1)
        return base(model, laid, target, context).contiguous()

    return call


class _Scaled(torch.nn.Module):
    """``model``'s outputs times ``factor``."""

    def __init__(self, model: torch.nn.Module, factor: float):
        super().__init__()
        self.model, self.factor = model, factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x) * self.factor


def _rescaled_output(base: Method, factor: float) -> Method:
    """``base`` on the model's outputs times ``factor``, its maps divided by it (a wrapper
    that normalises the output and undoes it): the same maps up to rounding."""

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        return base(_Scaled(model, factor), inputs, target, context) / factor

    return call


class _InputScaled(torch.nn.Module):
    """``model`` on its inputs times ``factor`` (a number, or a tensor of one sample's shape)."""

    def __init__(self, model: torch.nn.Module, factor: float | torch.Tensor):
        super().__init__()
        self.model, self.factor = model, factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x * self.factor)


#: the built-ins whose maps are gradients (they scale with 1 / the inputs' unit; the others
#: multiply by the inputs' difference to a zero baseline, or compare outputs, and do not)
GRADIENT_MAPS = ("SA", "GBP", "SG")


def _inputs_scaled(base: str, scale_of: Callable[[torch.Tensor], float | torch.Tensor]) -> Method:
    """Built-in ``base`` on the inputs divided by ``scale_of(inputs)`` (a number, or a
    positive tensor of one sample's shape), its zero baseline and background with them,
    through the model multiplying them back, a gradient map divided by the scale (a
    library's input normalisation folded into the model): the same maps up to rounding."""
    method = builtin(base)

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        scale = scale_of(inputs)
        background = context.background
        ctx = dataclasses.replace(
            context,
            baseline=None if context.baseline is None else context.baseline / scale,
            background_source=None if background is None else (lambda: background / scale),
        )
        out = method(_InputScaled(model, scale), inputs / scale, target, ctx)
        return out / scale if base in GRADIENT_MAPS else out

    return call


def _rescaled_input(base: str, factor: float) -> Method:
    """Built-in ``base`` on the inputs divided by ``factor``, the model scaling them back."""
    return _inputs_scaled(base, lambda inputs: factor)


def _normalised_features(base: str, seed: int) -> Method:
    """Built-in ``base`` on the inputs divided per input element by a fixed positive scale
    (0.5 to 2, drawn from ``seed``), the model multiplying them back.  Not SmoothGrad,
    whose noise would then differ per feature."""

    def scale_of(inputs: torch.Tensor) -> torch.Tensor:
        drawn = np.random.default_rng(seed).uniform(0.5, 2.0, size=tuple(inputs.shape[1:]))
        return torch.from_numpy(drawn).to(device=inputs.device, dtype=inputs.dtype)

    return _inputs_scaled(base, scale_of)


def _occlusion_per_pass(n: int) -> Method:
    """Occlusion evaluating ``n`` occluded copies per forward pass (the suite picks 8)."""
    base = builtin("OCC")

    def call(model: torch.nn.Module, inputs: torch.Tensor, target: object, context: AttributionContext) -> torch.Tensor:
        return base(
            model,
            inputs,
            target,
            dataclasses.replace(context, settings={**context.settings, "perturbations_per_eval": n}),
        )

    return call


#: the built-ins a new kind of change is tried on (GradCAM only where it applies: images)
EVERY_BASE = ("SA", "IxG", "IG", "DL", "GBP", "SG", "GS", "FA", "OCC", "GradCAM")


def _fourth_held_out() -> list[Change]:
    """A fourth held-out batch (issue 66; never calibrated on): six new kinds, tried on
    every built-in of the default run: the samples' order, the inputs' memory layout, the
    model's output rescaled and undone, the perturbation methods' copies per pass, the
    inputs rescaled and undone inside the model, and a per-feature normalisation folded
    into the model."""
    order = "sample order"
    out = [Change(f"{b.lower()}-reversed", b, order, f"{b} on the batch in reverse order", _reordered(builtin(b), None))
           for b in EVERY_BASE]  # fmt: skip
    out += [Change(f"{b.lower()}-permuted-{s}", b, order, f"{b} on the batch in a permuted order (seed {s})",
                   _reordered(builtin(b), s)) for s in (1, 2, 3) for b in EVERY_BASE]  # fmt: skip
    out += [Change(f"{b.lower()}-strided", b, "memory layout", f"{b} on inputs in another memory layout",
                   _strided(builtin(b))) for b in EVERY_BASE]  # fmt: skip
    out += [Change(f"{b.lower()}-output-x3", b, "output rescaled", f"{b} on the outputs x 3, its maps / 3",
                   _rescaled_output(builtin(b), 3.0)) for b in EVERY_BASE]  # fmt: skip
    per_pass = "copies per pass"
    out += [Change(f"fa-per-pass-{n}", "FA", per_pass, f"feature ablation, {n} copies per forward pass",
                   builtin("FA", perturbations_per_eval=n)) for n in (1, 2, 3, 5, 12, 16)]  # fmt: skip
    out += [Change(f"occ-per-pass-{n}", "OCC", per_pass, f"occlusion, {n} copies per forward pass",
                   _occlusion_per_pass(n)) for n in (1, 2, 3, 5, 12, 16)]  # fmt: skip
    scale = "input rescaled"
    factors = ((3.0, "x3"), (0.3, "x03"), (7.0, "x7"), (1.7, "x17"), (0.6, "x06"))
    out += [Change(f"{b.lower()}-input-{label}", b, scale, f"{b} on the inputs / {f:g}, the model scaling them back",
                   _rescaled_input(b, f)) for f, label in factors for b in EVERY_BASE]  # fmt: skip
    normalised = "features normalised"
    out += [Change(f"{b.lower()}-normalised-{seed}", b, normalised,
                   f"{b} on the inputs normalised per feature (seed {seed}), the model undoing it",
                   _normalised_features(b, seed)) for seed in (1, 2) for b in EVERY_BASE if b != "SG"]  # fmt: skip
    return [dataclasses.replace(c, half=HELD_OUT) for c in out]


def _fifth_held_out() -> list[Change]:
    """A fifth held-out batch (issue 80; never seen): the samplers' seeds 21 to 30, drawn after
    sg-seed-16's red set the samplers' unseen sign allowance, to check that rule on seeds
    it was not set on."""
    out = [Change(f"{b.lower()}-seed-{s}", b, "sampler's seed", f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
           for b in ("SG", "GS") for s in range(21, 31)]  # fmt: skip
    return [dataclasses.replace(c, half=HELD_OUT) for c in out]


def _sixth_held_out() -> list[Change]:
    """A sixth held-out batch (issue 80; never seen): the samplers' seeds 31 to 40, drawn after
    gs-seed-10, 12 and 14 failed symbolic batch consistency and a self-seeded sampler's noise
    came to be measured by six draws of each sample, to check that rule on seeds it was not
    set on."""
    out = [Change(f"{b.lower()}-seed-{s}", b, "sampler's seed", f"{b} drawing from seed {s}", _reseeded(builtin(b), s))
           for b in ("SG", "GS") for s in range(31, 41)]  # fmt: skip
    return [dataclasses.replace(c, half=HELD_OUT) for c in out]


CHANGES: dict[str, Change] = {
    c.name: c
    for c in (
        *_changes(),
        *_more_held_out(),
        *_third_held_out(),
        *_fourth_held_out(),
        *_fifth_held_out(),
        *_sixth_held_out(),
    )
}
#: the unchanged built-ins the changes are judged against, registered as ``base-<name>``
BASES = sorted({c.base for c in CHANGES.values()})


def explainer(name: str) -> Explainer:
    """The registered explainer of change ``name`` or of ``base-<built-in>``, declaring
    what the built-in declares (completeness, noise, its known limitations, where it
    applies), as a library declares its own explainer's."""
    base = name.removeprefix("base-") if name.startswith("base-") else CHANGES[name].base
    declared = builtin_explainers()[base]
    method: Callable[..., object] = builtin(base) if name.startswith("base-") else CHANGES[name].method
    promises = {f: getattr(declared, f) for f in ("completeness", "stochastic", "known")}
    return Explainer(name, method, applies_to=declared.applies_to, **promises)
