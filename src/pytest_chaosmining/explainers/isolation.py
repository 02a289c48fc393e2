"""Isolation of one explainer call from the model, the inputs and the process.

Every call gets a private copy of the model (eval mode as trained, the same
parameters and buffers, no hooks) and a private copy of the inputs; the
suite's own model and tensors are never handed out.  After the call the copy
and the process-wide torch state are compared with what they were, every
difference is named, and the process state is put back, so the next explainer
starts from the same place whatever ran before it.

Named as changes (the explainer's test fails with them):

- parameters or buffers whose values, shapes or names changed;
- ``requires_grad`` flags of parameters that changed;
- modules whose training flag changed (``model.train()``);
- hooks left on any module, or global module hooks left registered;
- inputs altered in place;
- process-wide torch settings changed and not restored: grad mode, anomaly
  detection, deterministic algorithms, default dtype, cuDNN flags, intra-op
  threads.

Restored without complaint: the global random number generators (torch CPU
and CUDA, NumPy, ``random``).  Drawing random numbers is legitimate for an
explainer (noise tunnels, sampling baselines); restoring the state keeps the
draws of one explainer from shifting those of the next.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import torch
from torch.nn.modules import module as module_mod

T = TypeVar("T")

_MODULE_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOK_DICTS = (
    "_global_forward_hooks",
    "_global_forward_pre_hooks",
    "_global_backward_hooks",
    "_global_backward_pre_hooks",
    "_global_module_registration_hooks",
    "_global_parameter_registration_hooks",
    "_global_buffer_registration_hooks",
)
_MAX_NAMED = 4


class IsolationViolation(Exception):
    """An explainer changed the model, its inputs or process-wide torch state."""

    def __init__(self, changes: list[str]):
        super().__init__("; ".join(changes))
        self.changes = changes


def pristine_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A private copy of ``model`` for one explainer call: same weights and
    ``requires_grad`` flags, eval mode, no hooks."""
    clone = copy.deepcopy(model).eval()
    for module in clone.modules():
        for name in _MODULE_HOOK_DICTS:
            getattr(module, name).clear()
    return clone


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:_MAX_NAMED])
    return shown + (f" and {len(items) - _MAX_NAMED} more" if len(items) > _MAX_NAMED else "")


def model_changes(reference: torch.nn.Module, used: torch.nn.Module) -> list[str]:
    """What differs between the model as trained (``reference``) and the copy an
    explainer used, in words; empty when nothing does."""

    changes: list[str] = []
    ref_state, used_state = reference.state_dict(keep_vars=True), used.state_dict(keep_vars=True)
    missing = sorted(set(ref_state) - set(used_state))
    added = sorted(set(used_state) - set(ref_state))
    if missing:
        changes.append(f"removed parameters/buffers {_names(missing)}")
    if added:
        changes.append(f"added parameters/buffers {_names(added)}")
    altered = [
        k
        for k in ref_state
        if k in used_state
        and (
            ref_state[k].shape != used_state[k].shape
            or ref_state[k].dtype != used_state[k].dtype
            or not torch.equal(ref_state[k].detach(), used_state[k].detach().to(ref_state[k].device))
        )
    ]
    if altered:
        changes.append(f"modified the values of {_names(altered)}")
    ref_params, used_params = dict(reference.named_parameters()), dict(used.named_parameters())
    flags = [k for k in ref_params if k in used_params and ref_params[k].requires_grad != used_params[k].requires_grad]
    if flags:
        changes.append(f"changed requires_grad of {_names(flags)}")
    modes = [name or "<model>" for name, m in used.named_modules() if m.training]
    if modes:
        changes.append(f"switched {_names(modes)} to train mode (the model is given in eval mode)")
    hooks = [
        f"{name or '<model>'} ({kind.strip('_').replace('_', ' ')[:-1]})"
        for name, m in used.named_modules()
        for kind in _MODULE_HOOK_DICTS
        if len(getattr(m, kind))
    ]
    if hooks:
        changes.append(f"left hooks registered on {_names(hooks)}")
    return changes


def _inputs_changed(original: torch.Tensor, given: torch.Tensor) -> bool:

    return given.shape != original.shape or not torch.equal(given.detach(), original)


@dataclass
class _ProcessState:
    """Process-wide torch settings and RNG states, to compare and put back."""

    settings: dict[str, object] = field(default_factory=dict)
    global_hooks: dict[str, set[int]] = field(default_factory=dict)
    torch_rng: torch.Tensor | None = None
    cuda_rng: list[torch.Tensor] | None = None
    numpy_rng: object = None
    python_rng: object = None


def _settings() -> dict[str, tuple[Callable[[], object], Callable[[Any], object]]]:
    """Each process-wide torch setting an explainer might change: (read it, put it back)."""

    cudnn = torch.backends.cudnn
    return {
        "grad mode": (torch.is_grad_enabled, torch.set_grad_enabled),
        "anomaly detection": (torch.is_anomaly_enabled, torch.autograd.set_detect_anomaly),
        "deterministic algorithms": (torch.are_deterministic_algorithms_enabled, torch.use_deterministic_algorithms),
        "default dtype": (torch.get_default_dtype, torch.set_default_dtype),
        "cuDNN enabled": (lambda: cudnn.enabled, lambda v: setattr(cudnn, "enabled", v)),
        "cuDNN benchmark": (lambda: cudnn.benchmark, lambda v: setattr(cudnn, "benchmark", v)),
        "cuDNN deterministic": (lambda: cudnn.deterministic, lambda v: setattr(cudnn, "deterministic", v)),
        "intra-op threads": (torch.get_num_threads, torch.set_num_threads),
    }


def _global_hook_dicts() -> dict[str, dict[int, object]]:

    return {name: getattr(module_mod, name) for name in _GLOBAL_HOOK_DICTS if hasattr(module_mod, name)}


def _capture() -> _ProcessState:

    return _ProcessState(
        settings={name: read() for name, (read, _) in _settings().items()},
        global_hooks={name: set(hooks) for name, hooks in _global_hook_dicts().items()},
        torch_rng=torch.get_rng_state(),
        cuda_rng=torch.cuda.get_rng_state_all() if torch.cuda.is_available() and torch.cuda.is_initialized() else None,
        numpy_rng=np.random.get_state(),
        python_rng=random.getstate(),
    )


def _restore(before: _ProcessState) -> list[str]:
    """Put the process back as ``before``; the settings and global hooks that had
    changed, in words."""

    changes = []
    for name, (read, write) in _settings().items():
        now = read()
        if now != before.settings[name]:
            changes.append(f"changed the process-wide {name} from {before.settings[name]} to {now}")
            write(before.settings[name])
    for name, hooks in _global_hook_dicts().items():
        extra = [key for key in hooks if key not in before.global_hooks.get(name, set())]
        for key in extra:
            del hooks[key]
        if extra:
            changes.append(f"left {len(extra)} global module hook(s) registered ({name.strip('_')})")
    if before.torch_rng is not None:
        torch.set_rng_state(before.torch_rng)
    if before.cuda_rng is not None:
        torch.cuda.set_rng_state_all(before.cuda_rng)
    np.random.set_state(before.numpy_rng)  # type: ignore[arg-type]
    random.setstate(before.python_rng)  # type: ignore[arg-type]
    return changes


@contextmanager
def _process_guard(changes: list[str]) -> Iterator[None]:
    before = _capture()
    try:
        yield
    finally:
        changes.extend(_restore(before))


def isolated_call(
    model: torch.nn.Module, inputs: torch.Tensor, call: Callable[[torch.nn.Module, torch.Tensor], T]
) -> T:
    """Run ``call(model_copy, inputs_copy)`` in isolation and return its result.

    Raises :class:`IsolationViolation` naming every change the call made (to the
    model copy, the inputs copy or the process); the suite's ``model`` and
    ``inputs`` are never touched, and the process state is restored either way.
    An exception from ``call`` itself propagates unchanged (after the restore)."""
    used = pristine_copy(model)
    given = inputs.detach().clone()
    changes: list[str] = []
    with _process_guard(changes):
        result = call(used, given)
    changes = model_changes(model, used) + changes
    if _inputs_changed(inputs.detach(), given):
        changes.append("modified its inputs in place")
    if changes:
        raise IsolationViolation(changes)
    return result
