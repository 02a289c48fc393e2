"""The machine a run measured its costs on: CPU model, cores and device type.

results.json keeps it (``meta.machine``); a baseline from another machine gates
costs with a note that says so, and one from another device type does not gate
them at all (a CPU's time is not a GPU's)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: what describes a machine: ``cpu`` (the model's name), ``cores`` and ``device`` (``cpu``, ``cuda``, …)
Machine = dict[str, str | int]


def cpu_model() -> str:
    """The CPU's model name (Linux: /proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def this_machine(device_type: str) -> Machine:
    """The machine this process runs on, with the run's ``device_type``."""
    return {"cpu": cpu_model(), "cores": os.cpu_count() or 0, "device": device_type}


def describe(machine: Machine) -> str:
    """``AMD EPYC 7B13, 2 cores, cpu`` (for messages)."""
    return f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, {machine.get('device', '?')}"
