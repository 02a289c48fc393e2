"""The machine a run measured its costs on: CPU model, cores, device type, the GPU's
model on CUDA and the numerical stack (torch, numpy).

results.json keeps it (``meta.machine``); a baseline made on another machine or stack
gates no cost (a CPU's time is not another CPU's, nor a GPU's, nor another torch's),
and the run says so."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pytest_chaosmining.core.storage.stack_probe import stack_versions

#: what describes a machine: ``cpu`` (the model's name), ``cores``, ``device`` (``cpu``, ``cuda``, …),
#: ``gpu`` (the CUDA device's name, on CUDA) and ``stack`` (``torch 2.14.1, numpy 2.4.6``)
Machine = dict[str, str | int]
#: what must match for a baseline's costs to gate a run (recorded on both sides)
COST_DECIDING = ("cpu", "device", "gpu", "stack")


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def this_machine(device_type: str, gpu: str | None = None) -> Machine:
    """The machine this process runs on, with the run's ``device_type`` and, on CUDA,
    its ``gpu``'s name."""
    versions = stack_versions()
    machine: Machine = {"cpu": cpu_model(), "cores": os.cpu_count() or 0, "device": device_type}
    if device_type == "cuda" and gpu is not None:
        machine["gpu"] = gpu
    machine["stack"] = stack_label(versions)
    return machine


def stack_label(versions: dict[str, str]) -> str:
    """``torch 2.14.1, numpy 2.4.6``: the stack a machine's costs were measured on."""
    return f"torch {versions['torch']}, numpy {versions['numpy']}"


def describe(machine: Machine) -> str:
    """``AMD EPYC 7B13, 2 cores, cpu, torch 2.14.1, numpy 2.4.6`` (for messages)."""
    parts = [str(machine.get("cpu", "?")), f"{machine.get('cores', '?')} cores", str(machine.get("device", "?"))]
    parts += [str(machine[k]) for k in ("gpu", "stack") if k in machine]
    return ", ".join(parts)


def cost_differences(then: Machine, now: Machine) -> list[str]:
    """What of :data:`COST_DECIDING` differs between two machines (where both record it;
    two CUDA machines of which one does not record its GPU count as different GPUs)."""
    found = [k for k in COST_DECIDING if k in then and k in now and then[k] != now[k]]
    cuda = then.get("device") == now.get("device") == "cuda"
    return found + (["gpu"] if cuda and ("gpu" in then) != ("gpu" in now) else [])
