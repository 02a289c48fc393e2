"""Symbolic MLPs trained as one batched ensemble match the same models trained alone."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from pytest_chaosmining.core.metrics.attribution import fprec
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.core.storage.cache import ModelCache
from pytest_chaosmining.core.training.ensemble import can_train_together
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.core.training.regression import RegressionTraining
from pytest_chaosmining.core.training.saliency import mask_lowest
from pytest_chaosmining.testbeds.formulas.cases import cost_case, symbolic_code
from pytest_chaosmining.testbeds.formulas.ensemble import train_groups
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.testbeds.formulas.training import trained_model, untrained_model


def matching_models(case, ensemble_cache, alone_cache, device):
    """``case``'s ensemble-trained model and the same trained alone, asserted to
    agree (weights within 2e-5, UScore within 1e-5)."""
    together = trained_model(case, ensemble_cache, device, together=True)
    alone = trained_model(case, alone_cache, device)
    for (name, a), b in zip(alone.model.named_parameters(), together.model.parameters()):
        assert torch.allclose(a, b, atol=2e-5), (case.id, name, (a - b).abs().max())
    assert together.uscore == pytest.approx(alone.uscore, abs=1e-5)
    return together, alone


def test_ensemble_members_match_single_training_and_are_cached_per_model(tmp_path):
    """Three seeds of formula 2 and one of formula 7 (another input count: its own
    group) at smoke settings: every member's weights, predictions, UScore and SA
    FPrec match the model trained alone; each member has its own cache entry."""
    base = cost_case(SYMBOLIC["smoke"])
    cases = [dataclasses.replace(base, seed=s) for s in (0, 1, 2)] + [dataclasses.replace(base, formula=7)]
    device = torch.device("cpu")
    cache = ModelCache(tmp_path / "cache")
    code = symbolic_code(together=True)
    assert train_groups(cases, cache, device, untrained_model, code) == 4
    assert train_groups(cases, cache, device, untrained_model, code) == 0  # all cached: nothing trains again
    for case in cases:
        together, alone = matching_models(case, cache, ModelCache(tmp_path / "alone"), device)
        x = torch.from_numpy(alone.data.x_test).requires_grad_()
        grads = [torch.autograd.grad(m.model(x).sum(), x)[0].numpy() for m in (alone, together)]
        assert fprec(grads[0], alone.data.truth) == fprec(grads[1], alone.data.truth)
    assert len(list((tmp_path / "cache" / "symbolic").glob("*.pt"))) == 4


def recorded_masks(monkeypatch):
    """Spy on saliency guided masking, alone and in ensembles: per member (told
    apart by its data), one entry per epoch: the masked indices of every row and
    the score gap at the mask's edge (a near-tie if tiny)."""
    from pytest_chaosmining.core.training import ensemble, saliency

    calls = {}

    def spy(x, grads, k, absolute, generator=None):
        score = grads.reshape(x.shape[0], -1)
        score = score.abs() if absolute else score
        count = max(1, int(k * score.shape[1]))
        ranked = score.sort(dim=1).values
        member = (tuple(x.shape), tuple(x.reshape(-1)[:4].tolist()))
        masked = score.topk(count, dim=1, largest=False).indices.sort(dim=1).values
        calls.setdefault(member, []).append((masked, ranked[:, count] - ranked[:, count - 1]))
        return mask_lowest(x, grads, k, absolute, generator)

    monkeypatch.setattr(saliency, "mask_lowest", spy)
    monkeypatch.setattr(ensemble, "mask_lowest", spy)
    return calls


def test_saliency_guided_members_match_single_guided_training(tmp_path, monkeypatch):
    """Saliency guided twins (the saliency suite's models): two seeds of formula 2
    and one of formula 7, guided at smoke settings, trained as ensembles; standard
    and guided models never share an ensemble.  Each member masks what the model
    trained alone masks, epoch by epoch, and ends with its weights, unless a
    near-tie in the masking order (score gap below 1e-5) rounds the other way in
    batched and single products: masking is discontinuous, and from that epoch the
    two are two correct trainings apart (one thread, f02 seed 1, epoch 37 of 150:
    a gap of 2.4e-7).  Then both trained up to that epoch still match."""
    base = dataclasses.replace(cost_case(SYMBOLIC["smoke"]), guide=SaliencyGuided())
    cases = [dataclasses.replace(base, seed=s) for s in (0, 1)] + [dataclasses.replace(base, formula=7)]
    standard = dataclasses.replace(base, guide=None)
    device = torch.device("cpu")
    cache = ModelCache(tmp_path / "cache")
    calls = recorded_masks(monkeypatch)
    assert train_groups([*cases, standard], cache, device, untrained_model, symbolic_code(together=True)) == 4
    metas = [torch.load(e, weights_only=True)["meta"] for e in (tmp_path / "cache" / "symbolic").glob("*.pt")]
    assert sorted(m["ensemble_size"] for m in metas) == [1, 1, 2, 2]  # f02 s0+s1 guided; f07 guided; f02 standard
    in_ensemble = dict(calls)
    assert len(in_ensemble) == len(cases)  # the standard model masks nothing
    for case in cases:
        calls.clear()
        trained_model(case, ModelCache(tmp_path / "alone"), device)
        ((member, alone),) = calls.items()
        ensemble = in_ensemble[member]
        assert len(alone) == len(ensemble) == case.epochs
        flips = [t for t, (a, b) in enumerate(zip(alone, ensemble)) if not torch.equal(a[0], b[0])]
        if not flips:
            matching_models(case, cache, ModelCache(tmp_path / "alone"), device)
            continue
        first = flips[0]
        rows = (alone[first][0] != ensemble[first][0]).any(dim=1)
        assert alone[first][1][rows].max() < 1e-5, (case.id, first, alone[first][1][rows])
        if first == 0:
            continue
        # up to the flip: the same ensembles (same groups) trained for `first` epochs
        upto = [dataclasses.replace(c, epochs=first) for c in cases]
        upto_cache = ModelCache(tmp_path / f"upto-{first}")
        train_groups(upto, upto_cache, device, untrained_model, symbolic_code(together=True))
        matching_models(upto[cases.index(case)], upto_cache, ModelCache(tmp_path / f"alone-{first}"), device)


def test_only_models_that_train_alike_are_ensembled():
    base = cost_case(SYMBOLIC["smoke"])
    plain = [untrained_model(base, 21), untrained_model(dataclasses.replace(base, seed=1), 21)]
    assert can_train_together(plain, RegressionTraining(10, 1e-2, "adam"))
    assert not can_train_together(plain, RegressionTraining(10, 1e-2, "adam", batch_size=64))
    assert not can_train_together(
        [untrained_model(dataclasses.replace(base, dropout=0.1), 21)] * 2, RegressionTraining(10, 1e-2, "adam")
    )
    assert not can_train_together([plain[0], untrained_model(base, 22)], RegressionTraining(10, 1e-2, "adam"))


def test_a_run_with_ensembles_on_trains_the_selected_models_together_and_scores_alike(pytester, run_suite):
    """--chaosmining-ensemble on: the selected symbolic models train as ensembles
    (only those: -k keeps the other formulas untrained) and every score matches
    the run that trains each alone."""

    args = ("--chaosmining-suites", "symbolic", "--chaosmining-explainers", "SA,IG,random")
    together = run_suite(*args, "--chaosmining-ensemble", "on", cache=pytester.path / "c1", report="on")
    together.assert_outcomes(passed=6, xfailed=2)
    run_suite(*args, cache=pytester.path / "c2", report="off").assert_outcomes(passed=6, xfailed=2)
    entries = list((pytester.path / "c1" / "symbolic").glob("*.pt"))
    assert len(entries) == 2  # f01 and f08 only
    assert all(torch.load(e, weights_only=True)["meta"].get("ensemble_size") == 1 for e in entries)

    def scores(report):
        records = read_results(pytester.path / report / "results.json", samples=True)["records"]
        return {
            (r["case"]["formula"], r["explainer"], r["metric"]): r["value"]
            for r in records
            if r["metric"] in ("fprec", "uscore", "training_gain")
        }

    on, off = scores("on"), scores("off")
    assert on.keys() == off.keys() and all(abs(on[k] - off[k]) < 1e-4 for k in on), (on, off)


def test_the_saliency_suite_trains_its_symbolic_twins_as_ensembles_and_scores_alike(pytester, run_suite):
    """--chaosmining-ensemble on, saliency suite, the symbolic comparison of f06
    (two seeds): the two guided twins train as one ensemble and the two standard
    models as another.  The standard models' scores match the run that trains
    each alone to 1e-4; the guided ones to 0.01: masking the lowest gradients is
    discontinuous, so float rounding can change what a step masks (measured:
    seed 0, FPrec 0.935 against 0.9375, one row in 400)."""

    args = ("--chaosmining-suites", "saliency", "--chaosmining-explainers", "SA")
    run_suite(*args, "--chaosmining-ensemble", "on", cache=pytester.path / "c1", report="on", k="symbolic and f06")
    run_suite(*args, cache=pytester.path / "c2", report="off", k="symbolic and f06")
    metas = [torch.load(e, weights_only=True)["meta"] for e in (pytester.path / "c1" / "symbolic").glob("*.pt")]
    assert sorted(m.get("ensemble_size") for m in metas) == [2] * 4, metas

    def scores(report):
        records = read_results(pytester.path / report / "results.json", samples=True)["records"]
        return {
            (r["model"], r["explainer"], r["seed"], r["metric"], r["case"]["arm"]): r["value"]
            for r in records
            if r["metric"] in ("uscore", "fprec")
        }

    on, off = scores("on"), scores("off")
    assert on and on.keys() == off.keys() and {k[4] for k in on} == {"standard", "guided"}
    for key in on:
        assert abs(on[key] - off[key]) <= (1e-4 if key[4] == "standard" else 0.01), (key, on[key], off[key])
