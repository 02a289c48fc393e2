"""The audio classifiers as a testbed (:class:`~pytest_chaosmining.suite_kit.seam.ModelTestbed`):
the audio suite is built on it, and the suites that compose its classifiers (saliency)
reach them through it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.suite_kit.classifier import ClassifierFunctions, ClassifierTestbed
from pytest_chaosmining.testbeds.audio.cases import DISK_SOURCE, SUITE, TrainedAudioModel, plan_cases
from pytest_chaosmining.testbeds.audio.tiers import AUDIO

if TYPE_CHECKING:
    from pytest_chaosmining.testbeds.audio import scoring
else:  # the heavy half, loaded on first use
    scoring = lazy_module("pytest_chaosmining.testbeds.audio.scoring")


class AudioTestbed(ClassifierTestbed):
    """Sequence classifiers trained per background × position condition, scored by
    which channel carries the spoken word (channel share, top-1 hits)."""

    name = SUITE
    #: the scores compared between models (the first is judged)
    compared = ("channel_share", "top1_hit")
    tiers = AUDIO
    disk_source = DISK_SOURCE
    functions = ClassifierFunctions(plan_cases, scoring)

    def unlearned_keys(self, case: Any) -> tuple[str, ...]:
        """The architecture and condition, the model, the condition."""
        return (case.bar_key, case.model, case.condition)

    def chance(self, model: TrainedAudioModel) -> float:
        """Channel share of a map that knows nothing: 1 / channels."""
        return 1 / model.case.channels


#: the audio testbed
AUDIO_MODELS = AudioTestbed()
