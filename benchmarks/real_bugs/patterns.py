"""Which corpus bugs would an axiom catch on a network that has their pattern?

The vision suite's module-pattern networks (:mod:`pytest_chaosmining.suite_kit.module_patterns`,
untrained and seeded: the axioms hold for any weights) per library release, on the first
network of each pattern: completeness (1 − mean |Σ a − (f(x) − f(0))| / mean |f(x) − f(0)|)
of the methods that promise it, batch consistency (a sample's map alone against in a batch),
and whether the call raises.  Each release runs in its own process with the release first on
``PYTHONPATH`` (replay.py's :func:`release_env`).

    python benchmarks/real_bugs/patterns.py            # writes patterns.md beside this file
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (library release, methods measured with it); "installed" is the environment's own
RELEASES = (
    ("captum==0.4.1", ("DeepLift", "IntegratedGradients", "GuidedBackprop")),
    ("captum==0.5.0", ("DeepLift", "IntegratedGradients", "GuidedBackprop")),
    ("captum==0.6.0", ("DeepLift", "IntegratedGradients", "GuidedBackprop")),
    ("captum==0.9.0", ("DeepLift", "IntegratedGradients", "GuidedBackprop")),
    ("installed", ("shap.DeepExplainer",)),
)


def networks() -> dict[str, object]:
    """The vision suite's module-pattern networks (member 0 of the seed the suite runs; 10
    classes, any canvas): :mod:`pytest_chaosmining.suite_kit.module_patterns`."""
    import torch

    from pytest_chaosmining.suite_kit.module_patterns import PATTERNS, pattern_network

    return {pattern.name: pattern_network(pattern, 0, 0, torch.device("cpu")) for pattern in PATTERNS}


def measure(methods: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Inside one release's process: every network × method."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    x = torch.rand(8, 3, 12, 12)
    found: dict[str, dict[str, object]] = {}
    for name, model in networks().items():
        with torch.no_grad():
            moved = model(x) - model(torch.zeros_like(x))  # type: ignore[operator]
            target = moved.abs().argmax(1)  # the class whose logit moved most, as the suite explains
            change = moved.gather(1, target[:, None])[:, 0]
        for method in methods:
            key = f"{name} | {method}"
            try:
                if method.startswith("shap."):
                    import shap

                    explainer = shap.DeepExplainer(model, torch.zeros(1, 3, 12, 12))
                    values = np.asarray(explainer.shap_values(x, check_additivity=False))
                    maps = torch.as_tensor(values[np.arange(len(x)), ..., target.numpy()])
                    single = torch.as_tensor(
                        np.asarray(explainer.shap_values(x[:1], check_additivity=False))[0, ..., int(target[0])]
                    )
                else:
                    from captum import attr

                    cls = getattr(attr, method)
                    maps = cls(model).attribute(x, target=target)
                    single = cls(model).attribute(x[:1], target=target[:1])[0]
                sums = maps.flatten(1).sum(1)
                completeness = float(1 - (sums - change).abs().mean() / change.abs().mean())
                moved = float((maps[0] - single).abs().max() / maps[0].abs().max().clamp_min(1e-12))
                found[key] = {"completeness": round(completeness, 4), "batch_moved": round(moved, 4)}
            except Exception as exc:  # noqa: BLE001 - a raise is what is measured
                found[key] = {"raised": f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}"}
    return found


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--inside":
        print(json.dumps(measure(tuple(sys.argv[2].split(",")))))
        return 0
    sys.path.insert(0, str(HERE))
    from replay import release_env

    rows: dict[str, dict[str, object]] = {}
    for spec, methods in RELEASES:
        out = subprocess.run(
            [sys.executable, __file__, "--inside", ",".join(methods)],
            env=release_env(spec),
            capture_output=True,
            text=True,
            check=True,
        )
        rows[spec] = json.loads(out.stdout.strip().splitlines()[-1])
    lines = [
        "# The corpus's patterns on untrained networks, per release",
        "",
        "`python benchmarks/real_bugs/patterns.py`: completeness (1 = the sums are f(x) − f(0) exactly; IG with",
        "captum's default 50 steps), the largest change of sample 0's map between the batch of 8 and alone",
        "(relative to its largest value), or what the call raised.  The suite's networks (member 0 of seed 0),",
        "each image explained for the class whose logit moved most from the zero baseline; 3×12×12 inputs.",
        "",
        "| network \\| method | " + " | ".join(spec for spec, _ in RELEASES) + " |",
        "|---|" + "---|" * len(RELEASES),
    ]
    keys = sorted({k for found in rows.values() for k in found}, key=lambda k: (k.split(" | ")[1], k))
    for key in keys:
        cells = []
        for spec, _ in RELEASES:
            got = rows[spec].get(key)
            if got is None:
                cells.append("")
            elif "raised" in got:
                cells.append(f"raises {str(got['raised']).split(':')[0]}")
            else:
                cells.append(f"{got['completeness']:.3f} / {got['batch_moved']:.0e}")
        lines.append(f"| {key.replace('|', '·')} | " + " | ".join(cells) + " |")
    (HERE / "patterns.md").write_text("\n".join(lines) + "\n")
    (HERE / "patterns.json").write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
