import pytest
import torch

from pytest_chaosmining.core.classification import ClassifierTraining, predict, train_classifier
from pytest_chaosmining.suites.vision.tiers import PAPER_VISION_MODELS, VISION
from pytest_chaosmining.suites.vision.models import build_model


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
