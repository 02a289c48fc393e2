"""Scoring an explainer on a symbolic model (torch at the top: the formulas testbed's
heavy half): attributing the test set and scoring the maps (FPrec, the gain from
training, signs, completeness), and the own-merit checks' probe."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from pytest_chaosmining.core.metrics.attribution import attribution_uscore, fprec
from pytest_chaosmining.core.metrics.axioms import output_change, sign_agreement
from pytest_chaosmining.core.metrics.drift import outline
from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of
from pytest_chaosmining.core.metrics.properties import completeness_fit, is_signed, noise_of, truth_sign_agreement
from pytest_chaosmining.core.records import FINGERPRINT, NOISE_SOURCE, OUTLINE
from pytest_chaosmining.explainers import IG_STEPS, attribute
from pytest_chaosmining.explainers.context import tabular_context
from pytest_chaosmining.suite_kit.probe import Probe
from pytest_chaosmining.suite_kit.seam import COST
from pytest_chaosmining.testbeds.formulas.cases import SUITE, TrainedSymbolicModel
from pytest_chaosmining.testbeds.formulas.training import untrained_model
from pytest_chaosmining.timing import timed

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer


#: steps of the exact path integral the sign check compares with (its sign, not an IG's estimate)
SIGN_PATH_STEPS = 50
#: the test rows whose maps two seeds' draws compare where the signs are judged (a sampler's signs get its bar)
NOISE_ROWS = 16


def evaluate(trained: TrainedSymbolicModel, explainer: Explainer, device: torch.device) -> dict[str, Any]:
    """Attribute the test set with ``explainer``; return FPrec, the FPrec gained over
    the same explainer on the untrained model (a ranking that ignores the model,
    such as a fixed column prior, gains nothing), attribution UScore against the
    matching exact ground truth (if the explainer declares one), the sign
    agreement of its sums with the output change and how well their size fits it
    (if it declares completeness; the sign where the outputs both rose and fell),
    the agreement of a signed map's signs with the formula's (``truth_sign``, where
    the test rows give both signs) and where the explainer's own noise shows
    (:data:`~pytest_chaosmining.core.records.NOISE_SOURCE`: a sampler's signs are
    judged by the samplers' bar), cost and a fingerprint of the maps."""
    data = trained.data
    inputs = torch.from_numpy(data.x_test).to(device)
    context = tabular_context(SUITE, data.x_train, device)
    attr, cost = timed(lambda: attribute(explainer, trained.model, inputs, 0, context), device)
    attr_np = attr.cpu().numpy().astype(np.float64)
    out: dict[str, Any] = {"fprec": fprec(attr_np, data.truth), COST: cost}
    out[FINGERPRINT] = fingerprint_of(attr_np).stored()
    out[OUTLINE] = outline(attr_np)
    untrained = untrained_model(trained.case, data.n_features).to(device)
    before = (
        timed(lambda: attribute(explainer, untrained, inputs, 0, context), device)[0].cpu().numpy().astype(np.float64)
    )
    out["untrained_fprec"] = fprec(before, data.truth)
    out["training_gain"] = out["fprec"] - out["untrained_fprec"]
    if explainer.ground_truth:
        n_steps = explainer.attribute_kwargs.get("n_steps", IG_STEPS)
        steps = int(n_steps) if isinstance(n_steps, int | float) else IG_STEPS
        truth = data.ground_truth(explainer.ground_truth, data.x_test, steps=steps)
        out["attr_uscore"] = attribution_uscore(attr_np, truth)
    if is_signed(attr_np):
        kinds = ("gradient", "path", "ablation")
        exact = [data.ground_truth(kind, data.x_test, steps=SIGN_PATH_STEPS) for kind in kinds]
        truth_sign = truth_sign_agreement(attr_np, exact)
        if truth_sign is not None:
            out["truth_sign"] = truth_sign

            def draws(rows: list[int], seed: int) -> np.ndarray:
                maps = attribute(explainer, trained.model, inputs[rows], 0, context, seed=seed)
                return maps.detach().cpu().double().numpy()

            out[NOISE_SOURCE] = noise_of(draws, min(NOISE_ROWS, len(inputs)), declared=explainer.stochastic).source
    if explainer.completeness:
        change = output_change(trained.model, inputs, 0, torch.zeros_like(inputs))
        agreement = sign_agreement(attr_np.sum(axis=1), change)
        if agreement is not None:
            out["sign_agreement"] = agreement
        out["completeness"] = completeness_fit(attr_np.sum(axis=1), change)
    return out


def probe(trained: TrainedSymbolicModel, samples: int) -> Probe:
    """The first ``samples`` test rows of ``trained`` for the own-merit checks (target 0:
    the regression output)."""
    device = next(trained.model.parameters()).device
    data = trained.data
    inputs = torch.from_numpy(data.x_test[:samples]).to(device)
    return Probe(trained.model, inputs, 0, tabular_context(SUITE, data.x_train, device))
