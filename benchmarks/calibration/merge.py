"""Bars from the calibration runs in reports/calibration/raw, merged into the shipped thresholds,
with one report per tier and suite in reports/calibration/ (and the first smoke round's in
round1/), as plan.toml says: ``python benchmarks/calibration/merge.py [tier.suite ...]``."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

from pytest_chaosmining.tools.calibrate import main as calibration
from pytest_chaosmining.tools.calibrate import plan_runs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RAW = ROOT / "reports" / "calibration" / "raw"


def merge(tier: str, suite: str, plan: dict) -> None:
    """Set one suite's bars at ``tier`` from its plan entry and write its reports."""
    cal = plan_runs(RAW, plan["calibration"], suite)
    held = plan_runs(RAW, plan["held_out"], suite)
    toml = str(ROOT / "src" / "pytest_chaosmining" / "suites" / suite / "thresholds.toml")
    if plan.get("round1"):  # the first round's report, from its two runs as they were (every record)
        first, second = (e if isinstance(e, str) else e["run"] for e in plan["calibration"][:2])
        calibration(
            [
                str(RAW / first),
                "--held-out",
                str(RAW / second),
                "--toml",
                "/dev/null",
                "--sd-floor",
                "0.01",
                "--report",
                str(ROOT / "reports" / "calibration" / "round1" / f"{tier}-{suite}.md"),
            ]
        )
    rule = ["--coverage", str(plan["coverage"])] if "coverage" in plan else []
    calibration(
        [
            *cal,
            "--held-out",
            *held,
            *rule,
            "--cross-validate",
            "--merge",
            toml,
            "--toml",
            "/dev/null",
            "--report",
            str(ROOT / "reports" / "calibration" / f"{tier}-{suite}.md"),
        ]
    )


if __name__ == "__main__":
    plans = tomllib.loads((HERE / "plan.toml").read_text())
    for name in sys.argv[1:] or [f"{tier}.{suite}" for tier, suites in plans.items() for suite in suites]:
        tier, suite = name.split(".")
        merge(tier, suite, plans[tier][suite])
