"""Sequence classifiers of the audio suite (ChaosMining §3.3, A.4).

All four share the paper's frame: a Conv1d front end over the raw
multi-channel waveform, a body of 3 layers with hidden size 60, max-pooling
over time, and a linear head.  The paper does not state the front end's kernel
or stride; here the front end is ``Conv1d(channels, 60, kernel=2·stride,
stride=stride)`` + ReLU, with ``stride`` set by the tier so that the body sees
a sequence of a length it can afford (paper tier: 16,000 samples / 16 = 1,000
steps).  Recurrent bodies start from a zero state (deterministic; the reference
drew a random one).
"""

from __future__ import annotations

import math

import torch
from torch import nn

HIDDEN, LAYERS = 60, 3
MODEL_NAMES = ("rnn", "lstm", "tcn", "transformer")
RECURRENT = (nn.RNN, nn.LSTM, nn.GRU)


class _Recurrent(nn.Module):
    def __init__(self, cell: type[nn.Module]):
        super().__init__()
        self.rnn = cell(HIDDEN, HIDDEN, num_layers=LAYERS, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, H) -> (B, T, H)
        return self.rnn(x)[0]


class _TCN(nn.Module):
    """Residual dilated convolutions (dilation 1, 2, 4), one ReLU module per use."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv1d(HIDDEN, HIDDEN, 3, dilation=2**i, padding=2**i) for i in range(LAYERS))
        self.acts = nn.ModuleList(nn.ReLU() for _ in range(LAYERS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.transpose(1, 2)
        for conv, act in zip(self.convs, self.acts):
            h = act(conv(h)) + h
        return h.transpose(1, 2)


class _Transformer(nn.Module):
    """A 3-layer encoder (4 heads, no dropout) with sinusoidal position encodings."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(HIDDEN, nhead=4, dim_feedforward=2 * HIDDEN, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.arange(x.shape[1], device=x.device, dtype=x.dtype)[:, None]
        freq = torch.exp(torch.arange(0, HIDDEN, 2, device=x.device, dtype=x.dtype) * (-math.log(10000.0) / HIDDEN))
        pe = torch.cat([torch.sin(t * freq), torch.cos(t * freq)], dim=1)
        return self.encoder(x + pe)


class AudioClassifier(nn.Module):
    """Conv1d front end -> body -> max over time -> linear head."""

    def __init__(self, body: nn.Module, channels: int, n_classes: int, stride: int):
        super().__init__()
        self.front = nn.Conv1d(channels, HIDDEN, kernel_size=2 * stride, stride=stride, padding=stride // 2)
        self.front_act = nn.ReLU()
        self.body = body
        self.head = nn.Linear(HIDDEN, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (B, C, T)
        h = self.front_act(self.front(x)).transpose(1, 2)  # (B, T', H)
        return self.head(self.body(h).amax(dim=1))


BODIES = {
    "rnn": lambda: _Recurrent(nn.RNN),
    "lstm": lambda: _Recurrent(nn.LSTM),
    "tcn": _TCN,
    "transformer": _Transformer,
}


def build_audio_model(name: str, channels: int, n_classes: int, stride: int) -> AudioClassifier:
    """A freshly initialised classifier by name (seed the global RNG first)."""
    if name not in BODIES:
        raise KeyError(f"unknown audio model {name!r}; available: {list(BODIES)}")
    return AudioClassifier(BODIES[name](), channels, n_classes, stride)


def is_recurrent(model: nn.Module) -> bool:
    """Whether ``model`` contains a cuDNN-backed recurrent layer."""
    return any(isinstance(m, RECURRENT) for m in model.modules())
