#!/usr/bin/env bash
# Resumable calibration of the random-position conditions (vision and audio, smoke): 2 seeds a chunk,
# a chunk whose results.json exists is skipped.  Run from a checkout: bash rp_chunks.sh RAW_DIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
raw=$1
builtins=SA,DL,IG,FA,IxG,GBP,SG,GS,OCC,GradCAM,random
cheats=centre,constant,edges,first,fixed_gradient,input_magnitude
chunk() {  # kind first last explainers
    local out="$raw/rp-$1-smoke-vision-audio-$2-$3.json"
    { [ -f "$out" ] || [ -f "$out.gz" ]; } && return  # done (committed compressed: .json.gz)
    "$here/run.sh" smoke vision,audio "$2-$3" "$4" "$out.part" -n 2 -k "RBRP or SBRP" && mv "$out.part" "$out"
    [ -f "$out" ] || echo "chunk $2-$3 wrote nothing" >&2
}
for s in 100 102 104 106 108; do chunk cal $s $((s + 1)) $builtins; done
for s in 800 802 804 806 808; do chunk held $s $((s + 1)) $builtins,$cheats; done
