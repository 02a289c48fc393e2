"""Tier settings of the saliency suite: how big it runs at ``smoke``, ``ci`` and ``paper``."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_chaosmining.suite_kit.seam import DomainPick


@dataclass(frozen=True)
class SaliencyTier:
    """What the saliency guided training suite compares in one tier: per domain
    suite (symbolic, vision, audio) a few cases of the same tier, each over
    ``seeds`` seeds (at least 2: the report gives the spread of paired
    differences)."""

    seeds: int
    picks: dict[str, DomainPick]


# fmt: off
SALIENCY: dict[str, SaliencyTier] = {
    # smoke leaves vision out: two seeds of a guided small_cnn alone take ~3 min on 2 cores
    "smoke": SaliencyTier(seeds=2, picks={"symbolic": DomainPick(("f02", "f06")),
                                          "vision": DomainPick((), "small_cnn"),
                                          "audio": DomainPick(("SBFP",), "tcn")}),
    "ci": SaliencyTier(seeds=2, picks={"symbolic": DomainPick(("f01", "f06", "f09")),
                                       "vision": DomainPick(("SBFP",), "small_cnn"),
                                       "audio": DomainPick(("SBFP",), "tcn")}),
    "paper": SaliencyTier(seeds=5, picks={"symbolic": DomainPick(tuple(f"f{f:02d}" for f in range(1, 16))),
                                          "vision": DomainPick(("RBFP", "SBFP"), "resnet18"),
                                          "audio": DomainPick(("RBFP", "SBFP"), "tcn")}),
}
# fmt: on
