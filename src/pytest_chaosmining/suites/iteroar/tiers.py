"""Tier settings of the iteroar suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class IteroarTier:
    """What the IteROAR suite runs in one tier: chains on ``conditions`` of the
    same tier's vision data and ``model`` (``vision_sizes`` overrides that tier's
    sizes; where it is empty f_0 is the vision suite's cached model).  Each mask
    removes ``1 − tau`` of the canvas, ``iterations`` times (ρ = iterations ×
    (1 − τ); IteROAR: τ = 0.95, ρ = 0.5, so 10 iterations).  Retraining is
    ``retrain_epochs`` epochs warm-started on the first ``n_retrain`` training
    images, or from scratch on all of them where ``retrain_epochs`` is None."""

    conditions: tuple[str, ...]
    model: str
    iterations: int
    tau: float
    fills: tuple[str, ...]
    n_retrain: int
    retrain_epochs: int | None
    n_explain: int
    seeds: int
    vision_sizes: dict[str, int] = field(default_factory=dict)


# fmt: off
ITEROAR: dict[str, IteroarTier] = {
    # smoke: the fixed position, where the smoke vision model learns on every seed (SBRP reached the
    # f_0 gate on 2 of 8 calibration seeds); a centre prior that ignores the model would remove the
    # foreground too, and fails the model-randomisation check (training_gain) instead
    "smoke": IteroarTier(conditions=("SBFP",), model="small_cnn", iterations=1, tau=0.95, fills=("zero",),
                         n_retrain=1000, retrain_epochs=3, n_explain=200, seeds=1),
    "ci": IteroarTier(conditions=("SBRP",), model="small_cnn", iterations=3, tau=0.95, fills=("zero", "mean"),
                      n_retrain=2000, retrain_epochs=3, n_explain=300, seeds=1,
                      vision_sizes={"fg": 6, "n_train": 4000, "n_val": 300, "epochs": 8}),
    "paper": IteroarTier(conditions=("RBRP", "SBRP"), model="resnet50", iterations=10, tau=0.95,
                         fills=("zero", "mean"), n_retrain=50000, retrain_epochs=None, n_explain=1000, seeds=3),
}
# fmt: on
