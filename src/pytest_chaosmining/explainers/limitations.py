"""Known limitations of an explainer, declared by whoever registers it (the built-ins
declare theirs the same way): ``Explainer(..., known=(KnownLimitation(...), ...))``.

A **limitation** (the default) is a check the explainer fails because of a reported
defect or a missing rule of its library: the check keeps its bar; while the explainer
fails it, down to the declaration's floor, the failure is a strict expected failure,
noted on the test and its record, citing the reference; below the floor, or not a
number, it fails as any check does; the day the limitation no longer shows (the check
reaches its bar and the declaration's promise) the test fails, saying the declaration is
stale; between a bar below the promise and the promise it passes as any check does.

A **weaker** declaration (``weaker=True``) is for a method that is correct but weaker
than a shared bar (LIME's sampled surrogate, a CAM on a small canvas): the check is
judged against the declaration's floor where that is below the shared bar (never
stricter; and against its own baseline, as every check is); its value is recorded and
the shared bar shown beside it.  A level the random control reaches on the same case
rejects nothing: the run fails saying so (:mod:`pytest_chaosmining.verdict.weaker_levels`).

Every declaration names the suite, the check (a metric the suite judges), the
references (an issue or pull request of the library, ``owner/repo#N``; for what the
method itself does, the paper: ``arXiv:NNNN.NNNNN``), what it is, and
optionally the floor, the promise, the module-pattern network (the record's ``pattern``)
and the cases it holds on (record case fields: ``{"formula": (2, 3)}``, ``{"condition":
("SBFP",)}``; empty: every case of the suite).  The run's summary lists each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

#: how the note on a test judged at a declared weaker level begins
WEAKER_PREFIX = "declared weaker"


@dataclass(frozen=True)
class KnownLimitation:
    """One known limitation (or, with ``weaker``, a declared weaker level) of an explainer's check."""

    suite: str
    check: str
    #: the library's issues or pull requests (``owner/repo#N``) or papers (``arXiv:…``), the first the main one
    references: tuple[str, ...]
    #: what breaks, in one line, as measured
    what: str
    #: the lowest value it explains (a limitation) or the level it is judged at (weaker)
    floor: float = -math.inf
    #: the module-pattern network the check runs on (a record's ``pattern`` field), where it is one
    pattern: str | None = None
    #: the case fields it holds on (each a record's case field and its values); empty: every case
    cases: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    #: what the check promises (the built-ins' own bar): stale only once the value reaches it and the bar
    #: (None: the run's bar); a value between a lower bar and the promise passes as any check does
    promise: float | None = None
    #: correct but weaker than the shared bar: judged against ``floor`` where it is lower, never stale
    weaker: bool = False

    def __post_init__(self) -> None:
        for name, values in self.cases.items():
            if not isinstance(values, tuple | list | range | frozenset | set):
                raise ValueError(f"known limitation of {self.check!r}: cases[{name!r}] must list its values")
        object.__setattr__(self, "cases", {name: tuple(values) for name, values in self.cases.items()})
        if not self.references or not all(isinstance(r, str) and r for r in self.references):
            raise ValueError(f"known limitation of {self.check!r} in {self.suite!r}: name its references")
        if self.weaker and self.floor == -math.inf:
            raise ValueError(f"weaker {self.check!r} in {self.suite!r}: declare the floor it is judged at")

    def holds_on(self, suite: str, check: str, case: Mapping[str, object]) -> bool:
        """Whether it covers the check ``check`` of a ``suite`` record of ``case``."""
        if (suite, check) != (self.suite, self.check) or case.get("pattern") != self.pattern:
            return False
        return all(case.get(name) in values for name, values in self.cases.items())

    @property
    def where(self) -> str:
        """The suite, the pattern's network where there is one, and the cases it holds on."""
        cases = "".join(f", {name} {', '.join(map(str, values))}" for name, values in self.cases.items())
        return self.suite + (f" (the '{self.pattern}' network)" if self.pattern else "") + cases

    def _note(self, head: str, explainer: str, measured: str) -> str:
        """A note on a test: ``head`` (what was held), the references, the check and what it is."""
        return (
            f"{head} ({', '.join(self.references)}): {explainer}'s {self.check} on {self.where} {measured}: {self.what}"
        )

    def expected(self, explainer: str, value: float, bar: float) -> str:
        """The note on a test whose check failed as the limitation makes it fail."""
        return self._note("known limitation", explainer, f"{value:.4f} < {bar:.4f}, as expected")

    def weaker_note(self, explainer: str, value: float, bar: float) -> str:
        """The note on a test whose check was judged at the declared weaker level."""
        return self._note(
            WEAKER_PREFIX, explainer, f"{value:.4f} against its floor {self.floor:.4f} (the shared bar {bar:.4f})"
        )

    def below_floor(self, value: float) -> str:
        """The failure of a check that fell below what the limitation explains."""
        return (
            f"{self.check} {value:.4f} < {self.floor:.4f}, below what the known limitation {self.references[0]} "
            f"explains (the lowest value it was declared to explain: {self.floor:.4f}): a failure of its own"
        )

    def stale(self, explainer: str, value: float, bar: float) -> str:
        """The failure of a test whose check passed although the limitation is declared."""
        return (
            f"{explainer}'s {self.check} on {self.where} is {value:.4f} >= {bar:.4f}: the known limitation "
            f"{', '.join(self.references)} no longer shows ({self.what}); the declaration is stale: if the "
            "library fixed it, remove it from the explainer's known= so the bar judges it"
        )


def declared(known: tuple[KnownLimitation, ...]) -> str:
    """An explainer's declarations in brief, for the run's summary: each suite's check, how
    many networks or case sets it covers, whether it is a limitation or a weaker level, and
    the references."""
    groups: dict[tuple[str, str, bool], list[KnownLimitation]] = {}
    for k in known:
        groups.setdefault((k.suite, k.check, k.weaker), []).append(k)
    parts = []
    for (suite, check, weaker), members in groups.items():
        kind = "weaker, judged at its floor" if weaker else "known limitation"
        kinds = "networks" if all(m.pattern for m in members) else "case sets"
        count = f" on {len(members)} {kinds}" if len(members) > 1 else ""
        cited = sorted({m.references[0] for m in members})
        parts.append(f"{suite} {check}{count} ({kind}: {', '.join(cited)})")
    return "; ".join(parts)


def known_limitation(
    declared: tuple[KnownLimitation, ...], suite: str, check: str, case: Mapping[str, object]
) -> KnownLimitation | None:
    """The first of ``declared`` that covers ``check`` of a ``suite`` record of ``case``, if any."""
    return next((known for known in declared if known.holds_on(suite, check, case)), None)
