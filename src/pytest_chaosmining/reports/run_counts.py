"""One count of a run, which every output states alike: the terminal, report.md,
report.html, the GitHub step summary and results.json.

A test counts once, by its outcome; a failure once (a crash is one failure, and the
baseline's results it did not produce are folded into it); *changed* counts tests
that passed; *not judged* counts the tests that ended without a verdict, by why; the
run's own errors (a baseline that matches nothing, a run that judged nothing) are
named beside them.  Imports nothing heavy (the annotate step reads it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

#: the outcomes of a test that judged its results (a strict expected failure judged a bar too)
JUDGED_OUTCOMES = ("passed", "failed", "xfailed", "xpassed")
#: the kinds of failure: a test that failed, a judged test of the baseline this run did not run,
#: an explainer's work on a model that grew (the median of its cases' costs, judged at the run's end)
FAILED, MISSING, COST = "failed", "missing", "cost"


@dataclass(frozen=True)
class RunCounts:
    """How many tests the run judged, how many of them failed (``missing``: judged in
    the baseline, not run) and how many failed as expected (strict expected failures), how many
    changed against the baseline within what harmless changes do (they passed), how many
    ended without a verdict (by why), and the run's own errors."""

    judged: int = 0
    failed: int = 0
    missing: int = 0
    changed: int = 0
    #: judged tests that failed as expected (strict: the random control's, a known library defect's)
    expected: int = 0
    not_judged: dict[str, int] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        outcomes: Mapping[str, int],
        failures: Sequence[Mapping[str, str]],
        changed: int = 0,
        errors: Sequence[str] = (),
    ) -> RunCounts:
        """The counts of a run's ``"suite|explainer|outcome"`` test counts (every test of
        the run, the model-level ones among them) and its failures (one per test; a test
        of the baseline this run did not run is a judged test that failed, and so is an
        explainer's work on a model that grew)."""
        kinds: Counter[str] = Counter()
        for key, n in outcomes.items():
            kinds[key.rsplit("|", 1)[-1]] += n
        missing = sum(1 for f in failures if f.get("kind") == MISSING)
        grown = sum(1 for f in failures if f.get("kind") == COST)
        return cls(
            judged=sum(kinds[k] for k in JUDGED_OUTCOMES) + missing + grown,
            failed=len(failures),
            missing=missing,
            expected=kinds["xfailed"],
            changed=changed,
            not_judged={k: n for k, n in sorted(kinds.items()) if k not in JUDGED_OUTCOMES and n},
            errors=tuple(errors),
        )

    @property
    def red(self) -> bool:
        """Whether the run fails on what it counted."""
        return bool(self.failed or self.errors)

    def headline(self) -> str:
        """The run's verdict in one line, the same wherever it is shown."""
        if self.failed:
            gone = f", {self.missing} of them judged in the baseline and not run" if self.missing else ""
            verdict = f"{self.failed} failed of {self.judged} judged tests{gone}"
        elif self.judged:
            verdict = f"all {self.judged} judged tests passed"
            if self.expected:
                verdict += f" ({self.expected} of them failing as expected)"
        else:
            verdict = "no test was judged"
        parts = [verdict]
        if self.changed:
            parts.append(f"{self.changed} changed against the baseline (passed)")
        if self.not_judged:
            why = ", ".join(f"{n} {kind}" for kind, n in self.not_judged.items())
            parts.append(f"{sum(self.not_judged.values())} not judged ({why})")
        if self.errors:
            parts.append(f"{len(self.errors)} run error{'s' if len(self.errors) > 1 else ''}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, object]:
        """The counts as results.json keeps them (``headline`` beside them)."""
        return {
            "judged": self.judged,
            "failed": self.failed,
            "missing": self.missing,
            "changed": self.changed,
            "expected": self.expected,
            "not_judged": dict(self.not_judged),
            "errors": list(self.errors),
            "headline": self.headline(),
        }

    @classmethod
    def from_dict(cls, found: Mapping[str, object]) -> RunCounts:
        """The counts results.json kept (:meth:`to_dict`)."""
        not_judged = found.get("not_judged")
        errors = found.get("errors")
        return cls(
            judged=_int(found.get("judged")),
            failed=_int(found.get("failed")),
            missing=_int(found.get("missing")),
            changed=_int(found.get("changed")),
            expected=_int(found.get("expected")),
            not_judged={str(k): _int(v) for k, v in not_judged.items()} if isinstance(not_judged, dict) else {},
            errors=tuple(str(e) for e in errors) if isinstance(errors, list) else (),
        )


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) else 0
