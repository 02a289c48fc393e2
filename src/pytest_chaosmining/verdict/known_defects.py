"""Known defects of the built-ins' libraries: a check a built-in fails because of a defect
its library has reported, held as a strict expected failure, never as a loosened bar.

The check keeps the bar the property promises (its calibration cap).  While the built-in
fails it, down to the floor its defective values were calibrated to, the failure is
expected and noted on the test and its record, citing the library's issue; below the
floor it fails as any check does (a further drop needs no baseline to fail).  The day the library fixes the
defect the check passes, and that fails the test (strict): the entry here is then stale
and must go, so the bar judges the built-in as it judges everyone else.  A registered
explainer never inherits an entry: the shared bars were set without the defective
values (``benchmarks/axioms/calibrate_properties.py`` leaves them out).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KnownDefect:
    """A built-in's check that its library's reported defect makes it fail."""

    explainer: str
    suite: str
    metric: str
    #: the library's issues (``owner/repo#N``), the first the main one
    references: tuple[str, ...]
    #: what breaks, in one line, as measured here
    what: str
    #: what the property promises (the bar it is judged at; at or above it the defect no longer shows)
    promise: float
    #: the lowest value the defect itself explains: the bar calibrated on the defective values
    #: (``benchmarks/axioms/properties.json``: ``defect_floor``); below it the check fails as any does
    floor: float
    #: the module-pattern network the check runs on (a record's ``pattern`` field), where it is one
    pattern: str | None = None

    @property
    def where(self) -> str:
        """The suite, and the pattern's network where there is one."""
        return self.suite + (f" (the '{self.pattern}' network)" if self.pattern else "")

    def expected(self, value: float, bar: float) -> str:
        """The note on a test whose check failed as the defect makes it fail."""
        return (
            f"known defect ({', '.join(self.references)}): {self.explainer}'s {self.metric} on {self.where} "
            f"{value:.4f} < {bar:.4f}, as expected: {self.what}"
        )

    def below_floor(self, value: float) -> str:
        """The failure of a check that fell below what the defect explains."""
        return (
            f"{self.metric} {value:.4f} < {self.floor:.4f}, below what the known defect {self.references[0]} "
            f"explains (its calibrated values reach down to {self.floor:.4f}): a failure of its own"
        )

    def stale(self, value: float, bar: float) -> str:
        """The failure of a test whose check passed although the defect is declared."""
        return (
            f"{self.explainer}'s {self.metric} on {self.where} is {value:.4f} >= {bar:.4f}: the known defect "
            f"{', '.join(self.references)} no longer shows ({self.what}); if the library fixed it, remove the "
            "entry from pytest_chaosmining.verdict.known_defects so the bar judges it"
        )


#: the floors of DeepLift's defective values on the module-pattern networks
#: (``benchmarks/real_bugs/patterns_calibration.json``)
FLOORS = {"max-pool before ReLU": 0.45, "functional ReLU": 0.15, "Softmax module inside the network": 0.65}

KNOWN_DEFECTS: tuple[KnownDefect, ...] = (
    KnownDefect(
        explainer="DL",
        suite="vision",
        metric="completeness",
        references=("pytorch/captum#1104", "pytorch/captum#1085"),
        what=(
            "captum's DeepLift applies no rule to AdaptiveMaxPool2d (every release: it is not among its supported "
            "non-linearities), and from 0.6.0 the second of two hooked modules back to back (ReLU then MaxPool2d, "
            "as in the vision CNN) reads a stale gradient; with both taken out of the network its sums are "
            "f(x) - f(0) to 1e-6"
        ),
        promise=0.95,
        floor=0.3,
    ),
    *(
        KnownDefect(
            "DL", "vision", "pattern_completeness", references, what, promise=0.95, floor=floor, pattern=pattern
        )
        for pattern, references, what, floor in (
            (
                "max-pool before ReLU",
                ("pytorch/captum#1104",),
                "from captum 0.6.0 the ReLU right after a hooked MaxPool2d reads a stale gradient (0.5.0: sums "
                "exact on the same network)",
                FLOORS["max-pool before ReLU"],
            ),
            (
                "functional ReLU",
                ("pytorch/captum#1082",),
                "DeepLift hooks activation modules only: torch.relu called as a function gets the plain gradient, "
                "not the rescale rule (every release)",
                FLOORS["functional ReLU"],
            ),
            (
                "Softmax module inside the network",
                ("pytorch/captum#1367",),
                "DeepLift's Softmax rule subtracts the mean gradient over the whole tensor, batch included "
                "(every release)",
                FLOORS["Softmax module inside the network"],
            ),
            (
                "one ReLU module called twice",
                ("pytorch/captum#578", "pytorch/captum#934"),
                "DeepLift raises RuntimeError on a module called twice (every release): its hooks keep one "
                "input per module",
                -1.0,
            ),
            (
                "residual block calling one ReLU twice",
                ("pytorch/captum#578", "pytorch/captum#934"),
                "DeepLift raises RuntimeError on a module called twice (every release), as torchvision's "
                "BasicBlock calls its ReLU",
                -1.0,
            ),
        )
    ),
)


def known_defect(explainer: str, suite: str, metric: str, pattern: str | None = None) -> KnownDefect | None:
    """The known defect of built-in ``explainer``'s ``metric`` in ``suite`` (on ``pattern``'s
    network, for a check on one), if any."""
    for defect in KNOWN_DEFECTS:
        if (defect.explainer, defect.suite, defect.metric, defect.pattern) == (explainer, suite, metric, pattern):
            return defect
    return None
