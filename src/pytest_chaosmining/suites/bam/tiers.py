"""Tier settings of the bam suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class BamTraining:
    """What a case's BAM models are: f_o, f_s and one scene model per commonality in
    ``ks`` (the last, normally 1.0, is the reference of MCS_k), ``model``s trained on
    ``canvas``-px images."""

    canvas: int
    n_train: int
    n_val: int
    model: str
    epochs: int
    batch_size: int
    lr: float
    ks: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class BamTier(BamTraining):
    """Sizes and training of the BAM suite in one tier; ``delta_steps`` gradient steps find IIR's δ."""

    seeds: int
    n_explain: int
    internal_batch_size: int
    delta_steps: int


# fmt: off
BAM: dict[str, BamTier] = {
    "smoke": BamTier(canvas=32, n_train=3000, n_val=300, model="small_cnn", epochs=8, batch_size=32, lr=3e-3,
                     seeds=1, ks=(0.1, 1.0), n_explain=150, internal_batch_size=300, delta_steps=100),
    "ci": BamTier(canvas=40, n_train=5000, n_val=500, model="small_cnn", epochs=10, batch_size=32, lr=3e-3,
                  seeds=1, ks=(0.1, 0.3, 0.5, 0.7, 1.0), n_explain=300, internal_batch_size=300, delta_steps=100),
    "paper": BamTier(canvas=224, n_train=90000, n_val=10000, model="resnet50", epochs=30, batch_size=128, lr=1e-3,
                     seeds=3, ks=tuple(round(0.1 * i, 1) for i in range(1, 11)), n_explain=1000,
                     internal_batch_size=100, delta_steps=200),
}
# fmt: on
