"""Realistic regressions of captum methods, and benign changes, as explainers.

Each mutant is what an attribution library could ship by mistake (or on
purpose, for the benign ones): a built-in method of captum, called as the
plugin's built-in is called, then changed before or after the call.  The
mutation benchmark (``run.py``) registers one at a time as the explainer
``candidate`` and runs it through the default run, against a baseline made
from its unmutated method (``base``).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from captum.attr import FeatureAblation, IntegratedGradients, LayerGradCam, NoiseTunnel, Occlusion, Saliency

from pytest_chaosmining.explainers import IG_STEPS, NOISE_SAMPLES, Explainer, NotApplicable, builtin_explainers
from pytest_chaosmining.explainers.binding import call_explainer, upsampled
from pytest_chaosmining.explainers.context import AttributionContext

#: an explainer as the plugin calls a callable: (model, inputs, target, context) -> map
Method = Callable[[torch.nn.Module, torch.Tensor, "int | torch.Tensor | None", AttributionContext], torch.Tensor]

HARMFUL, BENIGN, COST, CALIBRATION = "harmful", "benign", "benign (cost)", "calibration"
#: a regression confined to part of the data (one class, some conditions): harmful, counted apart
PARTIAL = "harmful (partial)"


@dataclass(frozen=True)
class Mutant:
    """A change to ``base`` (a built-in's name): what it is and whether a gate must fail it.
    ``declares``: registered declaring what its base declares (completeness, noise, where
    it applies), as a library's own ``Explainer`` would; else as a plain callable that
    declares nothing, as a library's wrapper function would be."""

    name: str
    base: str
    kind: str
    what: str
    method: Method
    declares: bool = True


def builtin(name: str, **kwargs: object) -> Method:
    """The built-in ``name`` as the plugin calls it (its keyword arguments updated by ``kwargs``)."""
    explainer = builtin_explainers()[name]
    explainer = dataclasses.replace(explainer, attribute_kwargs={**explainer.attribute_kwargs, **kwargs})

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        out = call_explainer(explainer, model, inputs, target, context)
        return out[0] if isinstance(out, tuple) else out  # type: ignore[return-value]

    return call


def after(base: Method, change: Callable[[torch.Tensor, torch.Tensor, AttributionContext], torch.Tensor]) -> Method:
    """``base``'s map changed by ``change(map, inputs, context)``."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        return change(base(model, inputs, target, context).detach(), inputs, context)

    return call


def _noise(like: torch.Tensor, scale: float) -> torch.Tensor:
    gen = torch.Generator().manual_seed(1)
    noise = torch.randn(like.shape, generator=gen, dtype=torch.float32).to(like.device, like.dtype)
    return noise * scale * like.float().std().clamp_min(1e-12)


def _blur(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    """Box blur of 7 pixels (images) or 5 positions along the last axis (audio, tabular)."""
    if attr.dim() == 4:
        return F.avg_pool2d(attr, 7, stride=1, padding=3, count_include_pad=False)
    flat = attr.reshape(-1, 1, attr.shape[-1])
    return F.avg_pool1d(flat, 5, stride=1, padding=2, count_include_pad=False).reshape(attr.shape)


def _wrong_target(base: Method) -> Method:
    """The next class instead of the asked one (a regression output has one target)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        if context.task != "classification" or target is None:
            return base(model, inputs, target, context)
        with torch.no_grad():
            classes = int(model(inputs[:1]).shape[-1])
        return base(model, inputs, (target + 1) % classes, context)

    return call


def _ig_baseline(baseline: Callable[[torch.Tensor], torch.Tensor]) -> Method:
    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        return IntegratedGradients(model).attribute(
            inputs, baselines=baseline(inputs), target=target, n_steps=IG_STEPS, internal_batch_size=4096
        )

    return call


def _fa_baseline_is_input(
    model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
) -> torch.Tensor:
    return FeatureAblation(model).attribute(
        inputs, baselines=inputs, target=target, feature_mask=context.feature_mask, perturbations_per_eval=8
    )


def _huge_sigma(
    model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
) -> torch.Tensor:
    sigma = float(10.0 * inputs.detach().float().std())  # 10 x the inputs' spread (the built-in: 0.15 x)
    return NoiseTunnel(Saliency(model)).attribute(
        inputs,
        nt_type="smoothgrad",
        nt_samples=NOISE_SAMPLES,
        nt_samples_batch_size=NOISE_SAMPLES,
        stdevs=sigma,
        target=target,
        abs=False,
    )


def _cam_first_layer(
    model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
) -> torch.Tensor:
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    if not convs:
        raise NotApplicable("no 2-D convolution")
    return upsampled(LayerGradCam(model, convs[0]).attribute(inputs, target=target, relu_attributions=True), inputs)


def _occlusion_big_window(
    model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
) -> torch.Tensor:
    window = tuple(min(4 * w, s) for w, s in zip(context.window or (1,) * (inputs.dim() - 1), inputs.shape[1:]))
    return Occlusion(model).attribute(
        inputs, sliding_window_shapes=window, strides=window, target=target, perturbations_per_eval=8
    )


def _untrained_copy(base: Method) -> Method:
    """``base`` on a re-initialised copy of the model (the weights never loaded)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        fresh = copy.deepcopy(model)
        torch.manual_seed(1)
        for module in fresh.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
        return base(fresh, inputs, target, context)

    return call


def _float64(base: Method) -> Method:
    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        wide = copy.deepcopy(model).double()
        ctx = dataclasses.replace(context, baseline=None if context.baseline is None else context.baseline.double())
        return base(wide, inputs.double(), target, ctx).to(inputs.dtype)

    return call


def _first_samples_map(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    return attr[:1].expand_as(attr).contiguous()


def _half_zeroed(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    out = attr.clone()
    out[attr.shape[0] // 2 :] = 0
    return out


def _flip_features(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    """Images: rows and columns transposed (square images); otherwise the last axis reversed."""
    if attr.dim() == 4 and attr.shape[-1] == attr.shape[-2]:
        return attr.transpose(-1, -2).contiguous()
    return attr.flip(-1)


def _swap_halves(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    return attr.roll(attr.shape[-1] // 2, dims=-1)


def _per_sample_normalised(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    peak = attr.abs().flatten(1).amax(1).clamp_min(1e-12)
    return attr / peak.view(-1, *([1] * (attr.dim() - 1)))


def _small_drift(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    """Each position scaled by a fixed random weight in [0.7, 1.3]: the maps move, their top-k barely."""
    gen = torch.Generator().manual_seed(3)
    return attr * (0.7 + 0.6 * torch.rand(attr.shape[1:], generator=gen)).to(attr.device, attr.dtype)


def _random_weights(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    gen = torch.Generator().manual_seed(2)
    return attr * torch.rand(attr.shape[1:], generator=gen).to(attr.device, attr.dtype)


def _sum_of_outputs(
    model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
) -> torch.Tensor:
    """The gradient of the sum of all outputs: the target ignored."""

    def total(x: torch.Tensor) -> torch.Tensor:
        return model(x).reshape(len(x), -1).sum(1)

    return Saliency(total).attribute(inputs, abs=False)


def _retargeted(base: Method, how: Callable[[torch.Tensor], torch.Tensor]) -> Method:
    """``base`` asked for the classes ``how(target)`` instead of the asked ones (a tensor
    target; a regression output has only output 0)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        changed = how(target) if isinstance(target, torch.Tensor) and target.dim() > 0 else 0
        return base(model, inputs, changed, context)

    return call


def _carried_state(attr: torch.Tensor, inputs: torch.Tensor, context: AttributionContext) -> torch.Tensor:
    """Each sample's map plus half the previous sample's (state carried from one sample to the next)."""
    out = attr.clone()
    out[1:] += 0.5 * attr[:-1]
    return out


def _reseeded(base: Method, seed: int) -> Method:
    """``base`` drawing its random numbers from another seed (the plugin seeds torch and
    numpy 0 per call; GradientShap draws its baselines from numpy, SmoothGrad its noise
    from torch: both are reseeded)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        torch.manual_seed(seed)
        np.random.seed(seed)
        return base(model, inputs, target, context)

    return call


IG, SA = builtin("IG"), builtin("SA")


def _class_lost(base: Method, lost: int) -> Method:
    """``base`` with all-zero maps for the samples explained for class ``lost`` (a bug on
    one class's inputs only; a regressor's scalar target is no class: unchanged)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        out = base(model, inputs, target, context).detach().clone()
        if isinstance(target, torch.Tensor) and target.dim() == 1 and len(target) == len(out):
            out[target.to(out.device) == lost] = 0.0
        return out

    return call


def _rough(inputs: torch.Tensor) -> torch.Tensor:
    """Per sample: the mean absolute difference of neighbours along the last axis over
    the sample's range (uniform-noise backgrounds: about 1/3; photographs, tones and
    tabular rows of sorted features: far less)."""
    x = inputs.detach().float().flatten(1, -2) if inputs.dim() > 2 else inputs.detach().float().unsqueeze(1)
    step = (x[..., 1:] - x[..., :-1]).abs().mean(dim=(-1, -2))
    span = (x.amax(dim=(-1, -2)) - x.amin(dim=(-1, -2))).clamp_min(1e-12)
    return step / span


def _noisy_background_lost(base: Method) -> Method:
    """``base`` with all-zero maps for images and clips on a uniform-noise background (a bug
    confined to the random-background conditions, RBFP and RBRP)."""

    def call(
        model: torch.nn.Module, inputs: torch.Tensor, target: int | torch.Tensor | None, context: AttributionContext
    ) -> torch.Tensor:
        out = base(model, inputs, target, context).detach().clone()
        if inputs.dim() > 2:
            out[_rough(inputs).to(out.device) > 0.2] = 0.0
        return out

    return call


MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        # -- harmful: what a library could ship by mistake ------------------------------------------
        Mutant("ig_sign_flip", "IG", HARMFUL, "IG's sign flipped", after(IG, lambda a, x, c: -a)),
        Mutant(
            "ig_feature_off_by_one",
            "IG",
            HARMFUL,
            "each map shifted by one position along the last axis",
            after(IG, lambda a, x, c: a.roll(1, dims=-1)),
        ),
        Mutant(
            "ig_batch_order",
            "IG",
            HARMFUL,
            "each sample gets its neighbour's map (batch rolled by one)",
            after(IG, lambda a, x, c: a.roll(1, dims=0)),
        ),
        Mutant(
            "ig_first_sample_map",
            "IG",
            HARMFUL,
            "every sample gets the first sample's map",
            after(IG, _first_samples_map),
        ),
        Mutant(
            "ig_wrong_target", "IG", HARMFUL, "the next class explained instead of the asked one", _wrong_target(IG)
        ),
        Mutant("ig_one_step", "IG", HARMFUL, "IG with 1 step instead of 10", builtin("IG", n_steps=1)),
        Mutant(
            "ig_noise",
            "IG",
            HARMFUL,
            "Gaussian noise of the map's own spread added",
            after(IG, lambda a, x, c: a + _noise(a, 1.0)),
        ),
        Mutant(
            "ig_half_batch_zeroed",
            "IG",
            HARMFUL,
            "the second half of the batch gets all-zero maps",
            after(IG, _half_zeroed),
        ),
        Mutant(
            "ig_baseline_is_input",
            "IG",
            HARMFUL,
            "IG's baseline equal to the input (all-zero maps)",
            _ig_baseline(lambda x: x),
        ),
        Mutant(
            "ig_baseline_noise",
            "IG",
            HARMFUL,
            "IG from a uniform-noise baseline instead of zeros",
            _ig_baseline(lambda x: torch.rand(x.shape, generator=torch.Generator().manual_seed(3)).to(x)),
        ),
        Mutant(
            "ig_transposed",
            "IG",
            HARMFUL,
            "images transposed, other maps reversed along the last axis",
            after(IG, _flip_features),
        ),
        Mutant("ig_swapped_halves", "IG", HARMFUL, "the two halves of the last axis swapped", after(IG, _swap_halves)),
        Mutant("ig_untrained_model", "IG", HARMFUL, "IG of a re-initialised copy of the model", _untrained_copy(IG)),
        Mutant(
            "sa_blurred",
            "SA",
            HARMFUL,
            "saliency blurred (7-pixel box, 5 along the last axis elsewhere)",
            after(SA, _blur),
        ),
        Mutant(
            "sa_input_magnitude",
            "SA",
            HARMFUL,
            "|input| returned instead of the gradient (model-free)",
            after(SA, lambda a, x, c: x.detach().abs()),
        ),
        Mutant(
            "sa_sign_only",
            "SA",
            HARMFUL,
            "only the gradient's sign kept (maps of -1, 0, 1: tied)",
            after(SA, lambda a, x, c: a.sign()),
        ),
        Mutant(
            "sa_constant",
            "SA",
            HARMFUL,
            "a constant map (every feature tied)",
            after(SA, lambda a, x, c: torch.ones_like(a)),
        ),
        Mutant(
            "ig_small_drift",
            "IG",
            HARMFUL,
            "each position scaled by a fixed random weight in [0.7, 1.3] (a small drift)",
            after(IG, _small_drift),
        ),
        Mutant(
            "sa_random_reweighting",
            "SA",
            HARMFUL,
            "each position scaled by a fixed random weight",
            after(SA, _random_weights),
        ),
        Mutant(
            "fa_baseline_is_input",
            "FA",
            HARMFUL,
            "ablation baseline equal to the input (all-zero maps)",
            _fa_baseline_is_input,
        ),
        Mutant(
            "sg_huge_sigma",
            "SG",
            HARMFUL,
            "SmoothGrad with sigma 10x the inputs' spread (built-in: 0.15x)",
            _huge_sigma,
        ),
        Mutant(
            "gradcam_first_layer",
            "GradCAM",
            HARMFUL,
            "Grad-CAM on the first convolution instead of the last",
            _cam_first_layer,
        ),
        Mutant(
            "occ_window_4x", "OCC", HARMFUL, "occlusion with windows and strides 4x the feature", _occlusion_big_window
        ),
        # -- harmful, of the kinds a check of an explainer's own merit catches without a baseline ----
        Mutant(
            "ig_sign_flip_undeclared",
            "IG",
            HARMFUL,
            "IG's sign flipped, registered as a plain callable declaring nothing",
            after(IG, lambda a, x, c: -a),
            declares=False,
        ),
        Mutant(
            "sa_sum_of_outputs",
            "SA",
            HARMFUL,
            "the gradient of the sum of all outputs (target ignored)",
            _sum_of_outputs,
        ),  # fmt: skip
        Mutant(
            "ig_fixed_class",
            "IG",
            HARMFUL,
            "class 0 explained whatever class was asked",
            _retargeted(IG, torch.zeros_like),
        ),
        Mutant(
            "ig_first_target",
            "IG",
            HARMFUL,
            "the first sample's target used for the whole batch",
            _retargeted(IG, lambda t: t[:1].expand_as(t).contiguous()),
        ),  # fmt: skip
        Mutant(
            "ig_batch_mean_baseline",
            "IG",
            HARMFUL,
            "IG from the batch's mean instead of zeros",
            _ig_baseline(lambda x: x.detach().mean(0, keepdim=True).expand_as(x).contiguous()),
        ),
        Mutant(
            "sa_carried_state",
            "SA",
            HARMFUL,
            "each sample's map plus half the previous sample's",
            after(SA, _carried_state),
        ),  # fmt: skip
        Mutant(
            "ig_first_sample_baseline",
            "IG",
            HARMFUL,
            "IG of every sample from the batch's first sample",
            _ig_baseline(lambda x: x.detach()[:1].expand_as(x).contiguous()),
        ),  # fmt: skip
        Mutant(
            "ig_scaled_declared",
            "IG",
            HARMFUL,
            "IG times 1000 while declaring completeness (its sums are 1000 x f(x) - f(0))",
            after(IG, lambda a, x, c: a * 1000.0),
        ),
        # -- partial: harmful on part of the data only ------------------------------------------------
        Mutant(
            "ig_class_lost",
            "IG",
            PARTIAL,
            "IG with all-zero maps for class 3 (plain callable)",
            _class_lost(IG, 3),
            declares=False,
        ),  # fmt: skip
        Mutant(
            "sa_class_lost",
            "SA",
            PARTIAL,
            "saliency with all-zero maps for class 7 (plain callable)",
            _class_lost(SA, 7),
            declares=False,
        ),  # fmt: skip
        Mutant(
            "ig_class_lost_declared",
            "IG",
            PARTIAL,
            "IG with all-zero maps for class 5, declaring as IG",
            _class_lost(IG, 5),
        ),  # fmt: skip
        Mutant(
            "ig_noisy_background_lost",
            "IG",
            PARTIAL,
            "IG with all-zero maps on uniform-noise backgrounds (the RB conditions only)",
            _noisy_background_lost(IG),
        ),  # fmt: skip
        # -- benign: a gate must not fail them on a score ----------------------------------------------
        Mutant(
            "ig_scaled",
            "IG",
            BENIGN,
            "IG times 1000 (declaring nothing: a rescaled map keeps no completeness promise)",
            after(IG, lambda a, x, c: a * 1000.0),
            declares=False,
        ),
        Mutant(
            "ig_per_sample_normalised",
            "IG",
            BENIGN,
            "each sample's map divided by its largest |value| (declaring nothing)",
            after(IG, _per_sample_normalised),
            declares=False,
        ),
        Mutant(
            "sg_self_seeded",
            "SG",
            BENIGN,
            "SmoothGrad drawing its noise from a seed of its own (7)",
            _reseeded(builtin("SG"), 7),
            declares=False,
        ),  # fmt: skip
        Mutant(
            "gs_self_seeded",
            "GS",
            BENIGN,
            "GradientShap drawing its samples from a seed of its own (7)",
            _reseeded(builtin("GS"), 7),
        ),  # fmt: skip
        Mutant("ig_float64", "IG", BENIGN, "IG computed in float64", _float64(IG)),
        Mutant(
            "ig_tiny_noise",
            "IG",
            BENIGN,
            "noise of 1e-6 of the map's spread added",
            after(IG, lambda a, x, c: a + _noise(a, 1e-6)),
        ),
        Mutant("sa_abs", "SA", BENIGN, "saliency's absolute value (abs=True)", builtin("SA", abs=True)),
        Mutant(
            "ig_50_steps",
            "IG",
            COST,
            "IG with 50 steps instead of 10 (more work, same answer)",
            builtin("IG", n_steps=50),
        ),
    )
}


#: benign changes that calibrate the largest score drop a baseline allows
#: (``calibrate_drops.py``): none of them is in :data:`MUTANTS`, whose benign
#: changes then check the calibrated tolerances on changes they never saw
CALIBRATION_CHANGES: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant("cal_ig_20_steps", "IG", CALIBRATION, "IG with 20 steps", builtin("IG", n_steps=20)),
        Mutant("cal_ig_16_steps", "IG", CALIBRATION, "IG with 16 steps", builtin("IG", n_steps=16)),
        Mutant(
            "cal_ig_trapezoid",
            "IG",
            CALIBRATION,
            "IG by the trapezoid rule (10 steps)",
            builtin("IG", method="riemann_trapezoid"),
        ),
        Mutant(
            "cal_ig_batch_7", "IG", CALIBRATION, "IG in internal batches of 7", builtin("IG", internal_batch_size=7)
        ),
        Mutant("cal_sg_seed_1", "SG", CALIBRATION, "SmoothGrad's noise from seed 1", _reseeded(builtin("SG"), 1)),
        Mutant("cal_sg_seed_2", "SG", CALIBRATION, "SmoothGrad's noise from seed 2", _reseeded(builtin("SG"), 2)),
        Mutant("cal_gs_seed_1", "GS", CALIBRATION, "GradientShap's samples from seed 1", _reseeded(builtin("GS"), 1)),
        Mutant("cal_gs_seed_2", "GS", CALIBRATION, "GradientShap's samples from seed 2", _reseeded(builtin("GS"), 2)),
        Mutant("cal_dl_float64", "DL", CALIBRATION, "DeepLift in float64", _float64(builtin("DL"))),
        Mutant("cal_sa_float64", "SA", CALIBRATION, "saliency in float64", _float64(SA)),
    )
}

#: mutants that do the work of their base and a cheap change of its map: a cost failure of theirs
#: is a false alarm (the measured false-alarm rate of the cost gate under the load of a -n 2 run)
SAME_WORK = frozenset(
    {
        "ig_sign_flip",
        "ig_sign_flip_undeclared",
        "ig_fixed_class",
        "ig_first_target",
        "sa_carried_state",
        "ig_scaled_declared",
        "ig_feature_off_by_one",
        "ig_batch_order",
        "ig_first_sample_map",
        "ig_half_batch_zeroed",
        "ig_transposed",
        "ig_swapped_halves",
        "sa_input_magnitude",
        "sa_sign_only",
        "sa_constant",
        "sa_random_reweighting",
        "ig_small_drift",
        "ig_scaled",
        "ig_per_sample_normalised",
        "ig_tiny_noise",
        "ig_noise",
        "ig_wrong_target",
        "sa_blurred",
    }
)

#: the unmutated methods the baselines are made from
BASES: dict[str, Method] = {
    name: builtin(name) for name in sorted({m.base for m in (*MUTANTS.values(), *CALIBRATION_CHANGES.values())})
}


def explainer(name: str) -> Explainer:
    """The explainer ``candidate`` for mutant ``name``, or for ``base:<built-in>``."""
    if name.startswith("base:"):
        method, base = BASES[name.removeprefix("base:")], name.removeprefix("base:")
    else:
        mutant = MUTANTS.get(name) or CALIBRATION_CHANGES[name]
        method, base = mutant.method, mutant.base
    declared = builtin_explainers()[base]  # a library declares what its method promises: so does the candidate
    if name.startswith("base:") or (MUTANTS.get(name) or CALIBRATION_CHANGES[name]).declares:
        # every declaration the built-in makes (an earlier version of the plugin, run for the "before"
        # figures, has fewer fields)
        fields = {f.name for f in dataclasses.fields(Explainer)} & {"completeness", "stochastic"}
        promises = {f: getattr(declared, f) for f in fields}
        return Explainer("candidate", method, applies_to=declared.applies_to, **promises)
    return Explainer("candidate", method, applies_to=declared.applies_to)
