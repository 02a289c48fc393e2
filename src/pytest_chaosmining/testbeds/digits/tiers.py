"""Tier settings of the vision suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_chaosmining.suite_kit.classifier import ClassifierTier


@dataclass(frozen=True, kw_only=True)
class VisionTier(ClassifierTier):
    """Sizes, models and training of the vision suite in one tier (canvas = 7 × fg)."""

    fg: int


PAPER_VISION_MODELS = ("alexnet", "densenet121", "googlenet", "resnet18", "resnet50", "vgg13", "vit_b_16", "vit_l_32")

# fmt: off
VISION: dict[str, VisionTier] = {
    "smoke": VisionTier(fg=6, n_train=4000, n_val=200, models=("small_cnn",), epochs=8, batch_size=32, lr=3e-3,
                        seeds=1, n_explain=32, internal_batch_size=320,
                        longer_training={"RBRP": (8000, 16), "SBRP": (8000, 16)}),
    "ci": VisionTier(fg=8, n_train=6000, n_val=500, models=("small_cnn",), epochs=12, batch_size=32, lr=3e-3,
                     seeds=1, n_explain=100, internal_batch_size=500),
    "paper": VisionTier(fg=32, n_train=50000, n_val=10000, models=PAPER_VISION_MODELS, epochs=30, batch_size=128,
                        lr=1e-3, seeds=5, n_explain=1000, internal_batch_size=100),
}
# fmt: on
