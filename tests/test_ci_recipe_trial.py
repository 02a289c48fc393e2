"""The CI recipe in a library's repository, end to end, as a new user meets it.

A scratch attribution library (``mylib``: one explainer, its own pyproject.toml
whose pytest configuration names a plugin the conformance environment lacks and
its own failing tests), the recipe pasted as the README says, its install step
into a fresh virtual environment (the plugin from this checkout, the library
editable), then the workflow's steps in order: a cold run, a warm run (the model
cache in the repository, as CI restores it), an edit of the explainer judged
without reinstalling, a regression red in the run and in ``chaosmining-compare``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from pytest_chaosmining.core.results_file import copy_results, read_results

RECIPE = Path(__file__).parents[1] / "examples" / "github"
CHECKOUT = RECIPE.parents[1]

LIBRARY_PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "mylib"
version = "0.1.0"

[tool.setuptools]
packages = ["mylib"]

[tool.pytest.ini_options]
# what a library's own configuration says: a plugin the conformance environment lacks, its tests
addopts = "--cov=mylib"
testpaths = ["tests"]
"""

#: the library's explainer: input × gradient, by hand; the edit flips SIGN
LIBRARY_CODE = """
import torch

SIGN = 1


def input_x_gradient(model, inputs, target):
    inputs = inputs.detach().clone().requires_grad_(True)
    out = model(inputs)
    picked = out[:, 0] if isinstance(target, int) else out.gather(1, target.view(-1, 1)).squeeze(1)
    (grad,) = torch.autograd.grad(picked.sum(), inputs)
    return SIGN * grad * inputs.detach()
"""

LIBRARY_CONFTEST = """
import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    from mylib import input_x_gradient

    return {"mylib-IxG": input_x_gradient}
"""


def _scratch_library(root: Path) -> Path:
    """``mylib`` with its own tests and configuration, and the recipe pasted."""
    (root / "mylib").mkdir(parents=True)
    (root / "mylib" / "__init__.py").write_text(LIBRARY_CODE)
    (root / "pyproject.toml").write_text(LIBRARY_PYPROJECT)
    (root / "conftest.py").write_text("raise RuntimeError('the library root conftest.py was loaded')\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_mylib.py").write_text("def test_the_librarys_own():\n    assert False\n")
    github = root / ".github"
    (github / "workflows").mkdir(parents=True)
    (github / "workflows" / "chaosmining.yml").write_text((RECIPE / "chaosmining.yml").read_text())
    (github / "chaosmining.sh").write_text((RECIPE / "chaosmining.sh").read_text())
    (github / "chaosmining").mkdir()
    (github / "chaosmining" / "pytest.ini").write_text((RECIPE / "chaosmining" / "pytest.ini").read_text())
    (github / "chaosmining" / "conftest.py").write_text(LIBRARY_CONFTEST)
    (root / ".gitignore").write_text((RECIPE / "chaosmining.gitignore").read_text())
    return github / "chaosmining"


def _environment(path: Path) -> Path:
    """A fresh virtual environment that sees this one's packages (torch, captum, …) but
    not this checkout's plugin, so that the recipe's install step installs the plugin
    and the library into it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    (path / "lib" / version / "site-packages" / "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin"


def _step(root: Path, bin_dir: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``bash .github/chaosmining.sh <step> [args]`` in the library's root, its environment first on PATH,
    ``CI`` set as GitHub Actions sets it (pytest then prints its short summary lines whole)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CHAOSMINING_"))}
    return subprocess.run(
        ["bash", ".github/chaosmining.sh", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**clean, "PATH": f"{bin_dir}{os.pathsep}{clean['PATH']}", "CI": "true", **(env or {})},
        timeout=900,
    )


def _rootdir(output: str) -> str:
    found = re.search(r"^rootdir: (.+)$", output, re.MULTILINE)
    assert found, output[-3000:]
    return found.group(1)


def test_the_recipe_in_a_librarys_repository(tmp_path):
    root = tmp_path / "mylib-repo"
    folder = _scratch_library(root)
    bin_dir = _environment(tmp_path / "env")
    installed = _step(
        root,
        bin_dir,
        "install-plugin",
        env={"CHAOSMINING_PLUGIN": str(CHECKOUT), "CHAOSMINING_PIP_ARGS": "--no-deps --no-build-isolation --no-index"},
    )
    assert installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-3000:]
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import mylib, pytest_chaosmining; print(mylib.__file__)"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert where.returncode == 0 and Path(where.stdout.strip()) == root / "mylib" / "__init__.py", where

    run = ("--chaosmining-suites", "symbolic", "-k", "f08", "-p", "no:randomly")
    cold = _step(root, bin_dir, "run", *run, "-n", "2", "--dist", "loadgroup")  # as the workflow runs it
    assert cold.returncode == 0, cold.stdout[-4000:] + cold.stderr[-2000:]
    assert _rootdir(cold.stdout).startswith(str(folder)), cold.stdout[:2000]
    assert "configfile: pytest.ini" in cold.stdout
    assert "test_the_librarys_own" not in cold.stdout
    assert (root / ".chaosmining-cache").is_dir() and (root / "chaosmining-report" / "results.json").is_file()
    cold_meta = read_results(root / "chaosmining-report" / "results.json", samples=True)["meta"]
    assert cold_meta["models_trained_on"] == ["cpu"] and cold_meta["xdist_workers"] == 2  # sent by the workers
    assert _step(root, bin_dir, "baseline").returncode == 0

    warm = _step(root, bin_dir, "run", *run)  # the cache and the report now exist inside the repository
    assert warm.returncode == 0, warm.stdout[-4000:] + warm.stderr[-2000:]
    assert _rootdir(warm.stdout).startswith(str(folder)), warm.stdout[:2000]
    assert "configfile: pytest.ini" in warm.stdout and "unrecognized arguments" not in warm.stderr
    judged = re.search(r"baseline \S+: compared (\d+), new (\d+), missing (\d+) judged results", warm.stdout)
    assert judged and int(judged.group(1)) > 0 and judged.groups()[1:] == ("0", "0"), warm.stdout[-3000:]
    summary_rows = [line for line in warm.stdout.splitlines() if re.match(r"\w+\s+mylib-IxG\s", line)]
    assert summary_rows and all(not re.fullmatch(r"\S+\s+\S+(\s+0)+\s+\S.*", r) for r in summary_rows)
    report = root / "chaosmining-report" / "results.json"
    assert "NaN" not in report.read_text()
    kept = tmp_path / "warm.json"
    copy_results(report, kept)  # results.json and its samples file
    compare = _step_compare(bin_dir, folder / "baseline.json", kept)
    assert compare.returncode == 0 and "no regression" in compare.stdout, compare.stdout

    code = root / "mylib" / "__init__.py"
    code.write_text(code.read_text().replace("SIGN = 1", "SIGN = -1"))  # no reinstall: the working tree is judged
    flipped = _step(root, bin_dir, "run", *run)
    assert flipped.returncode == 1, flipped.stdout[-4000:]
    failed = [line for line in flipped.stdout.splitlines() if line.startswith("FAILED symbolic/")]
    assert failed and all("mylib-IxG" in line and " - " in line for line in failed), failed
    assert any("truth_sign" in line for line in failed), failed  # the reason is on the summary line
    ours = "FAILED symbolic mylib-IxG: mylib-IxG on "
    reasons = [line for line in flipped.stdout.splitlines() if line.startswith(ours)]
    assert reasons and "truth_sign" in reasons[0], flipped.stdout[-3000:]  # and in the chaosmining summary
    assert "site-packages/pytest_chaosmining" not in flipped.stdout  # the message, not the plugin's stack
    compare = _step_compare(bin_dir, folder / "baseline.json", report)
    assert compare.returncode == 1 and "FAILED" in compare.stdout, compare.stdout
    assert re.search(r"\| failed \| `[^`]*mylib-IxG[^`]*` \|[^\n]*truth_sign", compare.stdout), compare.stdout
    payload = json.loads(report.read_text(), parse_constant=lambda name: pytest.fail(f"not strict JSON: {name}"))
    assert payload["meta"]["machine"]["device"] == "cpu"


def _step_compare(bin_dir: Path, old: Path, new: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "python"), "-m", "pytest_chaosmining.tools.compare", str(old), str(new)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
