"""Training modes of the suites' models, without heavy imports: the settings of
saliency guided training and how a mode enters a case's model name and cache key.
The training itself is in :mod:`pytest_chaosmining.core.training.saliency`."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Training modes selectable with ``--chaosmining-training``.
TRAINING_MODES = ("standard", "saliency-guided")
#: Arithmetic of the classifiers' training (``--chaosmining-precision``): fp32, or bf16 autocast
#: with channels_last image batches
PRECISIONS = ("fp32", "bf16")
#: the arithmetic the bars were calibrated on, which adds nothing to a model's name or key
STANDARD_PRECISION = PRECISIONS[0]
#: the training the bars were calibrated on (no training mode in a model's name or key)
STANDARD_TRAINING = TRAINING_MODES[0]


@dataclass(frozen=True)
class SaliencyGuided:
    """Settings of saliency guided training (reference defaults: k = 0.1, λ = 1, signed gradients)."""

    k: float = 0.1
    lam: float = 1.0
    absolute: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.k < 1.0:
            raise ValueError(f"saliency guided training: k must be in (0, 1), got {self.k}")
        if self.lam < 0:
            raise ValueError(f"saliency guided training: lambda must be >= 0, got {self.lam}")

    @property
    def id(self) -> str:
        """Short id used in test ids and model names: ``sg`` at the defaults, else
        with the settings (``sg-k0.2-l0.5-abs``)."""
        if self == SaliencyGuided():
            return "sg"
        return f"sg-k{self.k:g}-l{self.lam:g}" + ("-abs" if self.absolute else "")


def uncalibrated_training(guide: SaliencyGuided | None, precision: str = STANDARD_PRECISION) -> list[str]:
    """What of a model's training the suites' bars were not calibrated for (they were
    for standard fp32 training): saliency guided training, another precision."""
    found = [] if guide is None else [f"saliency guided training ({guide.id})"]
    return found + ([] if precision == STANDARD_PRECISION else [f"{precision} training"])


def guided_model_id(model_id: str, guide: SaliencyGuided | None, precision: str = STANDARD_PRECISION) -> str:
    """``model_id`` with the training mode and a precision other than fp32 appended
    (nothing for standard fp32 training)."""
    model_id = model_id if guide is None else f"{model_id}-{guide.id}"
    return model_id if precision == STANDARD_PRECISION else f"{model_id}-{precision}"


def training_key(suite: str, case: Any, device_type: str) -> dict[str, Any]:
    """Everything that affects a case's trained weights (its cache key); standard
    training adds nothing, nor does fp32, so standard models keep their keys."""
    fields = dataclasses.asdict(case)
    if fields.get("precision") == STANDARD_PRECISION:
        fields.pop("precision")
    if fields.get("guide") is None:
        fields.pop("guide", None)
    else:  # the guided loss's source is part of what a guided model is
        fields["guide_code"] = hashlib.sha256(Path(_guided_loss_source()).read_bytes()).hexdigest()[:16]
    return {"suite": suite, **fields, "device": device_type}


def _guided_loss_source() -> str:
    """The file of :mod:`pytest_chaosmining.core.training.saliency`, found through the
    import system without importing it (it imports this module)."""
    spec = importlib.util.find_spec("pytest_chaosmining.core.training.saliency")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("pytest_chaosmining.core.training.saliency")
    return spec.origin
