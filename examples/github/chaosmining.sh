#!/usr/bin/env bash
# The shell steps of the chaosmining workflow (chaosmining.yml); copy both into
# your repository as .github/chaosmining.sh and .github/workflows/chaosmining.yml.
#
#   chaosmining.sh install    CPU-only torch wheels, then install-plugin
#   chaosmining.sh install-plugin  the plugin and your package, with the installed torch pinned
#                             (.chaosmining-constraints.txt); writes .chaosmining-versions
#   chaosmining.sh run [ARGS] the suites (default tier smoke), against the baseline when one is present
#   chaosmining.sh annotate   ::error lines and a step-summary table for every failed conformance test
#   chaosmining.sh baseline   keep this run's results as the baseline (on the main branch)
set -euo pipefail
step=${1:?usage: chaosmining.sh install|install-plugin|run|annotate|baseline [pytest args]}
shift
report=${CHAOSMINING_REPORT:-chaosmining-report}
cache=${CHAOSMINING_CACHE:-.chaosmining-cache}
baseline=${CHAOSMINING_BASELINE:-chaosmining-baseline.json}
pip=${CHAOSMINING_PIP:-python -m pip}
case "$step" in
  install)
    # the default torch wheels pull about 4.4 GB of CUDA libraries onto a CPU runner
    $pip install --index-url https://download.pytorch.org/whl/cpu torch torchvision torchaudio
    bash "$0" install-plugin
    ;;
  install-plugin)
    # pin the torch just installed: no later install may swap the CPU build for another
    $pip freeze | grep -i -E '^(torch|torchvision|torchaudio)==' > .chaosmining-constraints.txt || true
    $pip install ${CHAOSMINING_PIP_ARGS:-} -c .chaosmining-constraints.txt \
      "${CHAOSMINING_PLUGIN:-pytest-chaosmining}" ${CHAOSMINING_PACKAGE-.}
    # what the model cache depends on: its key changes when one of these does
    $pip freeze | grep -i -E '^(torch|torchvision|captum|numpy|pytest-chaosmining)[=@ ]' > .chaosmining-versions || true
    ;;
  run)
    args=(--chaosmining --chaosmining-report "$report" --chaosmining-cache "$cache")
    if [ -f "$baseline" ]; then
      args+=(--chaosmining-baseline "$baseline")
    else
      echo "chaosmining: no baseline ($baseline): results are judged against the bars only"
    fi
    python -m pytest "${args[@]}" "$@"
    ;;
  annotate)
    if [ -f "$report/results.json" ]; then
      python -m pytest_chaosmining.reports.annotations "$report/results.json"
    else
      echo "::error title=chaosmining::no $report/results.json: the run did not get as far as its report"
    fi
    ;;
  baseline)
    cp "$report/results.json" "$baseline"
    ;;
  *)
    echo "unknown step $step" >&2
    exit 2
    ;;
esac
