"""The built-ins' shipped reference results: what a run that did not compute them
(``--chaosmining-explainers own``) shows beside its own rows, marked and never judged."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.reports.leaderboard import build_leaderboard, leaderboard_markdown
from pytest_chaosmining.reports.reference import SHIPPED, reference_payload, shipped_reference
from pytest_chaosmining.suites import all_suites

ROOT = Path(__file__).resolve().parents[1]
SMOKE = read_results(ROOT / "reports" / "smoke" / "results.json", samples=True)


def test_the_shipped_reference_is_the_committed_default_runs():
    """Regenerated from reports/smoke/results.json, it is the file that ships (it cannot go stale)."""
    assert json.loads(SHIPPED.read_text()) == json.loads(json.dumps(reference_payload(SMOKE, all_suites())))


def test_a_run_of_ones_own_explainer_shows_the_built_ins_as_reference():
    meta = SMOKE["meta"]
    mine = [
        Record("symbolic", "mlp", "mine", 0, "fprec", 0.5, {"formula": 1}, threshold=0.4, passed=True),
        Record("symbolic", "mlp", "random", 0, "fprec", 0.1, {"formula": 1}, threshold=0.4, passed=False),
    ]
    outcomes = {"symbolic|mine|passed": 1, "symbolic|random|xfailed": 1}
    board = build_leaderboard(mine, outcomes, all_suites()).with_reference(shipped_reference(meta))
    names = [name for name, _ in board.rows]
    assert names[:2] == ["mine", "random"] and {"SA", "IG", "GradCAM"} <= set(names[2:])
    assert board.columns == [("symbolic", "fprec")]  # the run's columns only
    sa = dict(board.rows)["SA"][0]
    assert sa.verdict == "reference: pass" and round(sa.score, 3) == 0.871
    text = "\n".join(leaderboard_markdown(board))
    assert "| SA (reference 0.1.0, not run) | 0.871 reference: pass |" in text and "| mine | 0.500 pass |" in text
    # another setting (more seeds, another tier): the reference does not describe it, and is not shown
    assert shipped_reference({**meta, "seeds": {**meta["seeds"], "symbolic": 3}}) is None
    assert shipped_reference({**meta, "tier": "ci"}) is None
    # a run of every built-in shows its own rows only
    full = build_leaderboard([Record.from_dict(r) for r in SMOKE["records"]], SMOKE["outcomes"], all_suites())
    assert full.with_reference(shipped_reference(meta)) == full


def test_the_cpu_reference_and_the_shipped_pack_are_this_code_s_own():
    """reports/smoke (the CPU reference the README's leaderboard and the GPU check compare
    against) and the pack's derived results were made by this package's code: a change to
    it regenerates both (a cold default run into an empty cache with
    ``--chaosmining-report reports/smoke``, then ``chaosmining-pack`` of that cache and
    ``python -m pytest_chaosmining.tools.reference reports/smoke/results.json``), or users
    pay a cold run and compare against results this code no longer gives."""
    from pytest_chaosmining.core.storage.derived import SHIPPED_DERIVED, package_digest
    from pytest_chaosmining.core.storage.pack_location import SHIPPED as PACK
    from pytest_chaosmining.core.storage.shipped_check import STACK_FILE

    here = package_digest()
    assert SMOKE["meta"].get("code", {}).get("package") == here, "reports/smoke is older than the code: regenerate it"
    assert SMOKE["meta"].get("machine"), "the reference records the machine its costs were measured on"
    made = json.loads((PACK / SHIPPED_DERIVED / STACK_FILE).read_text())
    assert made["package"] == here, "the pack's results are older than the code: rebuild it (chaosmining-pack)"
    assert {"vision", "audio"} <= {r["suite"] for r in SMOKE["records"] if r.get("samples")}  # per-sample values
