"""Tier definitions: how big each suite runs at ``smoke``, ``ci`` and ``paper``.

``paper`` is REFERENCE §1: 10,000 samples, 100 noise features, label noise
0.01, MLP 3×100 GELU, Adam lr 1e-3, 1000 full-batch epochs, 5 seeds.  The
smaller tiers keep the model and the metrics and shrink data and epochs,
raising the learning rate so that the fewer full-batch steps still converge.
"""

from __future__ import annotations

TIERS = ("smoke", "ci", "paper")
#: the tier a run takes where none is named (``--chaosmining-tier``), and a results file without one was run at
DEFAULT_TIER = TIERS[0]

#: ``--chaosmining-seeds``: a count N (seeds 0..N-1) or an explicit range of seeds
Seeds = int | range


def seed_range(tier_seeds: int, seeds: Seeds | None) -> range:
    """The seeds to run: the tier's count, a count ``N`` (0..N-1) or an explicit range."""
    if seeds is None:
        return range(tier_seeds)
    return range(seeds) if isinstance(seeds, int) else seeds
