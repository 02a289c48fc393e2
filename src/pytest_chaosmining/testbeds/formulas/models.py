"""Model architectures used by the suites."""

from __future__ import annotations

import torch
from torch import nn


class MLPRegressor(nn.Module):
    """The ChaosMining symbolic regressor: ``depth`` hidden layers of ``width``
    units with GELU (as the reference), optional dropout, one linear output.

    Note for DeepLift: captum has no DeepLift rule for GELU and passes plain
    gradients through it, so "DL" on this model is gradient × (input − baseline).
    """

    def __init__(self, n_features: int, width: int = 100, depth: int = 3, dropout: float = 0.0):
        super().__init__()
        layers: list[nn.Module] = []
        size = n_features
        for _ in range(depth):
            layers += [nn.Linear(size, width), nn.GELU()]
            if dropout > 0:
                layers.append(nn.Dropout(dropout))
            size = width
        layers.append(nn.Linear(size, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)
