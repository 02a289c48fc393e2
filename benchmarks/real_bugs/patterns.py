"""Which corpus bugs would an axiom catch on a network that has their pattern?

The judged suites' networks lack nine of the corpus's patterns (docs/real_bugs.md).  Before
such networks are trained, shipped and calibrated, this measures, on small *untrained*
networks (seeded; the axioms hold for any weights), what the own-merit checks would say of
each release: completeness (1 − mean |Σ a − (f(x) − f(0))| / mean |f(x) − f(0)|) of the
methods that promise it, batch consistency (a sample's map alone against in a batch), and
whether the call raises.  Each release runs in its own process with the release first on
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
    """One small image network per pattern of the corpus (3×12×12 inputs, 4 classes)."""
    import torch
    from torch import nn
    from torchvision.models.resnet import BasicBlock

    class Head(nn.Module):
        def __init__(self, body: nn.Module, channels: int):
            super().__init__()
            self.body, self.pool, self.fc = body, nn.AdaptiveAvgPool2d(1), nn.Linear(channels, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc(torch.flatten(self.pool(self.body(x)), 1))

    class Reused(nn.Module):  # one ReLU module called twice (shap#1479, captum's reuse check)
        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.act = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.c2(self.act(self.c1(x))))

    class Functional(nn.Module):  # F.relu inside forward (captum#1082)
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(self.c2(torch.relu(self.c1(x))))

    class SoftmaxGate(nn.Module):  # an nn.Softmax module inside the network (captum#1367)
        def __init__(self):
            super().__init__()
            self.c1, self.act, self.gate = nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Softmax(dim=1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.gate(self.act(self.c1(x)))

    def conv(c_in: int, c_out: int) -> nn.Module:
        return nn.Conv2d(c_in, c_out, 3, padding=1)

    return {
        "pool before ReLU": Head(nn.Sequential(conv(3, 8), nn.MaxPool2d(2), nn.ReLU()), 8),
        "ReLU before pool": Head(nn.Sequential(conv(3, 8), nn.ReLU(), nn.MaxPool2d(2)), 8),
        "in-place ReLU": Head(nn.Sequential(conv(3, 8), nn.ReLU(inplace=True), conv(8, 8), nn.ReLU(inplace=True)), 8),
        "one ReLU module twice": Head(Reused(), 8),
        "functional ReLU": Head(Functional(), 8),
        "Softmax module": Head(SoftmaxGate(), 8),
        "BasicBlock (residual)": Head(nn.Sequential(conv(3, 8), nn.ReLU(), BasicBlock(8, 8)), 8),
        "ConvTranspose then BatchNorm": Head(
            nn.Sequential(nn.ConvTranspose2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()), 8
        ),
    }


def measure(methods: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """Inside one release's process: every network × method."""
    import numpy as np
    import torch

    torch.manual_seed(0)
    x = torch.rand(8, 3, 12, 12)
    found: dict[str, dict[str, object]] = {}
    for name, model in networks().items():
        model.eval()  # type: ignore[attr-defined]
        with torch.no_grad():
            for m in model.modules():  # type: ignore[attr-defined]
                if isinstance(m, torch.nn.BatchNorm2d):
                    m.running_mean.normal_(0, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
            target = model(x).argmax(1)  # type: ignore[operator]
            change = (model(x) - model(torch.zeros_like(x))).gather(1, target[:, None])[:, 0]  # type: ignore[operator]
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
        "(relative to its largest value), or what the call raised.  Networks untrained, seeded; 3×12×12 inputs.",
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
