#!/usr/bin/env bash
# Bars from the calibration runs in reports/calibration/raw, merged into the shipped thresholds,
# with one report per suite in reports/calibration/.
#
# Round 1 (reports/calibration/round1/): bars from the calibration seeds alone (100-111 or
# 100-107), checked on held-out seeds 200-209.  It found the spread of 8 seeds too narrow for
# IteROAR and BAM (3 failures in 40 tests each) and values near a ceiling (symbolic training
# gain ~0.98) with a longer lower tail than the normal fit allows: 5 failures in 600.
# Round 2 (the shipped bars): calibration seeds 100-... and 200-209 together, the standard
# deviation floored at 0.02, model-randomisation bars just above the random control, checked on
# seeds 300-309 (and, for symbolic, whose gain rule was set after its 300-309 check, on 400-409).
# RFE (discrete bars) keeps round 1.
# The built-ins added later (IxG, GBP, SG, GS, OCC, GradCAM) have their own runs in raw/:
# new-cal-smoke-<suite>.json on seeds 100-111 and new-held-smoke-<suite>.json on seeds 300-305
# (with the control and the cheats), for the symbolic, audio, vision and rfe suites; IteROAR and
# BAM were not calibrated for them (reported, not judged there).
set -euo pipefail
cd "$(dirname "$0")/../.."
raw=reports/calibration/raw
toml() { echo "src/pytest_chaosmining/suites/$1/thresholds.toml"; }
mkdir -p reports/calibration/round1
for suite in symbolic audio vision iteroar bam; do
    python -m pytest_chaosmining.reports.calibration "$raw/cal-smoke-$suite.json" --held-out "$raw/held-smoke-$suite.json" \
        --toml /dev/null --sd-floor 0.01 --report "reports/calibration/round1/smoke-$suite.md"
    held=() new=()
    for f in "$raw"/held[2-9]-smoke-"$suite".json "$raw/new-held-smoke-$suite.json"; do [ -f "$f" ] && held+=("$f"); done
    [ -f "$raw/new-cal-smoke-$suite.json" ] && new+=("$raw/new-cal-smoke-$suite.json")
    python -m pytest_chaosmining.reports.calibration "$raw/cal-smoke-$suite.json" "$raw/held-smoke-$suite.json" "${new[@]}" \
        --held-out "${held[@]}" --merge "$(toml "$suite")" --toml /dev/null --report "reports/calibration/smoke-$suite.md"
done
python -m pytest_chaosmining.reports.calibration "$raw/cal-smoke-rfe.json" "$raw/new-cal-smoke-rfe.json" \
    --held-out "$raw/held-smoke-rfe.json" "$raw/new-held-smoke-rfe.json" \
    --merge "$(toml rfe)" --toml /dev/null --report reports/calibration/smoke-rfe.md
