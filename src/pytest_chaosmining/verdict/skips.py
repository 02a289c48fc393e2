"""Why a conformance test was not judged: the reasons the reports count apart.

A skipped test is never one kind of "skipped": the explainer does not apply to
the model (``not applicable``), the tier has no calibrated bar for what it
measured (``no calibrated bar``), its suite is report-only at the tier
(``report-only``), or the model it explains fell below its quality gate or
premise (``model below gate``).  The skip messages raised by the judge and the
suites begin with the phrases :func:`skip_kind` reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

NOT_APPLICABLE = "not applicable"
NO_BAR = "no calibrated bar"
REPORT_ONLY = "report-only"
MODEL_BELOW_GATE = "model below gate"
#: any other skip (a test a user's conftest skipped, for example)
OTHER_SKIP = "skipped"
#: every kind, in the reports' column order
SKIP_KINDS = (NOT_APPLICABLE, NO_BAR, REPORT_ONLY, MODEL_BELOW_GATE, OTHER_SKIP)

#: how the judge's skip messages begin (judge.py builds them from these)
NOT_APPLICABLE_PREFIX = "not applicable: "
NOT_JUDGED_PREFIX = "not judged: "
REPORT_ONLY_PHRASE = "is report-only at this tier"
#: how a report-only skip of a case outside the calibrated condition names it (judge.report_only_reason)
CONDITION_PHRASE = ": this condition "
#: the phrases of a model's own gate (the suites' skips on a weak model or a failed premise)
GATE_PHRASES = ("quality gate", "accuracy gate", "premise does not hold")


def skip_kind(message: str) -> str:
    """The kind of a skip from its message (pytest's ``Skipped: `` prefix allowed)."""
    text = message.removeprefix("Skipped: ")
    if text.startswith(NOT_APPLICABLE_PREFIX):
        return NOT_APPLICABLE
    if text.startswith(NOT_JUDGED_PREFIX):
        return REPORT_ONLY if REPORT_ONLY_PHRASE in text else NO_BAR
    if any(phrase in text for phrase in GATE_PHRASES):
        return MODEL_BELOW_GATE
    return OTHER_SKIP


def skip_message(report: pytest.TestReport) -> str:
    """The reason a skipped test report gives, without pytest's ``Skipped: `` prefix."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "")


def uncalibrated_condition(message: str) -> str | None:
    """What of a case the bars were not calibrated for (a sweep's condition, a training
    mode), from the skip message of a report-only case; None for any other skip."""
    text = message.removeprefix("Skipped: ")
    if not text.startswith(NOT_JUDGED_PREFIX) or CONDITION_PHRASE not in text:
        return None
    _, _, rest = text.removeprefix(NOT_JUDGED_PREFIX).partition(": ")
    return rest.split(CONDITION_PHRASE)[0]
