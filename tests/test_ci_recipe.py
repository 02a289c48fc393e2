"""The CI recipe's shell steps (examples/github/chaosmining.sh), run as the
workflow runs them; the hosted actions themselves are not run here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.tools.annotate import error_lines, summary

RECIPE = Path(__file__).parents[1] / "examples" / "github"
SCRIPT = RECIPE / "chaosmining.sh"

#: a conftest registering a constant map (every feature tied): it fails the symbolic suite
CONSTANT_CONFTEST = """
from pytest_chaosmining.explainers.cheats import CHEATS

def pytest_chaosmining_explainers(config):
    return {"constant": CHEATS["constant"]}
"""


def _step(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``bash chaosmining.sh <step> [args]`` in ``cwd`` with this interpreter first on PATH."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": path, **(env or {})},
        timeout=600,
    )


def test_the_workflow_runs_only_the_scripts_steps():
    workflow = (RECIPE / "chaosmining.yml").read_text()
    steps = re.findall(r"run: bash \.github/chaosmining\.sh (\w+)", workflow)
    assert steps == ["install", "run", "annotate"]
    script = SCRIPT.read_text()
    assert all(f"  {step})" in script for step in steps)
    assert "hashFiles('.chaosmining-versions')" in workflow  # the model cache key follows the versions
    assert "chaosmining-baseline" not in workflow  # the baseline is a committed file, not a cache that expires


#: the plugin's source as the workflow sets it (a commit)
PINNED = "git+https://example.org/owner/pytest-chaosmining@" + "0" * 40


def test_install_uses_cpu_only_torch_wheels_and_pins_them(tmp_path):
    result = _step(tmp_path, "install", env={"CHAOSMINING_PIP": "echo pip", "CHAOSMINING_PLUGIN": PINNED})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "pip install --index-url https://download.pytorch.org/whl/cpu torch torchvision torchaudio"
    assert lines[-1] == f"pip install -c .chaosmining-constraints.txt {PINNED} -e ."  # the library editable
    assert (tmp_path / ".chaosmining-versions").exists()


def test_the_torch_index_is_a_setting_and_a_failure_names_it(tmp_path):
    mirror = "https://mirror.example.org/torch/cpu"
    env = {"CHAOSMINING_PIP": "echo pip", "CHAOSMINING_PLUGIN": PINNED, "CHAOSMINING_TORCH_INDEX": mirror}
    result = _step(tmp_path, "install", env=env)
    assert result.stdout.splitlines()[0] == f"pip install --index-url {mirror} torch torchvision torchaudio"
    own = _step(tmp_path, "install", env={**env, "CHAOSMINING_TORCH_INDEX": ""})
    assert own.stdout.splitlines()[0] == "pip install torch torchvision torchaudio"  # pip's own index
    failing = _step(tmp_path, "install", env={**env, "CHAOSMINING_PIP": "false"})
    assert failing.returncode == 1 and f"from the index {mirror}" in failing.stderr, failing.stderr


@pytest.mark.parametrize(
    "plugin",
    [
        None,  # unset: never the package index by name
        "pytest-chaosmining",  # a bare name: whoever registers it first
        "pytest-chaosmining==0.1.0",  # a version is not a source
        "git+https://example.org/owner/pytest-chaosmining@main",  # a branch moves
        "https://example.org/pytest_chaosmining-0.1.0-py3-none-any.whl",  # a wheel URL without its hash
    ],
)
def test_the_plugin_is_installed_only_from_a_pinned_source(tmp_path, plugin):
    env = {"CHAOSMINING_PIP": "echo pip", "CHAOSMINING_PLUGIN": plugin or ""}
    result = _step(tmp_path, "install-plugin", env=env)
    assert result.returncode == 2 and "pip install" not in result.stdout, result.stdout
    assert "CHAOSMINING_PLUGIN" in result.stderr


def test_the_workflow_sets_a_pinned_source_as_its_header_says():
    workflow = (RECIPE / "chaosmining.yml").read_text()
    pinned = re.search(r'CHAOSMINING_PLUGIN: "([^"]+)"', workflow)
    assert pinned and re.fullmatch(r"git\+https://.+@[0-9a-f]{40}", pinned.group(1))
    assert "Set CHAOSMINING_PLUGIN" in workflow and "Set CHAOSMINING_PLUGIN" in SCRIPT.read_text()


def test_a_wheel_built_from_the_checkout_installs_as_a_users_ci_would(tmp_path):
    """The recipe's install step as a user's CI runs it, with the plugin from a wheel
    (one of the header's pinned forms): pip takes the wheel itself, not a name on the
    package index (``--force-reinstall --no-deps``: this environment has the plugin
    already; the requirements' resolution is the test above)."""
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels),
         str(RECIPE.parents[1])],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("pytest_chaosmining-*.whl")
    report = tmp_path / "pip-report.json"
    env = {
        "CHAOSMINING_PIP": f"{sys.executable} -m pip",
        "CHAOSMINING_PLUGIN": str(wheel),
        "CHAOSMINING_PACKAGE": "",
        "CHAOSMINING_PIP_ARGS": f"--dry-run --quiet --force-reinstall --no-deps --report {report}",
    }
    result = _step(tmp_path, "install-plugin", env=env)
    if result.returncode != 0 and "No matching distribution" in result.stderr + result.stdout:
        pytest.skip(f"the package index is not reachable: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-2000:]
    installs = {item["metadata"]["name"].lower(): item for item in json.loads(report.read_text())["install"]}
    assert set(installs) == {"pytest-chaosmining"}, sorted(installs)
    assert installs["pytest-chaosmining"]["download_info"]["url"] == wheel.as_uri()


def test_the_plugins_install_cannot_replace_the_installed_torch(tmp_path):
    """pip's resolver, in dry-run mode, over the recipe's second install in this
    environment (which has torch): the plugin and its requirements are resolved
    against the package index, and torch, torchvision and torchaudio are left as
    installed (pinned by the constraints file the step writes; the plugin asks
    for lower bounds only)."""
    report = tmp_path / "pip-report.json"
    result = _step(
        tmp_path,
        "install-plugin",
        env={
            "CHAOSMINING_PIP": f"{sys.executable} -m pip",
            "CHAOSMINING_PLUGIN": str(RECIPE.parents[1]),
            "CHAOSMINING_PACKAGE": "",
            "CHAOSMINING_PIP_ARGS": f"--dry-run --quiet --report {report}",
        },
    )
    if result.returncode != 0 and "No matching distribution" in result.stderr + result.stdout:
        pytest.skip(f"the package index is not reachable: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-2000:]
    pinned = (tmp_path / ".chaosmining-constraints.txt").read_text()
    assert "torch==" in pinned
    installs = [item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]]
    assert "pytest-chaosmining" in installs
    assert not {"torch", "torchvision", "torchaudio"} & set(installs), installs
    other = _step(
        tmp_path,
        "install-plugin",
        env={
            "CHAOSMINING_PIP": f"{sys.executable} -m pip",
            "CHAOSMINING_PLUGIN": str(RECIPE.parents[1]),
            "CHAOSMINING_PACKAGE": "torch==2.4.0",
            "CHAOSMINING_PIP_ARGS": "--dry-run --quiet",
        },
    )
    assert other.returncode != 0, "a package asking for another torch would have replaced the installed one"
    import tomllib

    project = tomllib.loads((RECIPE.parents[1] / "pyproject.toml").read_text())["project"]
    torches = [d for d in project["dependencies"] if re.match(r"torch(vision|audio)?\b", d)]
    assert len(torches) == 3 and all(">=" in d and "<" not in d and "==" not in d for d in torches), torches


def _adopting_repository(root: Path) -> Path:
    """A library's checkout with the recipe pasted: its own tests (one fails, and its
    pytest.ini points testpaths at them) and .github/chaosmining/ from the recipe."""
    (root / "tests").mkdir()
    (root / "tests" / "test_library.py").write_text("def test_the_librarys_own():\n    assert False\n")
    (root / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")
    folder = root / ".github" / "chaosmining"
    folder.mkdir(parents=True)
    for name in ("conftest.py", "pytest.ini"):
        (folder / name).write_text((RECIPE / "chaosmining" / name).read_text())
    return folder


def test_run_baseline_and_annotate_steps(tmp_path, shared_cache):
    """main: run, keep the baseline (a committed file); a pull request: run against it,
    saying which baseline it used; a failing explainer becomes an ::error annotation naming
    it and a summary row.  The suites run from .github/chaosmining/: the library's own
    tests (one fails) are never collected."""
    folder = _adopting_repository(tmp_path)
    env = {"CHAOSMINING_CACHE": str(shared_cache)}
    args = ("--chaosmining-suites", "symbolic", "--chaosmining-explainers", "SA", "-k", "f08", "-p", "no:randomly")
    first = _step(tmp_path, "run", *args, env=env)
    assert first.returncode == 0, first.stdout[-2000:]
    assert "::warning title=chaosmining::no baseline" in first.stdout
    assert "test_the_librarys_own" not in first.stdout and "2 passed" in first.stdout, first.stdout[-3000:]
    assert (tmp_path / "chaosmining-report" / "results.json").is_file()
    assert _step(tmp_path, "baseline").returncode == 0
    assert (folder / "baseline.json").is_file() and (folder / "baseline.samples.json.gz").is_file()
    second = _step(tmp_path, "run", *args, env=env)
    assert second.returncode == 0, second.stdout[-2000:]
    assert re.search(
        r"chaosmining: baseline \.github/chaosmining/baseline\.json: tier smoke, run of \S+, "
        r"4 judged results",  # uscore, SA's fprec, training_gain and truth_sign
        second.stdout,
    ), second.stdout[:1000]
    records = read_results(tmp_path / "chaosmining-report" / "results.json", samples=True)["records"]
    agreements = [r for r in records if r["metric"] == "map_agreement"]  # new: the maps against the baseline's
    assert agreements and all(r["passed"] for r in agreements)
    assert "compared 3, new 0, missing 0 judged results" in second.stdout  # agreement and sign: bars alone
    summary_file = tmp_path / "summary.md"
    clean = _step(tmp_path, "annotate", env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    assert clean.returncode == 0 and "::error" not in clean.stdout
    assert (
        "chaosmining: all 2 judged tests passed" in summary_file.read_text()
    )  # prediction quality and SA's test (no control named)

    (folder / "conftest.py").write_text(CONSTANT_CONFTEST)
    (folder / "baseline.json").unlink()
    failing = _step(
        tmp_path,
        "run",
        "--chaosmining-suites",
        "symbolic",
        "--chaosmining-explainers",
        "constant",
        "-k",
        "f08",
        "-p",
        "no:randomly",
        env=env,
    )
    assert failing.returncode == 1
    annotated = _step(tmp_path, "annotate", env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    errors = [line for line in annotated.stdout.splitlines() if line.startswith("::error")]
    assert errors and all(line.startswith("::error title=chaosmining: constant failed symbolic::") for line in errors)
    assert "test_fprec[" in errors[0] and "threshold" in errors[0]
    assert "| constant | symbolic |" in summary_file.read_text()


def test_the_recipes_run_judges_the_librarys_own_explainers_and_says_so(tmp_path, shared_cache):
    """Without ``--chaosmining-explainers`` the run step judges what the conftest
    registers and the control, not the built-ins (captum's), and says so; the pasted
    template, registering nothing yet, stops with a message saying what to register."""
    folder = _adopting_repository(tmp_path)
    env = {"CHAOSMINING_CACHE": str(shared_cache)}
    args = ("--chaosmining-suites", "symbolic", "-k", "f08", "-p", "no:randomly", "--collect-only", "-q")
    empty = _step(tmp_path, "run", *args, env=env)
    assert empty.returncode != 0 and "no explainer of yours is registered" in empty.stdout + empty.stderr
    (folder / "conftest.py").write_text(CONSTANT_CONFTEST)
    result = _step(tmp_path, "run", *args, env=env)
    assert "chaosmining: judging explainers 'own'" in result.stdout, result.stdout[-2000:]
    ids = [line for line in result.stdout.splitlines() if "::test_fprec[" in line]
    assert ids and {re.search(r"-(constant|random)-s0\]", i) is not None for i in ids} == {True}, ids
    everything = _step(tmp_path, "run", *args, env={**env, "CHAOSMINING_EXPLAINERS": ""})
    assert any("-SA-s0]" in line for line in everything.stdout.splitlines()), everything.stdout[-2000:]


def test_run_without_the_recipes_folder_says_what_to_copy(tmp_path):
    result = _step(tmp_path, "run")
    assert result.returncode == 2 and "no .github/chaosmining/pytest.ini" in result.stderr


def test_annotate_without_a_report_says_so(tmp_path):
    result = _step(tmp_path, "annotate")
    assert result.returncode == 0 and "::error title=chaosmining::no chaosmining-report/results.json" in result.stdout
    assert "the run stopped before its report" in result.stdout


def test_annotations_escape_workflow_command_characters():
    payload = {
        "failures": [
            {"nodeid": "t.py::x[a%b]", "suite": "vision", "explainer": "mine", "message": "line one\nline two | 50%"}
        ]
    }
    (line,) = error_lines(payload)
    assert line == "::error title=chaosmining: mine failed vision::t.py::x[a%25b]: line one%0Aline two | 50%25"
    assert "| mine | vision | `x[a%b]` | line one line two \\| 50% |" in summary(payload)
    assert json.loads(json.dumps(payload))  # plain JSON in, nothing else needed


@pytest.mark.parametrize("step", ["nonsense"])
def test_an_unknown_step_is_an_error(tmp_path, step):
    assert _step(tmp_path, step).returncode == 2


#: a library's gradient × input and the bugs a maintainer met through the recipe (CHAOSMINING_BUG)
GXI_CONFTEST = """
import os

import torch


def gxi(model, inputs, target):
    bug = os.environ.get("CHAOSMINING_BUG", "")
    if bug == "raises":
        raise IndexError("index 10 is out of bounds for dimension 1 with size 10")
    x = inputs.detach().clone().requires_grad_(True)
    out = model(x)
    picked = out.gather(1, target.view(-1, 1)).sum() if isinstance(target, torch.Tensor) else out[:, target].sum()
    (grad,) = torch.autograd.grad(picked, x)
    attr = grad * inputs.detach()
    if bug == "class-5" and isinstance(target, torch.Tensor):
        attr[target == 5] = 0.0
    if bug == "wrong-sample":
        attr = attr.roll(1, dims=0)
    if bug == "sign":
        attr = -attr
    return attr


def pytest_chaosmining_explainers(config):
    return {"gxi": gxi}
"""


@pytest.mark.parametrize("bug", ["class-5", "wrong-sample", "sign", "raises"])
def test_a_red_run_reads_in_a_minute(tmp_path, shared_cache, bug):
    """The bugs a maintainer met through the recipe, each against the correct run's
    baseline: the step summary states one count, each failure appears once there and as
    one annotation, a bug confined to one class names it, and the example figure is drawn
    for the red run alone (the green one needs none)."""
    folder = _adopting_repository(tmp_path)
    (folder / "conftest.py").write_text(GXI_CONFTEST)
    env = {"CHAOSMINING_CACHE": str(shared_cache)}
    args = ("--chaosmining-suites", "vision", "-k", "RBFP", "-p", "no:randomly")
    assert _step(tmp_path, "run", *args, env=env).returncode == 0
    report = tmp_path / "chaosmining-report"
    assert not (report / "vision_examples.png").exists()
    assert _step(tmp_path, "baseline").returncode == 0
    summary_file = tmp_path / "summary.md"
    red = _step(tmp_path, "run", *args, env={**env, "CHAOSMINING_BUG": bug, "GITHUB_STEP_SUMMARY": str(summary_file)})
    assert red.returncode == 1, red.stdout[-3000:]
    payload = read_results(report / "results.json", samples=True)
    counts, failures = payload["counts"], payload["failures"]
    summary_text = summary_file.read_text()
    assert summary_text.startswith(f"# ChaosMining (smoke tier): **{counts['headline']}**")
    assert f"chaosmining: {counts['headline']}" in red.stdout  # the terminal states the same count
    assert counts["failed"] == len(failures) == len({f["nodeid"] for f in failures}) >= 1
    rows = [line for line in summary_text.splitlines() if line.startswith("| gxi | vision |")]
    assert len(rows) == len(failures)  # each failure once, one table
    annotated = _step(tmp_path, "annotate", env={"GITHUB_STEP_SUMMARY": str(summary_file)})
    errors = [line for line in annotated.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == len(failures) and summary_file.read_text() == summary_text  # no second table
    if bug == "class-5":
        assert all("all in class 5" in f["message"].splitlines()[0] for f in failures), failures
    if bug != "raises":
        assert (report / "vision_examples.png").stat().st_size > 10_000


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("not json {", "not JSON (Expecting value*): not a chaosmining results.json"),
        ('{"version": 1, "results": []}', "JSON, but not a chaosmining results.json (no 'records' list; keys*"),
        ('{"records": [{"name": "x"}], "meta": {}}', "record 0 is not a chaosmining result (no 'suite')*"),
        ('{"records": [], "meta": {}, "format": 99}', "results format 99, newer than this plugin's*"),
        (
            '{"format": 3, "meta": {}, "tests": [], "samples": {"file": "baseline.samples.json.gz", "sha256": "0"}}',
            "its per-sample results baseline.samples.json.gz are missing beside it*",
        ),
    ],
)
def test_a_baseline_that_is_not_a_results_file_is_one_usage_error_everywhere(tmp_path, capsys, content, said):
    """Not JSON, another tool's JSON, another format: the recipe's run step, the plugin,
    chaosmining-compare and the pull request's summary each say so in one line naming the
    file (no traceback), and the report folder's stopped.json says why the run stopped."""
    from fnmatch import fnmatch

    from pytest_chaosmining.tools import compare, pr_summary

    folder = _adopting_repository(tmp_path)
    (folder / "baseline.json").write_text(content)
    report = tmp_path / "chaosmining-report"
    report.mkdir()
    (report / "results.json").write_text("{}")  # an earlier run's: never read as this run's
    step = _step(tmp_path, "run", "--chaosmining-suites", "symbolic", "-k", "f08")
    assert step.returncode == 4, step.stdout[-2000:] + step.stderr[-2000:]
    errors = [line for line in step.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "Traceback" not in step.stderr, step.stderr
    assert fnmatch(errors[0], f"ERROR: chaosmining: --chaosmining-baseline: *baseline.json: {said}"), errors
    stopped = json.loads((report / "stopped.json").read_text())
    assert fnmatch(stopped["reason"], f"--chaosmining-baseline: *baseline.json: {said}")
    assert not (report / "results.json").exists()
    plugin = subprocess.run(
        [sys.executable, "-m", "pytest", "--chaosmining", "-p", "no:cacheprovider", "--chaosmining-baseline",
         str(folder / "baseline.json"), "--chaosmining-report", str(report), "--co", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert plugin.returncode == 4 and "Traceback" not in plugin.stderr, plugin.stderr
    assert fnmatch(plugin.stderr.strip().splitlines()[-1], f"*--chaosmining-baseline: *baseline.json: {said}")
    assert fnmatch(json.loads((report / "stopped.json").read_text())["reason"], f"*baseline.json: {said}")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"records": [], "meta": {"tier": "smoke"}, "format": 2}))
    for tool, name in ((compare.main, "chaosmining-compare"), (pr_summary.main, "chaosmining-pr-summary")):
        capsys.readouterr()
        assert tool([str(folder / "baseline.json"), str(good)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fnmatch(err[0], f"{name}: *baseline.json: {said}"), err
