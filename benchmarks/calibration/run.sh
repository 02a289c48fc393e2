#!/usr/bin/env bash
# One calibration or held-out run: run.sh TIER SUITES SEEDS EXPLAINERS OUT.json [pytest args...]
# e.g. run.sh smoke symbolic,audio 100-111 SA,DL,IG,FA,random cal-smoke-A.json -n 16
# Runs from this folder (its conftest registers the cheats), keeps results.json only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tier=$1 suites=$2 seeds=$3 explainers=$4 out=$5
shift 5
report="$(mktemp -d)"
cd "$here"
python3 -m pytest -p no:cacheprovider -q -p no:randomly --chaosmining --chaosmining-tier "$tier" \
    --chaosmining-suites "$suites" --chaosmining-seeds "$seeds" --chaosmining-explainers "$explainers" \
    --chaosmining-report "$report" "$@" > "$report/log.txt" 2>&1 || true
tail -n 3 "$report/log.txt"
cp "$report/results.json" "$out"
