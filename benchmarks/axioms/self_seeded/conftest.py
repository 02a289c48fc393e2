"""Registers the explainers ``CHAOSMINING_SELF_SEEDED`` lists (run.py): ``gs-seed-101``, a
built-in sampler that seeds itself in every call, and ``gs-roll-101`` / ``gs-carry-101``, the
same with a batch bug (maps rolled by one sample; half the previous sample's map added)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2] / "mutations"))


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    import dataclasses

    import benign
    from mutants import _carried_state, _reseeded, after, builtin

    bugs = {"seed": None, "roll": lambda a, x, c: a.roll(1, dims=0), "carry": _carried_state}
    out = {}
    for name in os.environ["CHAOSMINING_SELF_SEEDED"].split(","):
        base, kind, seed = name.split("-")
        bug = bugs[kind]
        method = builtin(base.upper()) if bug is None else after(builtin(base.upper()), bug)
        out[name] = dataclasses.replace(benign.explainer(f"base-{base.upper()}"), name=name,
                                        method=_reseeded(method, int(seed)))  # fmt: skip
    return out
