"""Audio models, the attribution call (eval mode, cuDNN off for RNNs) and the channel metrics."""

import numpy as np
import pytest
import torch

from pytest_chaosmining.core.metrics.attribution import channel_scores
from pytest_chaosmining.explainers import Explainer, ExplainerNotApplicable, builtin_explainers
from pytest_chaosmining.testbeds.audio.cases import AudioCase, TrainedAudioModel
from pytest_chaosmining.testbeds.audio.models import MODEL_NAMES, build_audio_model, is_recurrent
from pytest_chaosmining.testbeds.audio.training import attribution_call, segment_mask


def case(model="lstm", channels=3):
    return AudioCase(
        condition="RBRP", model=model, channels=channels, rate=2000, duration=0.25, n_train=8, n_val=6, epochs=1,
        batch_size=4, lr=1e-3, stride=8, seed=0,
    )  # fmt: skip


def trained(model="lstm"):
    from pytest_chaosmining.testbeds.audio.data import AudioData

    c = case(model)
    torch.manual_seed(0)
    net = build_audio_model(model, c.channels, 10, c.stride).eval()
    rng = np.random.default_rng(0)
    waves = (rng.uniform(-0.5, 0.5, (6, c.channels, 500)) * 32767).astype(np.int16)
    data = AudioData(waves, np.arange(6) % 10, np.array([0, 1, 2, 0, 1, 2]), tuple("abcdefghij"))
    return TrainedAudioModel(c, net, data, np.arange(6) % 10, 0.0, 0.0)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_classify_multichannel_waveforms(name):
    torch.manual_seed(0)
    model = build_audio_model(name, 4, 7, 8)
    x = torch.randn(3, 4, 800)
    out = model(x)
    assert out.shape == (3, 7)
    out.sum().backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    model.eval()
    torch.testing.assert_close(model(x), model(x))  # deterministic: zero initial state, no dropout


def test_hidden_size_and_depth_follow_the_paper():
    lstm = build_audio_model("lstm", 10, 35, 16)
    assert lstm.body.rnn.hidden_size == 60 and lstm.body.rnn.num_layers == 3
    assert len(build_audio_model("transformer", 10, 35, 16).body.encoder.layers) == 3
    assert len(build_audio_model("tcn", 10, 35, 16).body.convs) == 3
    assert is_recurrent(lstm) and not is_recurrent(build_audio_model("tcn", 10, 35, 16))


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_builtin_explainer_attributes_every_model(name):
    """Every built-in attributes every audio model, but GradCAM (no 2-D convolution) and KS (tabular only)."""
    t = trained(name)
    not_applicable = set()
    for explainer in builtin_explainers().values():
        try:
            attr = attribution_call(t, explainer, torch.device("cpu"), 64, slice(0, 3))()
        except ExplainerNotApplicable:
            not_applicable.add(explainer.name)
            continue
        assert attr.shape == (3, 3, 500) and torch.isfinite(attr).all(), explainer.name
    assert not_applicable == {"GradCAM", "KS"}


def test_recurrent_models_are_attributed_in_eval_mode_with_cudnn_off():
    seen = {}

    def spy(model, inputs, target):
        seen["cudnn"] = torch.backends.cudnn.enabled
        seen["training"] = model.training
        return torch.zeros_like(inputs)

    explainer = Explainer("spy", spy, {}, None, "conftest")
    attribution_call(trained("lstm"), explainer, torch.device("cpu"), 8, slice(0, 2))()
    assert seen == {"cudnn": False, "training": False}
    attribution_call(trained("tcn"), explainer, torch.device("cpu"), 8, slice(0, 2))()
    assert seen["cudnn"] is torch.backends.cudnn.enabled


def test_feature_ablation_groups_channel_time_segments():
    mask = segment_mask(case(channels=3))
    assert mask.shape == (1, 3, 500)
    assert mask.unique().numel() == 3 * 5
    assert (mask[0, 1] // 5 == 1).all()  # a group never spans two channels


def test_channel_scores():
    attr = np.zeros((4, 3, 10))
    attr[0, 2] = 1.0  # all mass on the true channel
    attr[1] = 1.0  # constant: a tie, never a hit
    attr[3, 0], attr[3, 1] = -2.0, 1.0  # signs do not matter, magnitude does
    share, hit = channel_scores(attr, np.array([2, 2, 0, 0]))
    np.testing.assert_allclose(share, [1.0, 1 / 3, 0.0, 2 / 3])  # an all-zero map scores 0
    np.testing.assert_array_equal(hit, [1, 0, 0, 1])
