"""Tier settings of the audio suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_chaosmining.suite_kit.classifier import ClassifierTier


@dataclass(frozen=True, kw_only=True)
class AudioTier(ClassifierTier):
    """Sizes, models and training of the audio suite in one tier.

    ``stride`` is the Conv1d front end's stride (the body sees ``rate ×
    duration / stride`` steps); the Transformer trains at ``transformer_lr``
    (paper: 1e-4 against 1e-3 for the others).
    """

    channels: int
    rate: int
    duration: float
    transformer_lr: float
    stride: int

    def lr_for(self, model: str) -> float:
        return self.transformer_lr if model == "transformer" else self.lr


PAPER_AUDIO_MODELS = ("rnn", "lstm", "tcn", "transformer")

# fmt: off
AUDIO: dict[str, AudioTier] = {
    "smoke": AudioTier(channels=4, rate=4000, duration=0.5, n_train=2000, n_val=200, models=("tcn",), epochs=6,
                       batch_size=64, lr=3e-3, transformer_lr=1e-3, stride=32, seeds=1, n_explain=32,
                       internal_batch_size=320, n_check=32,
                       longer_training={"RBRP": (8000, 12), "SBRP": (8000, 12)}),
    "ci": AudioTier(channels=8, rate=4000, duration=0.5, n_train=4000, n_val=400, models=PAPER_AUDIO_MODELS, epochs=8,
                    batch_size=64, lr=3e-3, transformer_lr=1e-3, stride=32, seeds=1, n_explain=64,
                    internal_batch_size=640, n_check=32),
    "paper": AudioTier(channels=10, rate=16000, duration=1.0, n_train=84843, n_val=9981, models=PAPER_AUDIO_MODELS,
                       epochs=30, batch_size=128, lr=1e-3, transformer_lr=1e-4, stride=16, seeds=5, n_explain=1000,
                       internal_batch_size=100, n_check=200),
}
# fmt: on
