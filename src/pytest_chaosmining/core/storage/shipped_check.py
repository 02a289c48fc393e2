"""Whether the shipped derived results, computed on the stack the pack was built with,
hold on this one (another torch or numpy release, another device).

A shipped result is keyed by what decides it (the case, the weights, the explainer
and its settings, the package's and captum's source), not by version strings, and
carries the stack it was computed on.

1. the **stack probe** (:mod:`~pytest_chaosmining.core.storage.stack_probe`) of this
   stack and device is compared with the pack's, once a process, whatever the version
   strings say (a patched or differently built torch of the same version is another
   stack): where the generators draw otherwise or a network's values (forward, input
   gradients, gradients through backward hooks, a training step) differ beyond its
   tolerance, no shipped result is used (each is recomputed; one warning says what differed);
2. where the probe agrees and the versions are the pack's, a shipped result is used as it is;
3. on other versions, the **first result of each suite × explainer group** a process
   asks for, and one in :data:`SAMPLE_EVERY` by key besides, is recomputed and
   compared with the shipped one, every value but the cost within
   :data:`RESULT_TOLERANCE`, before any other of its group is used: every group is
   checked in every run;
4. a checked result that differs beyond it is replaced by the recomputed one, a
   warning names it, and the suite's shipped results are recomputed from then on: a
   marker in the user's cache (``refused-<stacks>``) tells every worker and every
   later run on this stack.  Shipped results of another stack are not copied into the
   user's cache, so none outlives a refusal.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import warnings
from pathlib import Path

from pytest_chaosmining import ChaosminingWarning
from pytest_chaosmining.core.storage.stack_probe import differences, stack_versions

#: one shipped result in this many (by key) is recomputed on another stack
SAMPLE_EVERY = 16
#: largest difference of a recomputed result's value from the shipped one (relative above 1)
RESULT_TOLERANCE = 1e-4
#: the pack file holding the stack and the probe the shipped results were computed with
STACK_FILE = "stack.json"
#: an encoded dataclass left out of the comparison: the cost a result replays is its machine's
COST_TYPE = "Cost"
#: fields left out of the comparison: timings outside a Cost (a training's seconds)
TIMING_FIELDS = frozenset({"seconds", "train_seconds", "time_ms", "cpu_ms", "peak_mem_mb"})


class ShippedCheck:
    """The policy above for one process on ``device_type``; ``pack_derived``: the
    pack's folder of derived results (holding :data:`STACK_FILE`)."""

    def __init__(self, device_type: str, pack_derived: Path | None):
        self.device_type = device_type
        self.pack_derived = pack_derived
        self._probe: list[str] | None = None
        self._checked: set[tuple[str, str | None]] = set()  # the groups whose first result was checked

    def stack(self) -> dict[str, str]:
        """This process's stack: the numerical libraries' versions and the device type."""
        return {**stack_versions(), "device": self.device_type}

    def same_stack(self, stack: object) -> bool:
        """Whether a shipped result's ``stack`` is this one: the same versions, and the
        stack probe agrees with the pack's (run once a process)."""
        return stack == self.stack() and not self.probe_differences()

    def usable(self, root: Path, suite: str) -> bool:
        """Whether shipped results of ``suite`` made on another stack may be used here
        (``root``: the user's derived cache, where a refusal is kept)."""
        return not self._marker(root, suite).exists() and not self.probe_differences()

    def _marker(self, root: Path, suite: str) -> Path:
        """Where a refusal of ``suite``'s shipped results on this stack is kept."""
        stacks = json.dumps([self._pack_stack, self.stack()], sort_keys=True)
        return root / suite / f"refused-{hashlib.sha256(stacks.encode()).hexdigest()[:16]}"

    def probe_differences(self) -> list[str]:
        """What the stack probe finds different from the pack's (computed once; empty: alike)."""
        if self._probe is None:
            self._probe = self._compare_probe()
            if self._probe:
                warnings.warn(
                    f"chaosmining: this stack ({_describe(self.stack())}) computes otherwise than the one the "
                    f"shipped results were made on ({self._pack_stack}): {'; '.join(self._probe[:3])}; the "
                    "shipped results and entries are computed here instead (slower, the same verdicts)",
                    stacklevel=3,
                    category=ChaosminingWarning,
                )
        return self._probe

    @functools.cached_property
    def _pack_stack(self) -> str:
        try:
            return _describe(self._stack_file()["stack"])
        except (OSError, ValueError, KeyError, TypeError):
            return "not recorded"

    def _stack_file(self) -> dict[str, dict]:
        if self.pack_derived is None:
            raise OSError("no pack")
        return json.loads((self.pack_derived / STACK_FILE).read_text())

    def _compare_probe(self) -> list[str]:
        try:
            then = self._stack_file()["probe"]
            if not isinstance(then, dict) or not then:
                return ["the pack records no probe"]
            from pytest_chaosmining.core.storage.probe_values import probe_as_explainers_run  # torch

            return differences(then, probe_as_explainers_run(self.device_type))
        except Exception as exc:  # noqa: BLE001 - a probe that cannot run is a stack that cannot be trusted
            return [f"the probe could not be compared ({type(exc).__name__}: {exc})"]

    @staticmethod
    def sampled(key: str) -> bool:
        """Whether the shipped result under ``key`` is in the stated sample."""
        return int(key[:8], 16) % SAMPLE_EVERY == 0

    def to_check(self, suite: str, group: str | None, key: str) -> bool:
        """Whether the shipped result under ``key`` (of ``suite``'s ``group``: its
        explainer, None for the plugin's own) is recomputed and compared: the first of
        its group this process asks for, and the stated sample."""
        first = (suite, group) not in self._checked
        self._checked.add((suite, group))
        return first or self.sampled(key)

    def refuse(self, root: Path, suite: str, what: str, found: list[str], made_on: object) -> None:
        """Keep that a sampled shipped result of ``suite`` differed here, with a warning."""
        marker = self._marker(root, suite)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"result": what, "differences": found[:10]}))
        warnings.warn(
            f"chaosmining: the shipped {suite} result {what} differs on this stack ({_describe(self.stack())}) "
            f"from the one computed on {_describe(made_on)}: {'; '.join(found[:3])}; the suite's shipped results "
            "are computed here from now on (each group's first result is checked before any other of it is used)",
            stacklevel=3,
            category=ChaosminingWarning,
        )


def result_differences(then: object, now: object, path: str = "result") -> list[str]:
    """Where two encoded results differ beyond :data:`RESULT_TOLERANCE` (their costs and
    timings left out; NaN equals NaN)."""
    if isinstance(then, dict) and isinstance(now, dict):
        if then.get("__dataclass__") == COST_TYPE and now.get("__dataclass__") == COST_TYPE:
            return []
        if set(then) != set(now):
            return [f"{path}: other fields"]
        keys = [k for k in then if k not in TIMING_FIELDS]
        return [d for k in keys for d in result_differences(then[k], now[k], f"{path}.{k}")]
    if isinstance(then, list) and isinstance(now, list):
        if len(then) != len(now):
            return [f"{path}: {len(then)} values against {len(now)}"]
        if len(then) == 2 and isinstance(then[0], str) and then[0] == now[0]:  # an encoded dict's item
            return [] if then[0] in TIMING_FIELDS else result_differences(then[1], now[1], f"{path}[{then[0]}]")
        pairs = enumerate(zip(then, now, strict=True))
        return [d for i, (a, b) in pairs for d in result_differences(a, b, f"{path}.{i}")]
    numbers = (int, float)
    if isinstance(then, numbers) and isinstance(now, numbers) and not isinstance(then, bool):
        if then == now or (math.isnan(then) and math.isnan(now)):
            return []
        if abs(then - now) <= RESULT_TOLERANCE * max(1.0, abs(then)):
            return []
        return [f"{path}: {then:.6g} then, {now:.6g} here"]
    return [] if then == now else [f"{path}: {then!r} then, {now!r} here"]


def _describe(stack: object) -> str:
    if not isinstance(stack, dict):
        return "an unrecorded stack"
    return ", ".join(f"{k} {v}" for k, v in sorted(stack.items()))
