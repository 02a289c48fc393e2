"""The built-ins' known limitations, declared as any registered explainer declares its own
(:class:`~pytest_chaosmining.explainers.limitations.KnownLimitation`): each a check a
built-in fails because of a defect or a missing rule its library has reported, or because
of what the method is (GuidedBackprop's signs), held as a strict expected failure, never as
a loosened bar.

The check keeps the bar the property promises (its calibration cap).  The floors are the
bars the calibration sets on the defective values (``benchmarks/axioms/properties.json``:
``defect_floor``; ``benchmarks/real_bugs/patterns_calibration.json``).  The day the library
fixes a defect the check passes and the test fails (strict): the entry here is then stale
and must go, so the bar judges the built-in as it judges everyone else.  A registered
explainer of the same method inherits nothing: it declares what it is excused from.
"""

from __future__ import annotations

from pytest_chaosmining.explainers.limitations import KnownLimitation

#: the formulas where DeepLift's sums miss f(x) - f(0) on the GELU MLP (every calibration and
#: held-out seed below 0.95 on f02-f15; on f01 the GELU barely bends and its sums hold, 0.968-0.981)
GELU_BENT = tuple(range(2, 16))

#: the floors of DeepLift's defective values on the module-pattern networks
#: (``benchmarks/real_bugs/patterns_calibration.json``)
FLOORS = {"max-pool before ReLU": 0.45, "functional ReLU": 0.15, "Softmax module inside the network": 0.65}

#: the built-ins' known limitations, by explainer: each a defect its library has reported
DEEPLIFT: tuple[KnownLimitation, ...] = (
    KnownLimitation(
        suite="symbolic",
        check="completeness",
        references=("pytorch/captum#1085", "pytorch/captum#1859"),
        what=(
            "captum's DeepLift has no rule for GELU (the symbolic MLP's activation) and passes the plain gradient "
            "through it, so its sums miss f(x) - f(0) (0.01 to 0.92 at smoke); #1859 adds nn.GELU support"
        ),
        floor=-0.7,
        cases={"formula": GELU_BENT},
        promise=0.95,
    ),
    KnownLimitation(
        suite="vision",
        check="completeness",
        references=("pytorch/captum#1104", "pytorch/captum#1085"),
        what=(
            "captum's DeepLift applies no rule to AdaptiveMaxPool2d (every release: it is not among its supported "
            "non-linearities), and from 0.6.0 the second of two hooked modules back to back (ReLU then MaxPool2d, "
            "as in the vision CNN) reads a stale gradient; with both taken out of the network its sums are "
            "f(x) - f(0) to 1e-6.  It shows on the random backgrounds (0.29 to 0.89 over 12 seeds), where the "
            "pooling meets noise everywhere; on the shifted ones the sums hold (0.95 to 0.99 on 10 of 12 seeds)"
        ),
        promise=0.95,
        floor=0.3,
        cases={"condition": ("RBFP", "RBRP")},
    ),
    *(
        KnownLimitation("vision", "pattern_completeness", references, what, floor, pattern, promise=0.95)
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


#: the floors of GuidedBackprop's sign agreement, the bars the calibration sets on its values
#: (``benchmarks/axioms/properties.json``: ``defect_floor``; below 0 on vision: any share of signs)
SIGN_FLOORS = {"vision": -0.7, "audio": 0.35}

#: GuidedBackprop's: the method itself (Springenberg et al.) keeps only positive gradients at every ReLU,
#: so its signs do not follow the class's logit (Nie et al. 2018; Adebayo et al. 2018's sanity checks)
GUIDED_BACKPROP: tuple[KnownLimitation, ...] = tuple(
    KnownLimitation(
        suite=suite,
        check="truth_sign",
        references=("arXiv:1805.07039", "arXiv:1810.03292"),
        what=(
            "GuidedBackprop passes only positive gradients back through every ReLU (the method, not a defect of "
            "its library), so its map's signs do not follow the class's logit (calibration seeds: "
            f"{'0.04 to 0.71' if suite == 'vision' else '0.47 to 0.71'} of signs agree over every condition)"
        ),
        floor=floor,
        promise=0.8,
    )
    for suite, floor in SIGN_FLOORS.items()
)

#: built-in name → its known limitations
BUILTIN_LIMITATIONS: dict[str, tuple[KnownLimitation, ...]] = {"DL": DEEPLIFT, "GBP": GUIDED_BACKPROP}


def builtin_limitation(explainer: str, suite: str, check: str, pattern: str | None = None) -> KnownLimitation | None:
    """The known limitation of built-in ``explainer``'s ``check`` in ``suite`` (on
    ``pattern``'s network, for a check on one), if any, whatever case it holds on."""
    return next(
        (k for k in BUILTIN_LIMITATIONS.get(explainer, ()) if (k.suite, k.check, k.pattern) == (suite, check, pattern)),
        None,
    )
