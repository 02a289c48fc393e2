"""What determines one BAM split (its kind, canvas, size, split, seed, commonality, source)
and its seeded generators: light, read by the suite's spec to name a case's splits, and
part of the code key of the data and models made from it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: what a BAM split holds: X_{o,s} with both labels, or X^k with the common feature
KINDS = ("objects", "common")


@dataclass(frozen=True)
class BamDataSpec:
    """Everything that determines one BAM split."""

    kind: str  # objects: X_{o,s} with both labels; common: X^k with CF
    canvas: int
    n: int
    split: str
    seed: int
    k: float = 1.0
    source: str = "embedded"
    data_dir: str | None = None
    scene_class: int | None = None  # only this scene class (the CF evaluation sets)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.split not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {self.split!r}")
        if not 0.0 <= self.k <= 1.0:
            raise ValueError(f"commonality k must be in [0, 1], got {self.k}")
        if self.canvas < 12:
            raise ValueError("canvas must be at least 12 px")

    def rng(self, stream: str) -> np.random.Generator:
        parts = [
            KINDS.index(self.kind),
            self.canvas,
            self.n,
            int(self.split == "val"),
            self.seed,
            int(round(self.k * 100)),
            0 if self.scene_class is None else self.scene_class + 1,
        ]
        return np.random.default_rng(np.random.SeedSequence(parts + [sum(map(ord, stream))]))
