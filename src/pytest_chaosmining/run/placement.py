"""Where a run computes: its torch device (one GPU per xdist worker) and whether
same-shape models train as batched ensembles."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pytest

from pytest_chaosmining.core.lazy import lazy_module
from pytest_chaosmining.core.machine import Machine, this_machine
from pytest_chaosmining.settings import Settings

if TYPE_CHECKING:
    import torch

    from pytest_chaosmining.core.training import determinism
else:  # heavy: loaded when the run's device is first asked for
    torch = lazy_module("torch")
    determinism = lazy_module("pytest_chaosmining.core.training.determinism")


def worker_gpu(worker_id: str | None, gpus: int) -> int:
    """The GPU index of xdist worker ``gw<i>``: ``i mod gpus`` (0 without xdist)."""
    if worker_id is None or gpus <= 1 or not worker_id.startswith("gw"):
        return 0
    return int(worker_id[2:]) % gpus


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
        name = self.settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
        device = torch.device(name)  # raises RuntimeError on a malformed name
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"device {name!r} requested but CUDA is not available")
        if device.type == "cuda":
            determinism.prepare_cuda_process()  # deterministic cuBLAS needs its workspace set before its first call
            torch.backends.cudnn.benchmark = (
                True  # the suites' shapes are fixed (training and explainers: fixed kernels)
            )
            if device.index is None:
                return torch.device("cuda", worker_gpu(worker_id(self.config), torch.cuda.device_count()))
        return device

    def machine(self) -> Machine:
        """The machine the run measures its costs on: this process's, with the device's
        type and, on CUDA, the GPU's name."""
        device = self.device
        return this_machine(device.type, torch.cuda.get_device_name(device) if device.type == "cuda" else None)

    @property
    def ensemble(self) -> bool:
        """Whether same-shape models train as batched ensembles (``auto``: on CUDA)."""
        setting = self.settings.ensemble
        return setting == "on" or (setting == "auto" and self.device.type == "cuda")
