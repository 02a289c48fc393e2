"""The audio classifiers as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`),
declared: name, tiers, data source, case planning (light; :mod:`.bound` binds its scoring)."""

from __future__ import annotations

from typing import Any

from pytest_chaosmining.suite_kit.classifier import ClassifierTestbed
from pytest_chaosmining.testbeds.audio.cases import DISK_SOURCE, SUITE, TrainedAudioModel, plan_cases
from pytest_chaosmining.testbeds.audio.tiers import AUDIO


class AudioTestbed(ClassifierTestbed):
    """Sequence classifiers trained per background × position condition, scored by
    which channel carries the spoken word (channel share, top-1 hits)."""

    name = SUITE
    #: the scores compared between models (the first is judged)
    compared = ("channel_share", "top1_hit")
    tiers = AUDIO
    disk_source = DISK_SOURCE
    plan_cases = staticmethod(plan_cases)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The architecture and condition, the model, the condition."""
        return (case.bar_key, case.model, case.condition)

    def chance(self, model: TrainedAudioModel) -> float:
        """Channel share of a map that knows nothing: 1 / channels."""
        return 1 / model.case.channels
