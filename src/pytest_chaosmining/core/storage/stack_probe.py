"""A stack's numerics in a few numbers: what tells whether results computed on one
torch, numpy and device hold on another.

The probe (:func:`~.probe_values.probe`, torch and numpy at its module's top) draws
from numpy's and torch's seeded generators (the suites' data and the samplers' noise
come from them) and runs a fixed network's forward and input gradient through the
layers the suites' models use (linear, 1-D and 2-D convolution, pooling, a GRU, ReLU,
tanh, softmax) and through module hooks (the rules of DeepLift and Guided Backprop) on
a device.  The shipped results keep the probe of the stack that computed them (at pack
time); a run on another stack compares its own (:func:`differences`): the draws equal
(to the last bits), the network's values and one AdamW step of its GRU within
:data:`TOLERANCE` (relative to the largest magnitude; CPUs differ at about 1e-8, a GPU
without TF32 at about 1e-6).  This module holds the versions, the tolerances and the
comparison: nothing heavy.
"""

from __future__ import annotations

import functools
from importlib import metadata

#: largest difference of the network's values, relative to their largest magnitude
TOLERANCE = 1e-4
#: the probe's entries that are draws of a generator (compared to 1e-12 of their largest value:
#: integer draws exactly, a float draw within the last bits another libm may round differently)
DRAWS = (
    "numpy_normal", "numpy_uniform", "numpy_integers", "numpy_permutation",
    "torch_randn", "torch_rand", "torch_randint", "torch_randperm", "torch_bernoulli",
)  # fmt: skip
DRAW_TOLERANCE = 1e-12


@functools.cache
def stack_versions() -> dict[str, str]:
    """The versions of the numerical libraries a result was computed with (torch, numpy)."""
    found = {}
    for package in ("torch", "numpy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "absent"
    return found


def differences(then: dict[str, list[float]], now: dict[str, list[float]]) -> list[str]:
    """What differs between two probes (empty: the stacks compute alike)."""
    if not then:
        return ["no probe to compare"]
    found = []
    for name, expected in then.items():
        got = now.get(name)
        if got is None or len(got) != len(expected):
            found.append(f"{name}: missing or of another length")
            continue
        largest = max((abs(v) for v in expected), default=0.0) or 1.0
        worst = max((abs(a - b) for a, b in zip(expected, got, strict=True)), default=0.0)
        allowed = (DRAW_TOLERANCE if name in DRAWS else TOLERANCE) * largest
        if worst > allowed:
            found.append(f"{name} differs by {worst:.3g} (allowed {allowed:.3g})")
    return found
