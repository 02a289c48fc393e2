"""Where a run computes: its torch device (one GPU per xdist worker) and whether
same-shape models train as batched ensembles."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pytest

from pytest_chaosmining.core.machine import Machine, this_machine
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    import torch


def worker_id(config: pytest.Config) -> str | None:
    """This process's xdist worker id (``gw0``, …); None on the controller or without xdist."""
    workerinput: dict[str, object] = getattr(config, "workerinput", {})
    worker = workerinput.get("workerid")
    return str(worker) if worker is not None else None


class Placement:
    """The run's device and ensemble choice (``--chaosmining-device``, ``--chaosmining-ensemble``)."""

    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings

    @functools.cached_property
    def device(self) -> torch.device:
        """``--chaosmining-device``, else CUDA where present.  Plain ``cuda`` on xdist
        worker ``gw<i>`` of a machine with several GPUs is ``cuda:<i mod GPUs>``."""
        from pytest_chaosmining.run.torch_device import placed  # torch: loaded when the device is first asked for

        return placed(self.settings.device, worker_id(self.config))

    def machine(self) -> Machine:
        """The machine the run measures its costs on: this process's, with the device's
        type and, on CUDA, the GPU's name."""
        from pytest_chaosmining.run.torch_device import gpu_name  # loaded with the device

        device = self.device
        return this_machine(device.type, gpu_name(device))

    @property
    def ensemble(self) -> bool:
        """Whether same-shape models train as batched ensembles (``auto``: on CUDA)."""
        setting = self.settings.ensemble
        return setting == "on" or (setting == "auto" and self.device.type == "cuda")
