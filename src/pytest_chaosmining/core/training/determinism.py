"""Bit-reproducible CUDA work: deterministic kernels, a fixed cuBLAS workspace, cuDNN
without autotuning and true fp32 (no TF32), set around training and explainer calls on
a CUDA device and restored after.  On a CPU it changes nothing (CPU kernels are
deterministic already); ``--chaosmining-precision bf16`` asks for speed over bits and
keeps TF32."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from pytest_chaosmining.core.training.modes import STANDARD_PRECISION

#: cuBLAS's deterministic workspace; it must be set before the process's first cuBLAS call
CUBLAS_WORKSPACE = ":4096:8"


@dataclass(frozen=True)
class KernelSettings:
    """The process-wide torch settings that decide whether CUDA work is bit-reproducible."""

    deterministic: bool
    warn_only: bool
    cudnn_deterministic: bool
    cudnn_benchmark: bool
    matmul_tf32: bool
    cudnn_tf32: bool

    @classmethod
    def now(cls) -> KernelSettings:
        """The settings in force."""
        return cls(
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.backends.cudnn.deterministic,
            torch.backends.cudnn.benchmark,
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )

    def apply(self) -> None:
        """Make these the settings in force."""
        torch.use_deterministic_algorithms(self.deterministic, warn_only=self.warn_only)
        torch.backends.cudnn.deterministic = self.cudnn_deterministic
        torch.backends.cudnn.benchmark = self.cudnn_benchmark
        torch.backends.cuda.matmul.allow_tf32 = self.matmul_tf32
        torch.backends.cudnn.allow_tf32 = self.cudnn_tf32


#: reproducible CUDA work: deterministic kernels where an op has one (warn_only: a user's op
#: without one still runs), cuDNN deterministic and not autotuned, TF32 off (true fp32)
REPRODUCIBLE = KernelSettings(True, True, True, False, False, False)


def prepare_cuda_process() -> None:
    """Set the cuBLAS workspace that deterministic cuBLAS needs (before its first call;
    a value already set is kept)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_WORKSPACE)


@contextlib.contextmanager
def reproducible(device: torch.device, precision: str = STANDARD_PRECISION) -> Iterator[None]:
    """Within: :data:`REPRODUCIBLE` on a CUDA ``device`` in fp32 (restored after, even on
    an error); elsewhere, or in bf16, nothing changes."""
    if device.type != "cuda" or precision != STANDARD_PRECISION:
        yield
        return
    before = KernelSettings.now()
    REPRODUCIBLE.apply()
    try:
        yield
    finally:
        before.apply()
