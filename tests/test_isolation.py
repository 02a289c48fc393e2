"""Each explainer call is isolated: what an explainer changes fails its own call,
named, and never reaches the next explainer."""

import numpy as np
import pytest
import torch

from pytest_chaosmining.explainers import Explainer, ExplainerError, attribute, builtin_explainers


def _model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8), torch.nn.GELU(), torch.nn.Linear(8, 1))
    model(torch.randn(32, 6))  # fill BatchNorm's running statistics
    return model.eval()


def _inputs():
    return torch.randn(16, 6, generator=torch.Generator().manual_seed(1))


def _zero_weights(model, inputs, target):
    with torch.no_grad():
        model[0].weight.zero_()
    return torch.rand_like(inputs)


def _leave_hook(model, inputs, target):
    model[0].register_forward_hook(lambda m, i, o: o * 0)
    return torch.rand_like(inputs)


def _train_mode(model, inputs, target):
    model.train()
    return torch.rand_like(inputs)


def _freeze(model, inputs, target):
    for p in model.parameters():
        p.requires_grad_(False)
    return torch.rand_like(inputs)


def _alter_inputs(model, inputs, target):
    inputs.mul_(0)
    return torch.rand_like(inputs)


def _grad_off(model, inputs, target):
    torch.set_grad_enabled(False)
    return torch.rand_like(inputs)


def _global_hook(model, inputs, target):
    torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o)
    return torch.rand_like(inputs)


def _buffer_change(model, inputs, target):
    model.train()(inputs)  # updates BatchNorm's running statistics
    model.eval()
    return torch.rand_like(inputs)


@pytest.mark.parametrize(
    ("method", "named"),
    [
        (_zero_weights, "modified the values of 0.weight"),
        (_leave_hook, "left hooks registered on 0 (forward hook)"),
        (_train_mode, "to train mode"),
        (_freeze, "changed requires_grad of 0.weight"),
        (_alter_inputs, "modified its inputs in place"),
        (_grad_off, "grad mode from True to False"),
        (_global_hook, "global module hook"),
        (_buffer_change, "modified the values of 1.running_mean"),
    ],
)
def test_a_change_fails_its_own_call_named_and_the_next_call_is_unaffected(method, named):
    model, inputs = _model(), _inputs()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sa = builtin_explainers()["SA"]
    expected = attribute(sa, model, inputs, 0)
    with pytest.raises(ExplainerError, match="'bad' changed what it was given") as info:
        attribute(Explainer("bad", method), model, inputs, 0)
    assert named in str(info.value)
    # the suite's model, inputs and the process are as before
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert not model.training and not model[0]._forward_hooks
    assert torch.is_grad_enabled()
    assert not torch.nn.modules.module._global_forward_hooks
    assert torch.equal(attribute(sa, model, inputs, 0), expected)
    assert torch.equal(inputs, _inputs())


def test_random_state_is_restored_after_every_call():
    model, inputs = _model(), _inputs()

    def draws(model, inputs, target):
        torch.rand(100)
        np.random.rand(100)
        return torch.rand_like(inputs)

    torch.manual_seed(3)
    np.random.seed(3)
    attribute(Explainer("draws", draws), model, inputs, 0)
    after = (torch.rand(1).item(), np.random.rand())
    torch.manual_seed(3)
    np.random.seed(3)
    assert (torch.rand(1).item(), np.random.rand()) == after


def test_a_raising_explainer_still_restores_the_process():
    def raises(model, inputs, target):
        torch.set_grad_enabled(False)
        raise ValueError("boom")

    with pytest.raises(ExplainerError, match="raised ValueError: boom"):
        attribute(Explainer("raises", raises), _model(), _inputs(), 0)
    assert torch.is_grad_enabled()


def test_a_model_in_train_mode_is_given_in_eval_mode():
    model = _model().train()
    seen = []

    def record(model, inputs, target):
        seen.append(model.training)
        return torch.rand_like(inputs)

    attribute(Explainer("mode", record), model, _inputs(), 0)
    assert seen == [False] and model.training
