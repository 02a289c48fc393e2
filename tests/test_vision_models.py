import pytest
import torch

from pytest_chaosmining.core.training.classification import ClassifierTraining, predict, train_classifier
from pytest_chaosmining.testbeds.digits.models import build_model
from pytest_chaosmining.testbeds.digits.tiers import PAPER_VISION_MODELS, VISION


@pytest.mark.parametrize("name", PAPER_VISION_MODELS)
def test_paper_model_builds_and_trains_one_step_on_cpu(name):
    """Every paper-tier architecture, at the paper's 224 px, from scratch with 10 classes."""
    torch.manual_seed(0)
    model = build_model(name)
    images = torch.randint(0, 256, (2, 3, 224, 224), dtype=torch.uint8)
    labels = torch.tensor([1, 7])
    before = [p.detach().clone() for p in model.parameters()]
    loss = train_classifier(model, images, labels, ClassifierTraining(epochs=1, batch_size=2), seed=0)
    assert loss == loss  # not NaN
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert predict(model, images).shape == (2,)


def test_small_cnn_accepts_every_tier_canvas():
    model = build_model("small_cnn").eval()
    for tier in VISION.values():
        side = 7 * tier.fg
        assert model(torch.zeros(2, 3, side, side)).shape == (2, 10)


def test_unknown_model():
    with pytest.raises(KeyError, match="unknown vision model"):
        build_model("lenet")


def test_bf16_training_stays_close_to_fp32_and_hands_back_an_fp32_model():
    """``--chaosmining-precision bf16``: autocast and channels_last batches change the
    arithmetic, not what is learned; the model comes back fp32, contiguous, in eval mode."""
    from torch import nn

    torch.manual_seed(0)
    images = (torch.rand(256, 3, 16, 16) * 255).to(torch.uint8)
    labels = (images.float().mean((1, 2, 3)) > 127.5).long()
    trained = {}
    for precision in ("fp32", "bf16"):
        torch.manual_seed(0)
        model = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 2)
        )
        loss = train_classifier(
            model,
            images,
            labels,
            ClassifierTraining(epochs=3, batch_size=64, lr=1e-2, t0=3),
            seed=0,
            precision=precision,
        )
        trained[precision] = (loss, model)
    (loss32, fp32), (loss16, bf16) = trained["fp32"], trained["bf16"]
    weight = bf16[0].weight
    assert weight.dtype == torch.float32 and weight.is_contiguous() and not bf16.training
    assert not torch.equal(weight, fp32[0].weight)  # the arithmetic did change
    assert torch.allclose(weight, fp32[0].weight, atol=5e-2) and abs(loss16 - loss32) < 1e-2
    with pytest.raises(ValueError, match="fp64"):
        train_classifier(fp32, images, labels, ClassifierTraining(epochs=1), seed=0, precision="fp64")


def test_a_precision_other_than_fp32_names_and_keys_its_models_apart():
    import dataclasses

    from pytest_chaosmining.testbeds.digits.cases import plan_cases
    from pytest_chaosmining.testbeds.digits.tiers import VISION

    case = plan_cases(VISION["smoke"], 1)[0]
    bf16 = dataclasses.replace(case, precision="bf16")
    assert "precision" not in case.training_config("cpu")  # fp32 models keep their keys (and the shipped pack)
    assert bf16.training_config("cpu")["precision"] == "bf16" and bf16.id == case.id.replace("-s0", "-bf16-s0")


@pytest.mark.parametrize("suite", ["vision", "audio"])
def test_bf16_and_saliency_guided_models_are_report_only(suite):
    """The bars were calibrated for standard fp32 training: a bf16 or a saliency guided
    model's tests skip as report-only, naming why (at seed 0, bf16 IxG on RBRP scored
    0.553 against fp32's bar 0.56); a standard fp32 model's are judged."""
    import dataclasses

    from pytest_chaosmining.core.training.modes import SaliencyGuided
    from pytest_chaosmining.suites import get_suite
    from pytest_chaosmining.testbeds.audio import cases as audio_cases
    from pytest_chaosmining.testbeds.audio.tiers import AUDIO
    from pytest_chaosmining.testbeds.digits import cases as digit_cases

    if suite == "vision":
        case = digit_cases.plan_cases(VISION["smoke"], 1)[0]
    else:
        case = audio_cases.plan_cases(AUDIO["smoke"], 1)[0]
    judged = get_suite(suite)
    assert judged.uncalibrated(None, case) is None
    assert judged.uncalibrated(None, dataclasses.replace(case, precision="bf16")) == "bf16 training"
    guided = dataclasses.replace(case, guide=SaliencyGuided())
    assert judged.uncalibrated(None, guided) == "saliency guided training (sg)"
