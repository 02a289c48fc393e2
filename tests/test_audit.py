"""docs/audit.md is what benchmarks/audit/run.py writes from its committed results, and
the finding it reports holds through the suites: torchcam's Grad-CAM++ departs from the
paper's Eq. 19, pytorch-grad-cam's agrees with it (its eps declared)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from conftest import load_results

ROOT = Path(__file__).resolve().parents[1]


def _audit_module():
    spec = importlib.util.spec_from_file_location("audit_run", ROOT / "benchmarks" / "audit" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_audit_table_is_the_committed_results():
    audit = _audit_module()
    results = json.loads(audit.RESULTS.read_text())
    expected = audit.table(results) + "\n" + (audit.HERE / "reproduction.md").read_text()
    assert audit.TABLE.read_text() == expected, "docs/audit.md is stale: python benchmarks/audit/run.py --table"
    verdicts = {row["name"]: min(row["agreement"].values()) for row in results["methods"] if row["agreement"]}
    assert verdicts["torchcam_GradCAMpp"] < 0.5 and verdicts["pgc_GradCAMPlusPlus"] < audit.BAR
    assert all(
        v >= audit.BAR for name, v in verdicts.items() if not any(k.startswith(name + "@") for k in audit.EXPLAINED)
    )


GRAD_CAM_PP = """
import pytest
import torchcam.methods as tc
from pytorch_grad_cam import GradCAMPlusPlus

from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.explainers.adapters import grad_cam_method, torchcam_method
from pytest_chaosmining.references.formulas import paper


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    return {
        "tc_gcpp": Explainer("tc_gcpp", torchcam_method(tc.GradCAMpp), same_as=paper("GradCAM++")),
        "pgc_gcpp": Explainer("pgc_gcpp", grad_cam_method(GradCAMPlusPlus), same_as=paper("GradCAM++", eps=1e-6)),
    }
"""


def test_torchcam_s_grad_cam_pp_fails_the_paper_s_formula_and_pytorch_grad_cam_s_passes(pytester, run_suite):
    pytest.importorskip("torchcam")
    pytest.importorskip("pytorch_grad_cam")
    pytester.makeconftest(GRAD_CAM_PP)
    args = ("--chaosmining-suites", "vision", "--chaosmining-explainers", "tc_gcpp,pgc_gcpp", "-rf")
    result = run_suite(*args, k="RBFP", fresh=False)  # the first case: its own-merit checks run there
    result.stdout.fnmatch_lines(["*tc_gcpp on RBFP*declared equivalence*implements paper:GradCAM++*< threshold 0.99*"])
    judged = {r["explainer"]: r for r in load_results(pytester)["records"] if r["metric"] == "equivalence"}
    assert judged["tc_gcpp"]["passed"] is False and judged["tc_gcpp"]["value"] < 0.5, judged
    assert judged["pgc_gcpp"]["passed"] is True and judged["pgc_gcpp"]["value"] > 0.999, judged
