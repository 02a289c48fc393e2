"""Reading a results.json this plugin wrote, or saying in one line why a file is not one
(not JSON, another tool's JSON, another results format): the plugin's baseline, the recipe's
scripts, ``chaosmining-compare``, the pull request's summary and the annotate step read
through it.  Imports nothing heavy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import RESULTS_FORMAT


class NotAResultsFile(ValueError):
    """A file given as a chaosmining results.json is not one; the message names it and what is wrong."""


def read_results(path: Path) -> dict[str, Any]:
    """The payload of the results.json at ``path``: an object with a ``records`` list and a
    ``meta`` object, of this plugin's format or an older one (:class:`NotAResultsFile` else)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NotAResultsFile(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise NotAResultsFile(f"{path}: not JSON ({exc}): not a chaosmining results.json") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("records"), list):
        kind = type(payload).__name__ if not isinstance(payload, dict) else f"keys {', '.join(sorted(payload)[:5])}"
        raise NotAResultsFile(
            f"{path}: JSON, but not a chaosmining results.json (no 'records' list; {kind}): another tool's file?"
        )
    if not isinstance(payload.get("meta", {}), dict):
        raise NotAResultsFile(f"{path}: a results.json whose 'meta' is not an object")
    made = payload.get("format", RESULTS_FORMAT)
    if not isinstance(made, int) or made > RESULTS_FORMAT:
        raise NotAResultsFile(
            f"{path}: results format {made!r}, newer than this plugin's {RESULTS_FORMAT}: upgrade pytest-chaosmining"
        )
    bad = next((i for i, r in enumerate(payload["records"]) if not isinstance(r, dict) or "suite" not in r), None)
    if bad is not None:
        raise NotAResultsFile(f"{path}: record {bad} is not a chaosmining result (no 'suite'): another tool's file?")
    return payload
