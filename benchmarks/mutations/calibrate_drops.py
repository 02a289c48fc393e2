"""Calibrate the largest score drop a baseline allows, per suite and metric.

    python benchmarks/mutations/calibrate_drops.py [--workers 2] [--write]

A baseline fails a judged result that fell more than its metric's allowed drop
below main's value.  Too small an allowance fails benign changes (more IG
steps, another noise seed, float64), too large one lets real regressions pass.
This tool measures the drops benign changes cause: every change of
``CALIBRATION_CHANGES`` (mutants.py) and its unmodified built-in run once each
through the default run (smoke tier, all suites), and every judged record of a
change is compared with its built-in's record of the same case.

Per suite and metric, with the changes d = built-in − changed (a benign change
has no systematic direction, so its spread is s = √(mean d²)), the allowed drop
is the one-sided normal tolerance bound k·s that covers a proportion
:data:`COVERAGE` of benign changes with confidence :data:`CONFIDENCE`
(k: the project's tolerance factor for the number of changes, CALIBRATION.md),
never below the largest change seen either way (a benign change that raised
a score by one step of a discrete metric may as well have lowered it) and
never below :data:`FLOOR` (the
cross-machine drift of a trained model's scores, README).  The benign mutants
of the mutation benchmark are never used here: they check the result.

``--write`` stores the tables as ``[<suite>.smoke.max_drop]`` in each suite's
``thresholds.toml``; the table and its statistics go to ``drops.md`` / ``drops.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mutants import CALIBRATION_CHANGES  # noqa: E402
from run import CANDIDATE, code_key, run_one  # noqa: E402

from pytest_chaosmining.core.results_file import read_results  # noqa: E402
from pytest_chaosmining.suites import SUITES_DIR  # noqa: E402
from pytest_chaosmining.tools.calibrate import tolerance_factor  # noqa: E402

#: proportion of benign changes a tolerance covers (per judged record), and the confidence of that claim
COVERAGE, CONFIDENCE = 0.999, 0.90
#: the smallest allowed drop: scores of a trained model move up to this much between machines
FLOOR = 0.02
TIER = "smoke"


def judged_values(folder: Path) -> dict[tuple[str, str, str, int, str], float]:
    """The candidate's judged records of one run, by case."""
    payload = read_results(folder / "report" / "results.json", samples=True)
    return {
        (r["suite"], r["metric"], json.dumps(r["condition"], sort_keys=True), r["seed"], r["model"]): r["value"]
        for r in payload["records"]
        if r["explainer"] == CANDIDATE and r["threshold"] is not None
    }


def changes(out: Path) -> dict[tuple[str, str], list[tuple[float, str]]]:
    """(suite, metric) → [(drop, change name)] over every calibration change's judged records."""
    found: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
    for name, change in CALIBRATION_CHANGES.items():
        base, changed = judged_values(out / f"base-{change.base}"), judged_values(out / name)
        for case, value in changed.items():
            if case in base:
                found[case[:2]].append((base[case] - value, name))
    return found


def allowed_drops(found: dict[tuple[str, str], list[tuple[float, str]]]) -> list[dict[str, object]]:
    """One row per (suite, metric): its changes' statistics and the allowed drop."""
    rows = []
    for (suite, metric), drops in sorted(found.items()):
        values = [d for d, _ in drops]
        m = len(values)
        spread = math.sqrt(sum(d * d for d in values) / m)
        k = tolerance_factor(m, COVERAGE, CONFIDENCE) if m >= 3 else float("nan")
        largest, by = max((abs(d), name) for d, name in drops)
        bound = k * spread if m >= 3 else FLOOR
        allowed = max(FLOOR, bound, largest)
        rows.append(
            {
                "suite": suite,
                "metric": metric,
                "changes": m,
                "spread": round(spread, 5),
                "k": round(k, 3),
                "largest_change": round(largest, 4),
                "largest_by": by,
                "bound": round(bound, 4),
                "allowed": math.ceil(allowed * 200) / 200,
            }
        )  # rounded up to 0.005
    return rows


def write_tables(rows: list[dict[str, object]]) -> None:
    """Store each suite's allowed drops as ``[<suite>.smoke.max_drop]`` in its thresholds.toml."""
    by_suite: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_suite[str(row["suite"])].append(row)
    for suite, suite_rows in by_suite.items():
        path = SUITES_DIR / suite / "thresholds.toml"
        if not path.exists():
            continue
        header = f"[{suite}.{TIER}.max_drop]"
        body = [
            f"# calibrated by benchmarks/mutations/calibrate_drops.py on {len(CALIBRATION_CHANGES)} benign "
            "changes (drops.md)",
            header,
        ]
        body += [f"{r['metric']} = {r['allowed']}" for r in suite_rows]
        text = path.read_text()
        pattern = re.compile(
            r"(# calibrated by benchmarks/mutations/calibrate_drops\.py[^\n]*\n)?"
            + re.escape(header)
            + r"\n(?:[^\[\n][^\n]*\n|\n)*?(?=\[|\Z)"
        )
        block = "\n".join(body) + "\n\n"
        if pattern.search(text):
            text = pattern.sub(lambda _, block=block: block, text)
        else:
            text = text.rstrip("\n") + "\n\n" + block
        path.write_text(text.rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "runs")
    parser.add_argument("--write", action="store_true", help="store the tables in the suites' thresholds.toml")
    parser.add_argument(
        "--runs-done",
        action="store_true",
        help="tabulate the runs under --out as they are (made under an earlier code key)",
    )
    args = parser.parse_args(argv)
    key = code_key()
    names = [f"base:{base}" for base in sorted({c.base for c in CALIBRATION_CHANGES.values()})]
    for name in [*names, *CALIBRATION_CHANGES]:
        if args.runs_done:
            key = json.loads((args.out / name.replace(":", "-") / "run.json").read_text())["key"]
            continue
        summary = run_one(name, args.out, None, args.workers, key, False)
        print(f"{name}: {summary['seconds']} s", flush=True)
    rows = allowed_drops(changes(args.out))
    lines = [
        "# Allowed score drops against a baseline (smoke tier)",
        "",
        f"{len(CALIBRATION_CHANGES)} benign changes of built-ins ({', '.join(CALIBRATION_CHANGES)}), each "
        "through the default run beside its unchanged built-in; *changes*: judged records compared; *spread*: "
        f"√(mean drop²); *k*: tolerance factor (coverage {COVERAGE}, confidence {CONFIDENCE}); *allowed*: "
        f"max({FLOOR}, k × spread, largest change either way), rounded up to 0.005.",
        "",
        "| suite | metric | changes | spread | k | largest change (by) | k × spread | allowed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['suite']} | {r['metric']} | {r['changes']} | {r['spread']} | {r['k']} | {r['largest_change']} "
        f"({r['largest_by']}) | {r['bound']} | {r['allowed']} |"
        for r in rows
    ]
    lines += ["", f"Code key `{key}`."]
    (HERE / "drops.md").write_text("\n".join(lines) + "\n")
    (HERE / "drops.json").write_text(json.dumps({"key": key, "rows": rows}, indent=1))
    print("\n".join(lines))
    if args.write:
        write_tables(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
