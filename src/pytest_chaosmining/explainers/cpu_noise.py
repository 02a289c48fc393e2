"""SmoothGrad whose noise is drawn on the CPU and then moved to the inputs' device: the
seeded CPU generator gives the same noise on every device, so a CUDA run's SmoothGrad
maps agree with a CPU run's (captum draws on the inputs' device: another generator,
other noise, and drift against a CPU baseline).  On the CPU the draws are captum's own,
number for number.  Imported on use: it loads captum."""

from __future__ import annotations

import torch
from captum.attr import NoiseTunnel


class CpuNoiseTunnel(NoiseTunnel):
    """captum's :class:`~captum.attr.NoiseTunnel` with its Gaussian noise drawn on the CPU."""

    @staticmethod
    def _add_noise_to_input(input: torch.Tensor, stdev: float, nt_samples_partition: int) -> torch.Tensor:
        expanded = (input.shape[0] * nt_samples_partition, *input.shape[1:])
        noise = torch.normal(0, torch.tensor(stdev).repeat(expanded))  # the CPU generator, as a CPU run draws
        return input.repeat_interleave(nt_samples_partition, dim=0) + noise.to(input.device)
