"""The BAM suite's heavy half: training or loading a case's models, their accuracies, the
neutral patches and an explainer's MCS, IDR and IIR (torch)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.training.classification import (
    ClassifierTraining,
    predict_array,
    to_float,
    train_classifier,
)
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE
from pytest_chaosmining.suite_kit.seam import COST
from pytest_chaosmining.suites.bam import data as bam_data
from pytest_chaosmining.suites.bam.data import generate
from pytest_chaosmining.suites.bam.data_spec import BamDataSpec
from pytest_chaosmining.suites.bam.metrics import (
    NEUTRAL_TOLERANCE,
    input_dependence,
    input_independence,
    model_contrast,
    neutral_patch,
    normalised_maps,
    random_regions,
    region_attribution,
)
from pytest_chaosmining.suites.bam.spec import (
    BAM_DATA_CODE,
    CHECK_IMAGES,
    SUITE,
    BamCase,
    BamModels,
    bam_code,
    model_config,
)
from pytest_chaosmining.testbeds.digits.training import grid_mask, image_context, untrained_model
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Remembered


def _train(
    case: BamCase,
    role: str,
    data: Callable[[], tuple[np.ndarray, np.ndarray]],
    cache: ModelCache,
    device: torch.device,
    progress: Callable[..., None] | None,
) -> tuple[Any, float]:
    """The model of ``role``, from the cache, else the pack, else trained; ``data()``
    (its training images and labels) is made only where a model is checked or trained."""

    def build() -> torch.nn.Module:
        return untrained_model(case)

    def fit(model: torch.nn.Module) -> float:
        settings = ClassifierTraining(case.epochs, case.batch_size, case.lr, t0=case.epochs)
        images, labels = data()
        return train_classifier(
            model, torch.from_numpy(images), torch.from_numpy(labels), settings, case.seed, progress
        )

    config = model_config(case, role, device.type)

    def check(model: torch.nn.Module) -> float:
        """Accuracy on the first training images (the pack's reproduction check)."""

        images, labels = data()
        return float((predict_array(model, images[:CHECK_IMAGES]) == labels[:CHECK_IMAGES]).mean())

    model, meta = cache.model(SUITE, config, build, fit, device, bam_code(), check)
    return model, float(meta["train_seconds"])


def _lazily(spec: BamDataSpec) -> Callable[[str], Callable[[], tuple[np.ndarray, np.ndarray]]]:
    """``labels → data()``: the images of ``spec`` with those labels, generated on the
    first call of any of them (once)."""
    made = functools.cache(lambda: generate(spec))

    def data(labels: str) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        return lambda: (made().images, getattr(made(), labels))

    return data


def _split(spec: BamDataSpec, cache: ModelCache) -> Any:
    """The images of ``spec`` (embedded ones through ``cache``'s data)."""
    if spec.source != "embedded":
        return generate(spec)
    return cache.data.get_or_make(
        "bam",
        spec,
        lambda: generate(spec),
        bam_data.BamData,
        BAM_DATA_CODE,
    )


def trained_models(
    case: BamCase,
    cache: ModelCache,
    device: torch.device,
    progress: Callable[[str], Any] = lambda label: None,
    remembered: Remembered[dict[str, Any]] | None = None,
) -> BamModels:
    """Train (or load) f_o, f_s and every f_k; measure their accuracies (kept by
    ``remembered(key, measure)`` under the models' weights where given)."""

    # the training data is made only where a model is not in the cache (a warm run makes none)

    train = _lazily(case.data_spec("objects", "train"))
    f_o, t_o = _train(case, "object", train("objects"), cache, device, progress("object model"))
    f_s, t_s = _train(case, "scene", train("scenes"), cache, device, progress("scene model"))
    seconds = {"object": t_o, "scene": t_s}
    f_k = {}
    for k in case.ks:
        common = _lazily(case.data_spec("common", "train", k))
        f_k[k], seconds[f"k{k:g}"] = _train(
            case, f"k{k:g}", common("scenes"), cache, device, progress(f"scene model k={k:g}")
        )
    val = _split(case.data_spec("objects", "val"), cache)
    cf_val = _split(case.data_spec("common", "val", 1.0, scene_class=0), cache)

    def measure() -> dict[str, Any]:
        return _accuracies(f_o, f_s, f_k, val, cf_val)

    if remembered is None:
        measured = measure()
    else:
        key: dict[str, object] = {"accuracies": case.id, "weights": weights_digest(f_o, f_s, *f_k.values())}
        measured = remembered(key, measure)
    cf_drop = {float(k): float(drop) for k, drop in measured["cf_drop"]}
    return BamModels(case, f_o, f_s, f_k, val, cf_val, dict(measured["accuracy"]), cf_drop, seconds)


def _accuracies(f_o: Any, f_s: Any, f_k: dict[float, Any], val: Any, cf_val: Any) -> dict[str, Any]:
    """The accuracies of f_o and f_s on each version of the validation images, and
    what each f_k loses on scene-0 images when the common feature is removed."""
    accuracy = {}
    for name, model, labels in (("f_o", f_o, val.objects), ("f_s", f_s, val.scenes)):
        for version in ("images", "no_object", "gray"):
            accuracy[f"{name}/{version}"] = float((predict_array(model, getattr(val, version)) == labels).mean())
    cf_drop = []
    for k, model in f_k.items():
        with_cf = float((predict_array(model, cf_val.images) == 0).mean())
        without = float((predict_array(model, cf_val.no_object) == 0).mean())
        accuracy[f"f_k{k:g}/cf"], accuracy[f"f_k{k:g}/no_cf"] = with_cf, without
        cf_drop.append([k, with_cf - without])
    return {"accuracy": accuracy, "cf_drop": cf_drop}


def _attribute(
    case: BamCase, explainer: Explainer, model: Any, images: np.ndarray, device: torch.device, internal_batch_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Normalised maps of ``images`` for the predicted class, and the predictions."""
    preds = predict_array(model, images)
    cell = max(1, case.canvas // 8)
    context = image_context(
        "bam",
        grid_mask(case.canvas, cell).to(device),
        cell,
        device,
        {"internal_batch_size": internal_batch_size, "perturbations_per_eval": 8},
        functools.partial(_background, case),
    )

    x, target = to_float(torch.from_numpy(images)).to(device), torch.from_numpy(preds).to(device)
    attr, _ = timed(lambda: attribute(explainer, model, x, target, context), device)
    return normalised_maps(attr.cpu().numpy()), preds


@functools.lru_cache(maxsize=2)
def _background(case: BamCase) -> Any:
    """:data:`BACKGROUND_SIZE` training images (object on scene) of ``case`` as floats."""
    small = dataclasses.replace(case, n_train=BACKGROUND_SIZE)
    return to_float(torch.from_numpy(generate(small.data_spec("objects", "train")).images[:BACKGROUND_SIZE]))


def neutral_patches(models: BamModels, n: int, device: torch.device, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """δ for the first ``n`` no-object validation images on f_s (initialised from
    their object's pixels); returns ``x + δ`` as uint8 and whether δ is
    functionally neutral there: f_s's prediction unchanged and its logits within
    ``NEUTRAL_TOLERANCE`` (relative L2) of those without δ, as the paper's
    f(x) ≈ f(x + δ) over all classes."""
    if models.delta is None or models.delta[0] != (n, steps):
        val = models.val
        x = to_float(torch.from_numpy(val.no_object[:n])).to(device)
        with_object = to_float(torch.from_numpy(val.images[:n])).to(device)
        region = torch.from_numpy(val.regions[:n, None].astype(np.float32)).to(device)
        torch.manual_seed(models.case.seed)
        delta = neutral_patch(models.f_s, x, (with_object - x) * region, region, steps=steps)
        moved = ((x + delta).clamp(0, 1) * 255).round().to(torch.uint8).cpu().numpy()
        same = predict_array(models.f_s, moved) == predict_array(models.f_s, val.no_object[:n])
        with torch.no_grad():
            before, after = models.f_s(x), models.f_s(to_float(torch.from_numpy(moved)).to(device))
            change = ((after - before).norm(dim=1) / before.norm(dim=1).clamp_min(1e-12)).cpu().numpy()
        models.delta = ((n, steps), moved, same & (change <= NEUTRAL_TOLERANCE))
    return models.delta[1], models.delta[2]


def evaluate(
    models: BamModels,
    explainer: Explainer,
    device: torch.device,
    n_explain: int,
    internal_batch_size: int,
    delta_steps: int,
) -> dict[str, Any]:
    """Every BAM score of ``explainer`` with its random-region baselines."""
    case, val = models.case, models.val
    n = min(n_explain, len(val))
    regions = val.regions[:n]
    shuffled = random_regions(regions, np.random.default_rng(np.random.SeedSequence([case.seed, 7])))
    obj, scene = val.objects[:n], val.scenes[:n]

    (maps_o, pred_o), cost = timed(
        lambda: _attribute(case, explainer, models.f_o, val.images[:n], device, internal_batch_size), device
    )
    maps_s, pred_s = _attribute(case, explainer, models.f_s, val.images[:n], device, internal_batch_size)
    maps_x, pred_x = _attribute(case, explainer, models.f_s, val.no_object[:n], device, internal_batch_size)
    correct_o, correct_s = pred_o == obj, pred_s == scene
    out: dict[str, Any] = {COST: cost}
    for suffix, r in (("", regions), ("_baseline", shuffled)):
        g_o, g_s, g_x = (region_attribution(m, r) for m in (maps_o, maps_s, maps_x))
        out[f"mcs{suffix}"] = model_contrast(g_o, correct_o, g_s, correct_s)
        out[f"idr{suffix}"] = input_dependence(g_s, g_x, correct_s & (pred_x == scene))
    moved, same = neutral_patches(models, n, device, delta_steps)
    maps_d, _ = _attribute(case, explainer, models.f_s, moved, device, internal_batch_size)
    keep = (pred_x == scene) & same
    out["iir"] = input_independence(region_attribution(maps_x, regions), region_attribution(maps_d, regions), keep)
    out["iir_pairs"] = int(keep.sum())
    cf = models.cf_val
    m = min(n, len(cf))
    g_cf = {}
    for k, model in models.f_k.items():
        maps_k, pred_k = _attribute(case, explainer, model, cf.images[:m], device, internal_batch_size)
        g = region_attribution(maps_k, cf.regions[:m])
        g_cf[k] = float(g[pred_k == 0].mean()) if (pred_k == 0).any() else float("nan")
    top = max(models.f_k)
    out["mcs_k"] = {k: g_cf[k] - g_cf[top] for k in models.f_k if k != top}
    xs = [out["mcs_k"][k] for k in sorted(out["mcs_k"])]
    ys = [models.cf_drop[k] for k in sorted(out["mcs_k"])]
    out["mcs_k_corr"] = (
        float(np.corrcoef(xs, ys)[0, 1]) if len(xs) > 2 and np.std(xs) > 0 and np.std(ys) > 0 else float("nan")
    )
    return out
