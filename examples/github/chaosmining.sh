#!/usr/bin/env bash
# The shell steps of the chaosmining workflow (chaosmining.yml).  Copy into your repository:
#   chaosmining.sh          -> .github/chaosmining.sh
#   chaosmining.yml         -> .github/workflows/chaosmining.yml
#   chaosmining/            -> .github/chaosmining/  (conftest.py: your explainers; pytest.ini)
#
#   chaosmining.sh install    torch, torchvision and torchaudio from CHAOSMINING_TORCH_INDEX (default: PyTorch's
#                             CPU-only wheels; empty: pip's own index), then install-plugin
#   chaosmining.sh install-plugin  the plugin, and your package editable (pip install -e: the run judges your
#                             working tree, an edit is judged at the next run without reinstalling), with
#                             the installed torch pinned (.chaosmining-constraints.txt); writes
#                             .chaosmining-versions
#   chaosmining.sh run [ARGS] the suites (default tier smoke) from .github/chaosmining/, never your
#                             own tests; your explainers and the control (CHAOSMINING_EXPLAINERS,
#                             default own); against the committed baseline when there is one
#   chaosmining.sh annotate   ::error lines for every failed conformance test (and why a run stopped)
#   chaosmining.sh baseline   this run's results become the baseline (.github/chaosmining/baseline.json
#                             and baseline.samples.json.gz beside it): commit both; a committed file never expires, a CI cache does.  Take it from CI's
#                             own artifact (a run on main): a laptop's CPU times gate CI's badly
#
# The files these steps write, for your .gitignore: chaosmining.gitignore (append it).
#
# Set CHAOSMINING_PLUGIN (chaosmining.yml's env) to where the plugin comes from, pinned: it is not
# on the package index yet, and a bare name there would install whatever someone registers first.
# One of:
#   git+https://<host>/<owner>/pytest-chaosmining@<40-hex commit>   a commit, not a branch or tag
#   path/to/pytest_chaosmining-<version>-py3-none-any.whl           a wheel you vendor in your repository
#   https://…/pytest_chaosmining-<version>-py3-none-any.whl#sha256=<hash>
#   path/to/a/checkout                                              a directory (a submodule)
set -euo pipefail
step=${1:?usage: chaosmining.sh install|install-plugin|run|annotate|baseline [pytest args]}
shift
dir=${CHAOSMINING_DIR:-.github/chaosmining}
report=${CHAOSMINING_REPORT:-chaosmining-report}
cache=${CHAOSMINING_CACHE:-.chaosmining-cache}
baseline=${CHAOSMINING_BASELINE:-$dir/baseline.json}
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
pip=${CHAOSMINING_PIP:-python -m pip}
# where torch comes from: PyTorch's CPU-only wheels (the default wheels pull about 4.4 GB of CUDA
# libraries onto a CPU runner); a mirror's URL, or empty for pip's own index (and its settings)
torch_index=${CHAOSMINING_TORCH_INDEX-https://download.pytorch.org/whl/cpu}
case "$step" in
  install)
    if [ -n "$torch_index" ]; then
      from=(--index-url "$torch_index")
      where="the index $torch_index"
    else
      from=()
      where="pip's own index"
    fi
    if ! $pip install ${from[@]+"${from[@]}"} torch torchvision torchaudio; then
      echo "chaosmining: could not install torch, torchvision and torchaudio from $where" \
           "(CHAOSMINING_TORCH_INDEX: a mirror's URL, or empty for pip's own index)" >&2
      exit 1
    fi
    bash "$0" install-plugin
    ;;
  install-plugin)
    plugin=${CHAOSMINING_PLUGIN:-}
    if [ -z "$plugin" ]; then
      echo "chaosmining: set CHAOSMINING_PLUGIN to the plugin's pinned source (a commit, a wheel or a" \
           "checkout: the header of chaosmining.sh); it is not installed from the package index by name" >&2
      exit 2
    fi
    if ! { [ -e "$plugin" ] || [[ "$plugin" =~ ^git\+.+@[0-9a-f]{40}$ ]] \
           || [[ "$plugin" =~ ^https://.+\.whl#sha256=[0-9a-f]{64}$ ]]; }; then
      echo "chaosmining: CHAOSMINING_PLUGIN=$plugin is not pinned: give a git URL at a 40-hex commit, a" \
           "wheel (a path, or an https URL with #sha256=) or a checkout's directory" >&2
      exit 2
    fi
    # pin the torch just installed: no later install may swap the CPU build for another
    $pip freeze | grep -i -E '^(torch|torchvision|torchaudio)==' > .chaosmining-constraints.txt || true
    # your package editable when it is a folder (the default: the repository's root), so that the run
    # judges the working tree, not a copy installed before your last edit
    package=${CHAOSMINING_PACKAGE-.}
    if [ -z "$package" ]; then
      yours=()
    elif [ -d "$package" ]; then
      yours=(-e "$package")
    else
      yours=("$package")
    fi
    $pip install ${CHAOSMINING_PIP_ARGS:-} -c .chaosmining-constraints.txt "$plugin" ${yours[@]+"${yours[@]}"}
    # what the model cache depends on: its key changes when one of these does
    $pip freeze | grep -i -E '^(torch|torchvision|captum|numpy|pytest-chaosmining)[=@ ]' > .chaosmining-versions || true
    ;;
  run)
    if [ ! -f "$dir/pytest.ini" ]; then
      echo "chaosmining: no $dir/pytest.ini: copy the recipe's chaosmining/ folder there (the suites run" \
           "from it, apart from your own tests)" >&2
      exit 2
    fi
    args=(--chaosmining "--chaosmining-report=$(absolute "$report")" "--chaosmining-cache=$(absolute "$cache")")
    # no earlier run's findings survive into this run's annotations, whenever this run stops
    rm -f "$report/results.json" "$report/results.samples.json.gz" "$report/stopped.json"
    # judge what is yours: the explainers your conftest registers and the control (the built-ins are
    # captum's; CHAOSMINING_EXPLAINERS= empty runs every registered explainer, a list names some)
    explainers=${CHAOSMINING_EXPLAINERS-own}
    if [ -n "$explainers" ] && [[ " $* " != *" --chaosmining-explainers"* ]]; then
      args+=(--chaosmining-explainers "$explainers")
      echo "chaosmining: judging explainers '$explainers' (own: those your conftest registers, and the control;" \
           "CHAOSMINING_EXPLAINERS= for every registered explainer, the built-ins included)"
    fi
    if [ -f "$baseline" ]; then
      # one line about it, or, where it is not a results.json, a usage error naming it (stopped.json says so)
      python -m pytest_chaosmining.tools.baseline_info "$baseline" "$report"
      args+=("--chaosmining-baseline=$(absolute "$baseline")")
    else
      echo "::warning title=chaosmining::no baseline ($baseline): results are judged against the bars only;" \
           "after a run on main, 'bash .github/chaosmining.sh baseline' and commit the file"
    fi
    # the recipe's folder is the rootdir and its pytest.ini the only configuration, on every run: pytest
    # would otherwise take the rootdir from existing paths among the arguments (the cache, the report),
    # and with it your repository's pytest configuration (its addopts, testpaths, conftest.py)
    (cd "$dir" && python -m pytest -c pytest.ini --rootdir . "${args[@]}" "$@")
    ;;
  annotate)
    # this run's findings only: the run step removed the last run's; a run that stopped early says why
    python -m pytest_chaosmining.tools.annotate "$report/results.json"
    ;;
  baseline)
    # results.json and its samples file beside it (the maps a baseline compares): commit both
    python -m pytest_chaosmining.tools.save_baseline "$report/results.json" "$baseline"
    ;;
  *)
    echo "unknown step $step" >&2
    exit 2
    ;;
esac
