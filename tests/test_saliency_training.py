"""Saliency guided training: masking, loss, training mode, cache keys, planning."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from pytest_chaosmining.core.training.classification import ClassifierTraining, train_classifier
from pytest_chaosmining.core.training.modes import SaliencyGuided, guided_model_id, training_key
from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor
from pytest_chaosmining.core.training.saliency import consistency, guided_loss, input_gradients, mask_lowest
from pytest_chaosmining.suites.saliency.spec import plan_cases
from pytest_chaosmining.suites.saliency.tiers import SALIENCY
from pytest_chaosmining.testbeds.formulas.cases import SymbolicCase


def test_mask_replaces_exactly_the_lowest_signed_gradients_within_each_samples_range():
    x = torch.tensor(
        [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], [5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, -5.0]]
    )
    grads = torch.tensor(
        [[0.5, -3.0, 0.1, 2.0, -0.2, 0.0, 1.0, 4.0, -1.0, 0.3], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -9.0, -8.0]]
    )
    masked = mask_lowest(x, grads, k=0.2, absolute=False, generator=torch.Generator().manual_seed(0))
    changed = masked != x
    assert changed[0].nonzero().ravel().tolist() == [1, 8]  # the two most negative gradients
    assert set(changed[1].nonzero().ravel().tolist()) <= {8, 9}
    assert ((masked[0] >= 0) & (masked[0] <= 9)).all() and ((masked[1] >= -5) & (masked[1] <= 5)).all()


def test_absolute_masking_picks_the_smallest_magnitudes():
    x = torch.arange(10.0).view(1, 10)
    grads = torch.tensor([[0.5, -3.0, 0.1, 2.0, -0.2, 0.0, 1.0, 4.0, -1.0, 0.3]])
    masked = mask_lowest(x, grads, k=0.2, absolute=True, generator=torch.Generator().manual_seed(1))
    assert (masked != x)[0].nonzero().ravel().tolist() == [2, 5]


def test_input_gradients_are_the_targets_gradients_and_keep_the_mode():
    model = nn.Sequential(nn.Linear(4, 3))
    model.train()
    x = torch.randn(5, 4)
    target = torch.tensor([0, 1, 2, 0, 1])
    grads = input_gradients(model, x, target)
    assert model.training
    assert torch.allclose(grads, model[0].weight[target].detach())


def test_consistency_is_zero_only_for_equal_outputs():
    out = torch.randn(6, 4)
    assert consistency(out, out.clone(), classification=True).item() == pytest.approx(0.0, abs=1e-6)
    assert consistency(out, out + torch.randn(6, 4), classification=True).item() > 0
    assert consistency(out[:, :1], out[:, :1] + 1.0, classification=False).item() == pytest.approx(1.0)


def test_guided_loss_without_the_consistency_term_is_the_task_loss():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 3))
    x, y = torch.randn(16, 8), torch.randint(0, 3, (16,))
    loss = guided_loss(model, x, y, SaliencyGuided(lam=0.0), classification=True)
    assert loss.item() == pytest.approx(nn.functional.cross_entropy(model(x), y).item())
    assert guided_loss(model, x, y, SaliencyGuided(lam=1.0), classification=True).item() > loss.item()


def test_guided_training_is_seeded_and_differs_from_standard():
    def run(guide):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Flatten(), nn.Linear(2 * 8, 3))
        images = torch.randint(0, 255, (64, 2, 8), dtype=torch.uint8)
        labels = torch.randint(0, 3, (64,))
        train_classifier(model, images, labels, ClassifierTraining(epochs=2, batch_size=16), seed=0, guide=guide)
        return torch.cat([p.detach().ravel() for p in model.parameters()])

    guided = run(SaliencyGuided())
    assert torch.equal(guided, run(SaliencyGuided()))
    assert not torch.allclose(guided, run(None))


def test_guided_regression_trains():
    torch.manual_seed(0)
    x = torch.randn(256, 6)
    y = x[:, 0] * 2.0
    model = nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 1))
    loss = train_regressor(model, x, y, RegressionTraining(epochs=200, lr=1e-2), seed=0, guide=SaliencyGuided())
    assert loss < 0.05


def test_recurrent_models_get_input_gradients_in_eval_mode():
    from pytest_chaosmining.testbeds.audio.models import build_audio_model

    model = build_audio_model("lstm", 3, 4, 8).train()
    x = torch.randn(2, 3, 256)
    grads = input_gradients(model, x, torch.tensor([0, 1]))
    assert grads.shape == x.shape and grads.abs().sum() > 0 and model.training


def _case(**kw) -> SymbolicCase:
    base = dict(
        formula=2,
        noise_features=10,
        label_noise=0.0,
        n_samples=100,
        width=8,
        depth=1,
        dropout=0.0,
        optimizer="adam",
        lr=1e-2,
        epochs=5,
        seed=0,
    )
    return SymbolicCase(**{**base, **kw})


def test_standard_training_keeps_its_cache_key_and_guided_models_get_their_own():
    standard = _case()
    key = training_key("symbolic", standard, "cpu")
    assert "guide" not in key and "guide_code" not in key
    guided = training_key("symbolic", _case(guide=SaliencyGuided()), "cpu")
    assert guided["guide"] == {"k": 0.1, "lam": 1.0, "absolute": False} and "guide_code" in guided
    assert training_key("symbolic", _case(guide=SaliencyGuided(k=0.2)), "cpu") != guided


def test_training_mode_is_part_of_model_and_test_ids():
    assert guided_model_id("tcn-e6", None) == "tcn-e6"
    assert _case(guide=SaliencyGuided()).model_id.endswith("-sg")
    assert SaliencyGuided(k=0.2, lam=0.5, absolute=True).id == "sg-k0.2-l0.5-abs"
    assert _case(guide=SaliencyGuided()).explainer_id("SA") != _case().explainer_id("SA")


@pytest.mark.parametrize("bad", [dict(k=0.0), dict(k=1.0), dict(lam=-1.0)])
def test_bad_saliency_settings_are_refused(bad):
    with pytest.raises(ValueError):
        SaliencyGuided(**bad)


def test_saliency_plan_pairs_standard_and_guided_models_of_the_domain_suites():
    comparisons = plan_cases("smoke", SALIENCY["smoke"], SaliencyGuided())
    domains = [c.domain for c in comparisons]
    assert set(domains) == {"symbolic", "audio"}  # smoke leaves vision to ci
    assert len({c.id for c in comparisons}) == len(comparisons)
    assert {c.guide for c in comparisons} == {SaliencyGuided()}
    assert all(c.bar_key.endswith("-signed") for c in comparisons)
    absolute = plan_cases("smoke", SALIENCY["smoke"], SaliencyGuided(absolute=True))
    assert all(c.bar_key.endswith("-absolute") and c.id.endswith("-abs") for c in absolute)
    for comparison in comparisons:
        pairs = comparison.pairs()
        assert [s.seed for s, _ in pairs] == list(range(SALIENCY["smoke"].seeds))
        for standard, guided in pairs:
            assert standard.guide is None and guided.guide == comparison.guide
            assert dataclasses.replace(guided, guide=None) == standard


def test_the_comparisons_are_planned_and_scored_on_the_same_testbeds():
    """The spec plans from the testbeds' declarations, the suite scores with them bound: the
    same domains in the same order, each bound testbed a subclass of its declaration."""
    from pytest_chaosmining.suites.saliency.spec import DECLARED_TESTBEDS
    from pytest_chaosmining.suites.saliency.suite import TESTBEDS

    assert list(TESTBEDS) == list(DECLARED_TESTBEDS) == ["symbolic", "vision", "audio"]
    assert all(isinstance(TESTBEDS[name], type(declared)) for name, declared in DECLARED_TESTBEDS.items())
