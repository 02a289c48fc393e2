"""The torch device a run computes on (``--chaosmining-device``, else CUDA where present;
one GPU per xdist worker), CUDA prepared for the suites' deterministic kernels, and the
GPU's name: torch at the top, loaded when a run first asks for its device."""

from __future__ import annotations

import torch

from pytest_chaosmining.core.training.determinism import prepare_cuda_process


def worker_gpu(worker_id: str | None, gpus: int) -> int:
    """The GPU index of xdist worker ``gw<i>``: ``i mod gpus`` (0 without xdist)."""
    if worker_id is None or gpus <= 1 or not worker_id.startswith("gw"):
        return 0
    return int(worker_id[2:]) % gpus


def placed(requested: str | None, worker: str | None) -> torch.device:
    """The device ``requested`` (None: CUDA where present, else the CPU) for xdist worker
    ``worker`` (plain ``cuda`` on worker ``gw<i>`` of a machine with several GPUs is
    ``cuda:<i mod GPUs>``).  RuntimeError on a malformed name or CUDA requested where
    there is none."""
    name = requested or ("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)  # raises RuntimeError on a malformed name
    if device.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    if device.type != "cuda":
        return device
    prepare_cuda_process()  # deterministic cuBLAS needs its workspace set before its first call
    torch.backends.cudnn.benchmark = True  # the suites' shapes are fixed (training and explainers: fixed kernels)
    if device.index is None:
        return torch.device("cuda", worker_gpu(worker, torch.cuda.device_count()))
    return device


def gpu_name(device: torch.device) -> str | None:
    """The name of ``device``'s GPU (None: not CUDA); it starts CUDA in this process."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else None
