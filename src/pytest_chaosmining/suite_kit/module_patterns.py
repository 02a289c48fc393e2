"""Small image networks, one per module pattern where attribution libraries' reported bugs
live (``benchmarks/real_bugs/corpus.toml``), for the checks that hold on any weights.

Each network takes the vision suite's images (3 channels, any canvas) and gives 10 logits.
They are untrained and seeded (:func:`pattern_network`): an axiom such as completeness
holds for any weights, so a rule that breaks it fails here without a baseline.  The
patterns are the ones the judged suites' trained networks lack, chosen from the corpus:
a pooling layer before its activation, in-place, reused and functional activations, a
Softmax module inside the network, a residual block that calls one ReLU twice, batch norm
after a transposed convolution, and a dead channel at the CAM layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

#: the networks' classes and channels
CLASSES, WIDTH = 10, 8
#: the networks per pattern a check pools (each initialised apart: a defect shows more on some weights)
MEMBERS = 4
#: the version of the networks and their seeding, part of every cached result's key
PATTERNS_VERSION = 2


@dataclass(frozen=True)
class ModulePattern:
    """One network's pattern: its name (what a failure says), the reported bugs it
    reproduces and how it is built."""

    name: str
    references: tuple[str, ...]
    build: Callable[[], nn.Module]


class _Head(nn.Module):
    """A body, global average pooling and a linear head to :data:`CLASSES` logits."""

    def __init__(self, body: nn.Module):
        super().__init__()
        self.body, self.pool, self.fc = body, nn.AdaptiveAvgPool2d(1), nn.Linear(WIDTH, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.body(x)), 1))


class _ReusedReLU(nn.Module):
    """Two convolutions, one ``nn.ReLU`` module called after each."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2, self.act = _conv(3, WIDTH), _conv(WIDTH, WIDTH), nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.c2(self.act(self.c1(x))))


class _FunctionalReLU(nn.Module):
    """Two convolutions, each followed by ``torch.relu`` called as a function."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2 = _conv(3, WIDTH), _conv(WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.c2(torch.relu(self.c1(x))))


class _ResidualBlock(nn.Module):
    """torchvision's BasicBlock layout: conv, BN, ReLU, conv, BN, the identity added, and the
    same ReLU module again."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.bn1 = _conv(WIDTH, WIDTH, bias=False), nn.BatchNorm2d(WIDTH)
        self.conv2, self.bn2 = _conv(WIDTH, WIDTH, bias=False), nn.BatchNorm2d(WIDTH)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class _DeadChannel(nn.Module):
    """Two convolutions and ReLUs; the last convolution's first channel has zero weights
    and bias, so it is constant over every image (a dead unit of a trained network)."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2, self.act1, self.act2 = _conv(3, WIDTH), _conv(WIDTH, WIDTH), nn.ReLU(), nn.ReLU()
        with torch.no_grad():
            self.c2.weight[0].zero_()
            bias = self.c2.bias
            assert bias is not None
            bias[0].zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act2(self.c2(self.act1(self.c1(x))))


def _conv(c_in: int, c_out: int, bias: bool = True) -> nn.Conv2d:
    return nn.Conv2d(c_in, c_out, 3, padding=1, bias=bias)


PATTERNS: tuple[ModulePattern, ...] = (
    ModulePattern(
        "max-pool before ReLU",
        ("pytorch/captum#1104", "pytorch/captum#1276"),
        lambda: _Head(nn.Sequential(_conv(3, WIDTH), nn.MaxPool2d(2), nn.ReLU())),
    ),
    ModulePattern(
        "in-place ReLU after the last convolution",
        ("pytorch/captum#837", "jacobgil/pytorch-grad-cam#183", "frgfm/torch-cam#80"),
        lambda: _Head(
            nn.Sequential(_conv(3, WIDTH), nn.ReLU(inplace=True), _conv(WIDTH, WIDTH), nn.ReLU(inplace=True))
        ),
    ),
    ModulePattern("one ReLU module called twice", ("shap/shap#1479",), lambda: _Head(_ReusedReLU())),
    ModulePattern("functional ReLU", ("pytorch/captum#1082",), lambda: _Head(_FunctionalReLU())),
    ModulePattern(
        "Softmax module inside the network",
        ("pytorch/captum#1367",),
        lambda: _Head(nn.Sequential(_conv(3, WIDTH), nn.ReLU(), nn.Softmax(dim=1))),
    ),
    ModulePattern(
        "residual block calling one ReLU twice",
        ("chr5tphr/zennit#50",),
        lambda: _Head(nn.Sequential(_conv(3, WIDTH), nn.ReLU(), _ResidualBlock())),
    ),
    ModulePattern(
        "batch norm after a transposed convolution",
        ("chr5tphr/zennit#71",),
        lambda: _Head(nn.Sequential(nn.ConvTranspose2d(3, WIDTH, 3, padding=1), nn.BatchNorm2d(WIDTH), nn.ReLU())),
    ),
    ModulePattern(
        "a constant channel at the CAM layer",
        ("jacobgil/pytorch-grad-cam#449", "frgfm/torch-cam#185"),
        lambda: _Head(_DeadChannel()),
    ),
)


def pattern_network(pattern: ModulePattern, seed: int, member: int, device: torch.device) -> nn.Module:
    """``pattern``'s network ``member`` (of :data:`MEMBERS`) initialised under ``seed``, the member
    and the pattern's index among :data:`PATTERNS`,
    in eval mode on ``device``, each batch norm's running statistics drawn from the same
    seed (a trained network's are not 0 and 1)."""
    index = PATTERNS.index(pattern)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(10_000 * seed + 100 * member + index)
        model = pattern.build()
        with torch.no_grad():
            for module in model.modules():
                if isinstance(module, nn.BatchNorm2d):
                    mean, var = module.running_mean, module.running_var
                    assert mean is not None and var is not None  # tracked: the layers' default
                    mean.normal_(0.0, 0.1)
                    var.uniform_(0.5, 1.5)
    return model.eval().to(device)
