"""The library methods the audit registers, each declaring the paper formula it implements
(``same_as``: pytest_chaosmining.references.formulas.paper) with the settings that make
their maps comparable.  Imported by the conftest benchmarks/audit/run.py writes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.explainers.builtin_settings import IG_STEPS, NOISE_SAMPLES
from pytest_chaosmining.references.formulas import paper

#: name → (library, the library's method, the formula's reference and settings)
Row = tuple[str, str, Explainer, Callable[[], Explainer]]


def _captum() -> list[Row]:
    from captum.attr import InputXGradient, IntegratedGradients, Saliency

    from pytest_chaosmining.explainers.builtins import builtin_explainers

    builtins = builtin_explainers()

    def captum(name: str, method: object, kwargs: dict[str, object]) -> Explainer:
        return Explainer(name, method, kwargs)  # type: ignore[arg-type]

    def as_user(name: str) -> Explainer:
        return dataclasses.replace(builtins[name], name=f"captum_{name}", source="user", known=())

    rows: list[Row] = [
        (
            "captum",
            "Saliency(abs=False)",
            captum("captum_saliency", Saliency, {"abs": False}),
            lambda: paper("saliency", absolute=False),
        ),
        ("captum", "InputXGradient", captum("captum_ixg", InputXGradient, {}), lambda: paper("IxG")),
        (
            "captum",
            f"IntegratedGradients(n_steps={IG_STEPS}) (gausslegendre)",
            as_user("IG"),
            lambda: paper("IG", rule="gausslegendre", steps=IG_STEPS),
        ),
        (
            "captum",
            "IntegratedGradients(n_steps=16, method=riemann_trapezoid)",
            captum("captum_ig_trapezoid", IntegratedGradients, {"n_steps": 16, "method": "riemann_trapezoid"}),
            lambda: paper("IG", rule="riemann_trapezoid", steps=16),
        ),
        (
            "captum",
            "IntegratedGradients(n_steps=16, method=riemann_right)",
            captum("captum_ig_right", IntegratedGradients, {"n_steps": 16, "method": "riemann_right"}),
            lambda: paper("IG", rule="riemann_right", steps=16),
        ),
        ("captum", "FeatureAblation (the suite's features)", as_user("FA"), lambda: paper("ablation")),
        (
            "captum",
            f"NoiseTunnel(Saliency) smoothgrad, {NOISE_SAMPLES} samples (the built-in SG)",
            as_user("SG"),
            lambda: paper("SmoothGrad", samples=NOISE_SAMPLES, noise_level=0.15),
        ),
        ("captum", "LayerGradCam (upsampled)", as_user("GradCAM"), lambda: paper("GradCAM")),
    ]
    return rows


def _grad_cam() -> list[Row]:
    from pytorch_grad_cam import GradCAM, GradCAMPlusPlus, LayerCAM, XGradCAM

    from pytest_chaosmining.explainers.adapters import grad_cam_method

    made = [("GradCAM", GradCAM, "GradCAM"), ("GradCAMPlusPlus", GradCAMPlusPlus, "GradCAM++"),
            ("XGradCAM", XGradCAM, "XGradCAM"), ("LayerCAM", LayerCAM, "LayerCAM")]  # fmt: skip
    return [
        ("pytorch-grad-cam", cls, Explainer(f"pgc_{cls}", grad_cam_method(method)), lambda f=formula: paper(f))
        for cls, method, formula in made
    ]


def _torchcam() -> list[Row]:
    import torchcam.methods as tc

    from pytest_chaosmining.explainers.adapters import torchcam_method

    made = [("GradCAM", "GradCAM"), ("GradCAMpp", "GradCAM++"), ("XGradCAM", "XGradCAM"), ("LayerCAM", "LayerCAM")]
    return [
        ("torchcam", cls, Explainer(f"torchcam_{cls}", torchcam_method(getattr(tc, cls))), lambda f=formula: paper(f))
        for cls, formula in made
    ]


def _zennit() -> list[Row]:
    from pytest_chaosmining.explainers.adapters import zennit_method

    return [
        (
            "zennit",
            "attribution.Gradient",
            Explainer("zennit_gradient", zennit_method(None)),
            lambda: paper("saliency", absolute=False),
        )
    ]


#: each library's rows, made where it is installed
LIBRARIES = {"captum": _captum, "pytorch-grad-cam": _grad_cam, "torchcam": _torchcam, "zennit": _zennit}


def audited() -> list[Row]:
    """Every installed library's rows."""
    rows: list[Row] = []
    for make in LIBRARIES.values():
        try:
            rows += make()
        except ImportError:
            continue
    return rows


def registered() -> dict[str, Explainer]:
    """The audited methods as explainers, each declaring its reference."""
    return {e.name: dataclasses.replace(e, same_as=reference()) for _, _, e, reference in audited()}
