"""The reusable action (action.yml), run step by step as a runner runs a composite
action, with a faked GitHub environment: its inputs and expressions substituted, each
step's outputs read back from ``$GITHUB_OUTPUT``, the hosted actions (cache, upload)
left out, pip and gh stood in for.  A library registers an explainer, its first run
becomes main's results, and a pull request that breaks it gets a red job, one
annotation per failed test and a summary of what changed per explainer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from pytest_chaosmining.core.results_file import copy_results, read_results

ROOT = Path(__file__).parents[1]

MINE = """
import os

def saliency(model, inputs, target):
    if os.environ.get("BROKEN"):
        return inputs.detach() * 0.0 + 1.0  # every feature tied: a regression
    inputs = inputs.detach().clone().requires_grad_(True)
    model(inputs).sum().backward()
    return inputs.grad.abs()

def pytest_chaosmining_explainers(config):
    return {"mine": saliency}
"""


def run_action(workspace: Path, inputs: dict[str, str], env: dict[str, str]) -> tuple[dict[str, dict[str, str]], str]:
    """Run action.yml's ``run`` steps in ``workspace`` as a runner would (each with
    ``bash -eo pipefail``; a failing step ends the action, but for ``if: always()``);
    every step's outputs, and the log."""
    import yaml  # a dev dependency: README's command 1 (``pip install .``) collects this module too

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update(inputs, **{"github-token": "fake-token"})
    outputs: dict[str, dict[str, str]] = {}
    context = {"github.action_path": str(ROOT), "github.event.pull_request.number": "7", "runner.os": "Linux"}

    def expand(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            if name.startswith("inputs."):
                return values[name.removeprefix("inputs.")]
            if name.startswith("steps."):
                _, step, _, key = name.split(".")
                return outputs.get(step, {}).get(key, "")
            return context[name]

        return re.sub(r"\$\{\{(.+?)\}\}", one, text)

    log, failed = [], False
    for step in action["runs"]["steps"]:
        if "uses" in step or (failed and step.get("if") != "always()"):
            continue
        out = workspace / ".github-output"
        out.write_text("")
        step_env = {**os.environ, **env, "GITHUB_OUTPUT": str(out)}
        step_env.update({k: expand(str(v)) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"])],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        log.append(f"## {step['name']} (exit {proc.returncode})\n{proc.stdout}{proc.stderr}")
        if "id" in step:
            outputs[step["id"]] = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
        failed = failed or proc.returncode != 0
    outputs["action"] = {"failed": str(failed)}
    return outputs, "\n".join(log)


def test_the_action_gates_a_pull_request_and_tells_it_what_changed(tmp_path, shared_cache):
    workspace = tmp_path / "library"
    (workspace / ".github" / "chaosmining").mkdir(parents=True)
    (workspace / ".github" / "chaosmining" / "conftest.py").write_text(MINE)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "gh.log"}\n')
    (bin_dir / "gh").chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "CHAOSMINING_PIP": "echo pip",  # the plugin is installed here already: pip stood in for
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    inputs = {
        "suites": "symbolic",
        "explainers": "mine",
        "cache": str(shared_cache),
        "pytest-args": "-k f08 -p no:randomly",
        "package": "",
        "comment": "true",
    }
    outputs, log = run_action(workspace, inputs, env)
    assert outputs["run"]["status"] == "0" and outputs["action"]["failed"] == "False", log
    assert "no comparison with main" in log  # no baseline yet: judged against the bars only
    copy_results(  # results.json and its samples file
        workspace / "chaosmining-report" / "results.json", workspace / ".github" / "chaosmining" / "baseline.json"
    )

    summary.write_text("")
    outputs, log = run_action(workspace, inputs, {**env, "BROKEN": "1"})
    assert outputs["run"]["status"] == "1" and outputs["action"]["failed"] == "True", log
    errors = [line for line in log.splitlines() if line.startswith("::error")]
    payload = read_results(workspace / "chaosmining-report" / "results.json", samples=True)
    assert len(errors) == len(payload["failures"]) == payload["counts"]["failed"] >= 1  # each failure once
    body = (
        Path(outputs["compare"]["file"])
        if Path(outputs["compare"]["file"]).is_absolute()
        else workspace / outputs["compare"]["file"]
    )
    text = body.read_text()
    assert "## chaosmining: regressed against main" in text
    row = next(line for line in text.splitlines() if line.startswith("| mine |"))
    assert "| regressed |" in row and "symbolic" in row  # its leaderboard score moved
    step_summary = summary.read_text()
    assert step_summary.count(payload["counts"]["headline"]) >= 1 and text in step_summary
    assert "pr comment 7 --body-file" in (tmp_path / "gh.log").read_text()
