#!/usr/bin/env bash
# The suites on the oldest stack pyproject.toml declares: a venv with oldest.txt (every
# declared lower bound, or the oldest release with a wheel for this Python), the package
# installed without its dependencies, then the default run from empty caches.
#
#   bash benchmarks/support_range/run.sh [VENV_DIR] [RUN_DIR]
#
# Compare its results with the CPU reference of the same code:
#   chaosmining-compare reports/smoke/results.json RUN_DIR/report/results.json
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-/tmp/chaosmining-oldest}"
out="${2:-/tmp/chaosmining-oldest-run}"
[ -x "$venv/bin/pytest" ] || {
  python3 -m venv "$venv"
  "$venv/bin/pip" install --only-binary :all: -r "$here/oldest.txt"
}
"$venv/bin/pip" install --no-deps -e "$repo" -q
"$venv/bin/python" -c "import torch, torchvision, torchaudio, captum, numpy, sklearn; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'torchaudio', torchaudio.__version__, 'captum', captum.__version__, 'numpy', numpy.__version__, 'scikit-learn', sklearn.__version__)"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
XDG_CACHE_HOME="$out/xdg" /usr/bin/time -f "wall %e s" "$venv/bin/pytest" --chaosmining -n 2 -q -p no:cacheprovider \
  --rootdir "$out" --chaosmining-report "$out/report" 2>&1 | tail -40
