"""Audit the attribution libraries' methods against the papers' formulas.

Each method of benchmarks/audit/methods.py is registered with the formula it implements
declared (``same_as=paper(...)``) and run through the symbolic and vision suites at the
smoke tier, every case checked (``--chaosmining-own-merit all``): the suites' declared
equivalence check compares its maps with the reference's on each network, within both
explainers' own noise, by the equivalence bar (0.99).  The table (library, release,
method, formula, the least agreement and where, verdict, why) goes to docs/audit.md;
the measured agreements to benchmarks/audit/audit.json, with the digests of the code that
made them (the plugin's and the libraries' installed source, and the audit's own).

    python benchmarks/audit/run.py                             # the installed releases; write both
    python benchmarks/audit/run.py --release torchcam==0.4.0   # an older release too (kept beside)
    python benchmarks/audit/run.py --table                     # docs/audit.md from audit.json

``--release SPEC`` installs that release outside the environment (the real-bug replay's
installer, ``pip install --no-deps --target``) and audits that library's methods with it
first on the path; its rows are kept in audit.json beside the installed releases'.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = HERE / "audit.json"
TABLE = ROOT / "docs" / "audit.md"
#: the equivalence bar the suites judge a declared formula by
BAR = 0.99

CONFTEST = f'''\
"""Written by benchmarks/audit/run.py: registers the audited methods."""
import sys

import pytest

sys.path.insert(0, {str(HERE)!r})


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    from methods import registered

    return registered()
'''

#: why a method departs from its formula, read from its code (file and line); None: it agrees
EXPLAINED = {
    "torchcam_GradCAMpp@0.5.0": (
        "torchcam/methods/gradient.py:196-198 (0.5.0) sums g³·A over the map in Eq. 19's denominator, "
        "where the paper multiplies Σ_ab A_ab by g³ at each position; and line 203, "
        "`alpha[idx][mask].div_(d[mask] + eps)`, divides a copy (boolean indexing copies), so the "
        "coefficients stay g² and no denominator is applied at all"
    ),
    "torchcam_GradCAMpp@0.4.0": "the same code at torchcam/methods/gradient.py:161-163 and 168 (0.4.0)",
    "torchcam_GradCAMpp@0.3.2": (
        "the same code at torchcam/methods/gradient.py:164-166 and 171 (0.3.2, the division without eps): "
        "the bug is older than 0.3.2"
    ),
    "pgc_GradCAMPlusPlus@1.4.8": "the same eps = 1e-6 at pytorch_grad_cam/grad_cam_plusplus.py:23-25 (1.4.8)",
    "pgc_GradCAMPlusPlus@1.5.7": (
        "pytorch_grad_cam/grad_cam_plusplus.py:25-27 (1.5.7) adds eps = 1e-6 to Eq. 19's denominator: "
        "where the gradients are small (2 g² ≪ 1e-6) it outweighs the formula; against "
        "paper('GradCAM++', eps=1e-6) it agrees to 0.9999 on every case"
    ),
}


def versions() -> dict[str, str]:
    """The installed release of each audited library."""
    found = {}
    for dist in ("captum", "grad-cam", "torchcam", "zennit", "torch"):
        try:
            found[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return found


def _installer() -> object:
    """The real-bug replay's release installer (benchmarks/real_bugs/replay.py)."""
    spec = importlib.util.spec_from_file_location("real_bugs_replay", ROOT / "benchmarks" / "real_bugs" / "replay.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run(release: str | None = None) -> dict[str, object]:
    """Run the suites on the audited methods (``release``: that library's, with the release
    first on the path); each one's agreements by case."""
    sys.path.insert(0, str(HERE))
    from methods import audited

    from pytest_chaosmining.core.results_file import read_results

    env = dict(os.environ)
    library = None
    if release is not None:
        library = re.split(r"[=<>!~ ]", release, maxsplit=1)[0]
        env = _installer().release_env(release)  # type: ignore[attr-defined]
    rows = [r for r in audited() if library is None or RELEASE[r[0]] == library]
    if not rows:
        raise SystemExit(f"no audited method of {library!r}: one of {sorted(RELEASE.values())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "conftest.py").write_text(CONFTEST)
        names = ",".join(e.name for _, _, e, _ in rows)
        command = [
            sys.executable, "-m", "pytest", "--chaosmining", "--chaosmining-suites", "symbolic,vision",
            "--chaosmining-own-merit", "all", "--chaosmining-explainers", names,
            "--chaosmining-report", str(folder / "report"), "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
        results = folder / "report" / "results.json"
        if not results.exists():
            raise SystemExit(f"the audit run wrote no results (exit {done.returncode}):\n{done.stdout[-3000:]}")
        records = read_results(results)["records"]
    agreements: dict[str, dict[str, float]] = {}
    for r in records:
        if r["metric"] == "equivalence":
            case = r["nodeid"].split("[", 1)[1].rsplit("-", 2)[0]
            agreements.setdefault(r["explainer"], {})[f"{r['suite']} {case}"] = round(float(r["value"]), 6)
    from pytest_chaosmining.core.storage.derived import source_fingerprint

    audit_code = hashlib.sha256((HERE / "methods.py").read_bytes() + CONFTEST.encode()).hexdigest()[:16]
    return {
        "made_by": {"source": source_fingerprint(), "audit": audit_code},  # the plugin's and libraries' code, ours
        "versions": versions() | ({library: release.split("==")[-1]} if library and release else {}),
        "methods": [
            {
                "library": lib,
                "method": method,
                "name": e.name,
                "formula": ref().name,
                "agreement": agreements.get(e.name, {}),
            }
            for lib, method, e, ref in rows
        ],
    }


#: the distribution each audited library installs as
RELEASE = {"captum": "captum", "pytorch-grad-cam": "grad-cam", "torchcam": "torchcam", "zennit": "zennit"}


def table(audit: dict[str, object]) -> str:
    """docs/audit.md from an audit's results (the installed releases, then each older one)."""
    lines = [
        "# The libraries against the papers' formulas",
        "",
        "Written by `python benchmarks/audit/run.py` (torch " + str(audit["versions"].get("torch")) + "). "  # type: ignore[attr-defined]
        "Each method runs through the symbolic and vision suites at the smoke tier, declaring the paper formula "
        "it implements (`same_as=paper(...)`, `pytest_chaosmining.references`); on every case the suites compare "
        f"its maps with the formula's (1 − the furthest sample's cosine beyond both explainers' own noise; bar {BAR}). "
        "*least*: the least agreement over the cases, and where.",
        "",
        "| library | release | method | formula | cases | least | verdict | why |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += _rows(audit)
    for older in audit.get("releases", {}).values():  # type: ignore[attr-defined]
        lines += _rows(older)
    return "\n".join(lines) + "\n"


def _rows(audit: dict[str, object]) -> list[str]:
    """The table's rows of one audit run."""
    versions = audit["versions"]
    assert isinstance(versions, dict)
    release, lines = RELEASE, []
    for row in audit["methods"]:  # type: ignore[attr-defined]
        found = row["agreement"]
        if not found:
            lines.append(
                f"| {row['library']} | {versions.get(release[row['library']])} | {row['method']} | "
                f"`{row['formula']}` | 0 | — | not compared | the formula applies to no case run |"
            )
            continue
        where, least = min(found.items(), key=lambda kv: kv[1])
        verdict = "agrees" if least >= BAR else "**departs**"
        version = versions.get(release[row["library"]])
        why = EXPLAINED.get(f"{row['name']}@{version}", "" if least >= BAR else "unexplained")
        lines.append(
            f"| {row['library']} | {versions.get(release[row['library']])} | {row['method']} | `{row['formula']}` | "
            f"{len(found)} | {least:.4f} ({where}) | {verdict} | {why} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", action="store_true", help="only write docs/audit.md from audit.json")
    parser.add_argument("--release", action="append", default=[], help="audit this release of a library too")
    args = parser.parse_args(argv)
    audit = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if not args.table:
        if not args.release:
            audit = run() | {"releases": audit.get("releases", {})}
        for spec in args.release:
            audit.setdefault("releases", {})[spec] = run(spec)
        RESULTS.write_text(json.dumps(audit, indent=1, ensure_ascii=False) + "\n")
    text = table(audit)
    reproduction = (HERE / "reproduction.md").read_text() if (HERE / "reproduction.md").exists() else ""
    TABLE.write_text(text + ("\n" + reproduction if reproduction else ""))
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
