"""The BAM suite: relative feature importance between models and inputs
(Yang & Kim, ``papers/bam.txt``), on BAM-style data built from the vision
sources (:mod:`pytest_chaosmining.suites.bam.data`).

A :class:`BamCase` (sizes, model, seed, source) trains, through the model
cache: the object model f_o (object labels) and the scene model f_s (scene
labels) on X_{o,s}, and a scene model f_k on each commonality set X^k.

Before anything is scored, the premise is checked on validation data
(:func:`relative_importance`): removing the object hurts f_o and not f_s,
removing the scene hurts f_s and not f_o.  Then for each explainer:

- MCS = G_obj(f_o) − G_obj(f_s) on X_{o,s}; baseline: the same with each object
  region moved to a random place (the paper's random I_c);
- IDR on f_s over pairs (X_{o,s}, X_{∅,s}); baseline: random regions (≈ 50%);
- IIR on f_s with a functionally neutral patch δ (:func:`bam.neutral_patch`,
  initialised from the object's pixels, t = 10%) — reported, never asserted:
  an explainer that ignores its input is perfectly input-independent;
- MCS_k = G_CF(f_k) − G_CF(f_1.0) on scene-0 images with the CF, beside the
  accuracy each f_k loses when the CF is removed, and their Pearson correlation.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.catalog import calibrated, judged, reported
from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.derived import weights_digest
from pytest_chaosmining.core.storage.keys import Code
from pytest_chaosmining.core.tiers import Seeds, seed_range
from pytest_chaosmining.core.verdicts.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers import attribute
from pytest_chaosmining.explainers.context import BACKGROUND_SIZE, IMAGE_CLASSIFICATION
from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.seam import Calibration, CaseFields, Recorder, ScoreCheck, Scored
from pytest_chaosmining.suite_kit.verdict import timed_score
from pytest_chaosmining.suites.bam import data as bam_data
from pytest_chaosmining.suites.bam import report
from pytest_chaosmining.suites.bam.data import BamSpec, generate
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
from pytest_chaosmining.suites.bam.tiers import BAM, BamTier
from pytest_chaosmining.testbeds.digits.cases import grid_mask, image_context, untrained_model
from pytest_chaosmining.timing import timed

# torch and the package's modules that load it are imported where used: heavy, they wait for --chaosmining.


if TYPE_CHECKING:
    import torch
    from pytest_benchmark.fixture import BenchmarkFixture

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import Remembered, RunView

SUITE = "bam"
#: training images a shipped model is re-scored on before use
CHECK_IMAGES = 500


def bam_code() -> Code:
    """The modules whose source enters the cache key of a BAM model."""
    return (
        "pytest_chaosmining.suites.bam.data",
        "pytest_chaosmining.testbeds.digits.data",
        "pytest_chaosmining.testbeds.digits.models",
        "pytest_chaosmining.core.training.classification",
    )


@dataclass(frozen=True)
class BamCase:
    """One set of BAM models (sizes × model × seed × source)."""

    canvas: int
    n_train: int
    n_val: int
    model: str
    epochs: int
    batch_size: int
    lr: float
    seed: int
    ks: tuple[float, ...]
    source: str = "embedded"
    data_dir: str | None = None

    @property
    def model_id(self) -> str:
        return f"{self.model}-e{self.epochs}"

    @property
    def key(self) -> str:
        return f"{self.canvas}px"

    @property
    def id(self) -> str:
        return f"{self.canvas}px-{self.model_id}-s{self.seed}"

    def explainer_id(self, explainer: str) -> str:
        return f"{self.canvas}px-{self.model_id}-{explainer}-s{self.seed}"

    def case_fields(self) -> dict[str, Any]:
        return {"canvas": self.canvas, "n_train": self.n_train, "source": self.source}

    def spec(self, kind: str, split: str, k: float = 1.0, scene_class: int | None = None) -> Any:
        n = self.n_train if split == "train" else self.n_val
        return BamSpec(kind, self.canvas, n, split, self.seed, k, self.source, self.data_dir, scene_class)


def plan_cases(
    tier: BamTier, seeds: Seeds | None = None, source: str = "embedded", data_dir: str | None = None
) -> list[BamCase]:
    n_seeds = seed_range(tier.seeds, seeds)
    return [
        BamCase(
            tier.canvas,
            tier.n_train,
            tier.n_val,
            tier.model,
            tier.epochs,
            tier.batch_size,
            tier.lr,
            seed,
            tier.ks,
            source,
            data_dir,
        )
        for seed in n_seeds
    ]


def model_config(case: BamCase, role: str, device_type: str) -> dict[str, Any]:
    """Everything that affects the weights of ``case``'s ``role`` model (its cache and pack key)."""
    fields = dataclasses.asdict(case)
    fields.pop("ks")
    return {"suite": SUITE, **fields, "role": role, "device": device_type}


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
    import torch

    from pytest_chaosmining.core.training.classification import ClassifierTraining, predict_array, train_classifier

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


@dataclass
class BamModels:
    """The trained models of a case with their validation data and predictions."""

    case: BamCase
    f_o: Any
    f_s: Any
    f_k: dict[float, Any]
    val: Any  # BamData, kind objects
    cf_val: Any  # BamData, kind common, scene class 0, every image with the CF
    accuracy: dict[str, float]  # "<model>/<version>" -> accuracy
    cf_drop: dict[float, float]  # accuracy f_k loses on scene-0 images when the CF is removed
    train_seconds: dict[str, float] = field(default_factory=dict)
    delta: Any = None  # ((n, steps), x + δ, neutral) of the first n no-object images (computed lazily)


def _lazily(spec: BamSpec) -> Callable[[str], Callable[[], tuple[np.ndarray, np.ndarray]]]:
    """``labels → data()``: the images of ``spec`` with those labels, generated on the
    first call of any of them (once)."""
    made = functools.cache(lambda: generate(spec))

    def data(labels: str) -> Callable[[], tuple[np.ndarray, np.ndarray]]:
        return lambda: (made().images, getattr(made(), labels))

    return data


def _split(spec: BamSpec, cache: ModelCache) -> Any:
    """The images of ``spec`` (embedded ones through ``cache``'s data)."""
    if spec.source != "embedded":
        return generate(spec)
    return cache.data.get_or_make(
        "bam",
        spec,
        lambda: generate(spec),
        bam_data.BamData,
        ("pytest_chaosmining.suites.bam.data", "pytest_chaosmining.testbeds.digits.data"),
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

    train = _lazily(case.spec("objects", "train"))
    f_o, t_o = _train(case, "object", train("objects"), cache, device, progress("object model"))
    f_s, t_s = _train(case, "scene", train("scenes"), cache, device, progress("scene model"))
    seconds = {"object": t_o, "scene": t_s}
    f_k = {}
    for k in case.ks:
        common = _lazily(case.spec("common", "train", k))
        f_k[k], seconds[f"k{k:g}"] = _train(
            case, f"k{k:g}", common("scenes"), cache, device, progress(f"scene model k={k:g}")
        )
    val = _split(case.spec("objects", "val"), cache)
    cf_val = _split(case.spec("common", "val", 1.0, scene_class=0), cache)

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
    from pytest_chaosmining.core.training.classification import predict_array

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


def relative_importance(models: BamModels, chance_margin: float, keep_margin: float) -> list[str]:
    """The premise of MCS and IDR, as a list of violations (empty: it holds):
    without the object f_o is near chance (within ``chance_margin`` of 10%) and
    f_s keeps its accuracy (within ``keep_margin``); without the scene f_s is
    near chance and f_o keeps its accuracy."""
    a, chance, out = models.accuracy, 1.0 / 10, []
    for model, removed, _kept, other in (("f_o", "no_object", "gray", "f_s"), ("f_s", "gray", "no_object", "f_o")):
        if a[f"{model}/{removed}"] > chance + chance_margin:
            out.append(
                f"{model} keeps {a[f'{model}/{removed}']:.3f} accuracy without its feature "
                f"({removed}; chance 0.100 + {chance_margin})"
            )
        if a[f"{other}/{removed}"] < a[f"{other}/images"] - keep_margin:
            out.append(f"{other} drops from {a[f'{other}/images']:.3f} to {a[f'{other}/{removed}']:.3f} on {removed}")
    return out


def _attribute(
    case: BamCase, explainer: Explainer, model: Any, images: np.ndarray, device: torch.device, internal_batch_size: int
) -> tuple[np.ndarray, np.ndarray]:
    """Normalised maps of ``images`` for the predicted class, and the predictions."""
    import torch

    from pytest_chaosmining.core.training.classification import predict_array, to_float

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
    import torch

    from pytest_chaosmining.core.training.classification import to_float

    small = dataclasses.replace(case, n_train=BACKGROUND_SIZE)
    return to_float(torch.from_numpy(generate(small.spec("objects", "train")).images[:BACKGROUND_SIZE]))


def neutral_patches(models: BamModels, n: int, device: torch.device, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """δ for the first ``n`` no-object validation images on f_s (initialised from
    their object's pixels); returns ``x + δ`` as uint8 and whether δ is
    functionally neutral there: f_s's prediction unchanged and its logits within
    ``NEUTRAL_TOLERANCE`` (relative L2) of those without δ, as the paper's
    f(x) ≈ f(x + δ) over all classes."""
    import torch

    from pytest_chaosmining.core.training.classification import predict_array, to_float

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
    out: dict[str, Any] = {"cost": cost}
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


def _record(case: BamCase, explainer: str, metric: str, value: float, **extra: str | int | float) -> Record:
    return Record(SUITE, case.model_id, explainer, case.seed, metric, float(value), {**case.case_fields(), **extra})


def _canvas_key(fields: CaseFields) -> str:
    return f"{fields['canvas']}px"


class BamSuite(SuiteDefaults):
    """BAM (Benchmarking Attribution Methods): model contrast (MCS), input
    dependence (IDR) and input independence (IIR) on images with a known common
    feature, each against its random-region baseline."""

    report = report
    name = SUITE
    shapes = (IMAGE_CLASSIFICATION,)
    case_arg = "bam_case"
    score_metric = "mcs"
    metrics = (
        *judged("mcs_gain", "idr_gain", key=_canvas_key),
        *reported(
            "accuracy",
            "cf_drop",
            "idr",
            "idr_baseline",
            "iir",
            "iir_pairs",
            "mcs",
            "mcs_baseline",
            "mcs_k",
            "mcs_k_corr",
            "premise_holds",
        ),
    )
    calibration = Calibration(judged=calibrated(metrics), optional=frozenset({"idr_gain"}))
    checks = (
        ScoreCheck("mcs_gain", "{what}: MCS {mcs:.3f} against the random-region baseline {mcs_baseline:.3f}"),
        ScoreCheck(
            "idr_gain",
            "{what}: IDR {idr:.3f} against the random-region baseline {idr_baseline:.3f}",
        ),
    )
    recorded = ("mcs", "mcs_baseline", "idr", "idr_baseline", "iir", "iir_pairs", "mcs_k_corr")

    def bar_key(self, fields: CaseFields) -> str:
        """The canvas (``32px``)."""
        return _canvas_key(fields)

    def premise(self, run: RunView, models: BamModels) -> list[str]:
        """Why the premise of MCS and IDR does not hold on ``models`` (empty: it holds)."""
        section = run.judge.thresholds.section(SUITE, run.plan.tier)
        gate = float(section["quality_gate"])
        low = [
            f"{name} accuracy {models.accuracy[f'{name}/images']:.3f} < gate {gate:.3f}"
            for name in ("f_o", "f_s")
            if models.accuracy[f"{name}/images"] < gate
        ]
        return low + relative_importance(models, float(section["chance_margin"]), float(section["keep_margin"]))

    def scored(
        self,
        run: RunView,
        case: BamCase,
        explainer: str,
        benchmark: BenchmarkFixture | None,
        node: pytest.Item,
        record: Recorder,
    ) -> Scored:
        """The explainer's MCS, IDR and IIR on the case's models (skipped where the
        premise does not hold), timed; the gains over their random-region baselines
        and the MCS_k series."""
        models = self.models(run, case)
        violations = self.premise(run, models)
        if violations:
            pytest.skip(f"BAM premise does not hold on {case.id}; nothing to score ({'; '.join(violations)})")
        out = timed_score(run, SUITE, case, explainer, benchmark, node, lambda e: self.score(run, models, e), record)
        values = {**out, "mcs_gain": out["mcs"] - out["mcs_baseline"], "idr_gain": out["idr"] - out["idr_baseline"]}
        return Scored(values, [_record(case, explainer, "mcs_k", v, k=k) for k, v in out["mcs_k"].items()])

    def seeds(self, tier: str, seeds: Seeds | None) -> range:
        return seed_range(BAM[tier].seeds, seeds)

    def plan(self, run: RunView) -> list[BamCase]:
        source = ("torchvision", run.plan.data_dir) if run.plan.data_dir else ("embedded", None)
        return plan_cases(BAM[run.plan.tier], run.plan.settings.seeds, *source)

    def score(self, run: RunView, models: BamModels, explainer: Explainer) -> dict[str, Any]:
        """:func:`evaluate` at the session's tier sizes (a built-in's scores from the derived cache)."""

        tier = BAM[run.plan.tier]
        sizes = {
            "n_explain": tier.n_explain,
            "internal_batch_size": tier.internal_batch_size,
            "delta_steps": tier.delta_steps,
        }
        weights = weights_digest(models.f_o, models.f_s, *models.f_k.values())
        self._neutral_patches(run, models, weights, min(tier.n_explain, len(models.val)), tier.delta_steps)
        return run.results.evaluated(
            SUITE,
            {"case": dataclasses.asdict(models.case), "weights": weights, **sizes},
            explainer,
            lambda: evaluate(models, explainer, run.runtime.device, **sizes),
            (Cost,),
        )

    @staticmethod
    def _neutral_patches(run: RunView, models: BamModels, weights: str, n: int, steps: int) -> None:
        """Fill ``models.delta`` (:func:`neutral_patches`: 100 optimiser steps on f_s, the
        same for every explainer) from the derived-results cache, keyed by the models'
        weights, or compute and keep it there: every explainer of every run needs it."""
        if models.delta is not None and models.delta[0] == (n, steps):
            return

        def compute() -> dict[str, list[object]]:
            moved, same = neutral_patches(models, n, run.runtime.device, steps)
            return {"moved": moved.tolist(), "same": same.tolist()}

        key = {"check": "neutral_patches", "case": dataclasses.asdict(models.case), "weights": weights}
        stored = run.results.reused(SUITE, {**key, "n": n, "steps": steps}, compute)
        models.delta = ((n, steps), np.asarray(stored["moved"], dtype=np.uint8), np.asarray(stored["same"], dtype=bool))

    def models(self, run: RunView, case: BamCase) -> BamModels:
        """The BAM models of ``case`` (f_o, f_s, every f_k), trained at most once (and cached on disk)."""
        return run.runtime.memo(
            ("bam", case),
            lambda: trained_models(
                case,
                run.runtime.cache,
                run.runtime.device,
                lambda label: run.runtime.progress(f"bam {case.id} {label}"),
                lambda key, measure: run.results.reused(SUITE, key, measure),
            ),
        )


def judge_premise(run: RunView, suite: BamSuite, case: BamCase, node: pytest.Item) -> None:
    """The relative-importance test: the models' accuracies, CF drops and training
    times recorded; the premise holds or the test fails naming why."""
    models = suite.models(run, case)
    for key, value in models.accuracy.items():
        model, version = key.split("/")
        run.judge.record(node, _record(case, MODEL_LEVEL, "accuracy", value, role=model, version=version))
    for k, drop in models.cf_drop.items():
        run.judge.record(node, _record(case, MODEL_LEVEL, "cf_drop", drop, k=k))
    for role, seconds in models.train_seconds.items():
        run.judge.record(node, _record(case, MODEL_LEVEL, "train_seconds", seconds, role=role))
    violations = suite.premise(run, models)
    run.judge.record(node, _record(case, MODEL_LEVEL, "premise_holds", float(not violations)))
    if violations:
        pytest.fail(f"BAM premise does not hold on {case.id}: " + "; ".join(violations), pytrace=False)
