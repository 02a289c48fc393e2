"""Image classifiers for the vision suite.

``small_cnn`` is the CPU-sized reference model of the smoke and ci tiers.  The
paper's architectures come from torchvision, built from scratch with
``num_classes=10``.  The CNNs pool globally and accept any canvas size; the ViTs
need the paper's 224 px canvas.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

N_CLASSES = 10


class SmallCNN(nn.Module):
    """Three conv blocks (BatchNorm, ReLU, max-pool), global max-pool, linear head."""

    def __init__(self, n_classes: int = N_CLASSES, width: int = 16):
        super().__init__()
        c1, c2, c3 = width, 2 * width, 4 * width
        self.features = nn.Sequential(
            nn.Conv2d(3, c1, 3, padding=1),
            nn.BatchNorm2d(c1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1),
            nn.BatchNorm2d(c2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c2, c3, 3, padding=1),
            nn.BatchNorm2d(c3),
            nn.ReLU(),
            nn.AdaptiveMaxPool2d(1),
        )
        self.head = nn.Linear(c3, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


def _torchvision(name: str) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import torchvision.models as tvm  # seconds to import: only where a paper architecture is built

        kwargs = {"num_classes": N_CLASSES, "weights": None}
        if name == "googlenet":
            kwargs.update(aux_logits=False, init_weights=True)
        return getattr(tvm, name)(**kwargs)

    return build


MODELS: dict[str, Callable[[], nn.Module]] = {
    "small_cnn": SmallCNN,
    "resnet18": _torchvision("resnet18"),
    "resnet50": _torchvision("resnet50"),
    "densenet121": _torchvision("densenet121"),
    "googlenet": _torchvision("googlenet"),
    "alexnet": _torchvision("alexnet"),
    "vgg13": _torchvision("vgg13"),
    "vit_b_16": _torchvision("vit_b_16"),
    "vit_l_32": _torchvision("vit_l_32"),
}


def build_model(name: str) -> nn.Module:
    """A freshly initialised model by name (seed the global RNG first)."""
    if name not in MODELS:
        raise KeyError(f"unknown vision model {name!r}; available: {sorted(MODELS)}")
    return MODELS[name]()
