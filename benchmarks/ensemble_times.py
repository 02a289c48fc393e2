"""Training time of the symbolic suite's MLPs, one at a time against batched
ensembles (one per shape group), at each tier's settings, on this machine.

    python benchmarks/ensemble_times.py [--epochs 20] [--tiers smoke,ci,paper] [--device cpu]

Times ``--epochs`` epochs of every model of the tier's grid (all formulas and
seeds) both ways, one torch thread (as the plugin's processes), and
extrapolates to the tier's full epoch count.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import torch

from pytest_chaosmining.core.ensemble import train_regressors_together
from pytest_chaosmining.core.training import RegressionTraining, train_regressor
from pytest_chaosmining.suites.symbolic.data import SymbolicDataSpec, generate
from pytest_chaosmining.suites.symbolic.suite import plan_cases, untrained_model
from pytest_chaosmining.suites.symbolic.tiers import SYMBOLIC


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(tier: str, epochs: int, device: torch.device) -> None:
    cases = plan_cases(SYMBOLIC[tier])
    data = {c: generate(SymbolicDataSpec(c.formula, c.noise_features, c.label_noise, c.n_samples, c.seed))
            for c in cases}
    groups = defaultdict(list)
    for case in cases:
        groups[data[case].n_features].append(case)
    full = SYMBOLIC[tier].epochs
    settings = RegressionTraining(epochs, cases[0].lr, cases[0].optimizer)
    _sync(device)
    start = time.perf_counter()
    for case in cases:
        model = untrained_model(case, data[case].n_features).to(device)
        x, y = (torch.from_numpy(a).to(device) for a in (data[case].x_train, data[case].y_train))
        train_regressor(model, x, y, settings, seed=case.seed)
    _sync(device)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    for members in groups.values():
        models = [untrained_model(c, data[c].n_features).to(device) for c in members]
        xs = torch.stack([torch.from_numpy(data[c].x_train) for c in members]).to(device)
        ys = torch.stack([torch.from_numpy(data[c].y_train) for c in members]).to(device)
        train_regressors_together(models, xs, ys, settings)
    _sync(device)
    together = time.perf_counter() - start
    scale = full / epochs
    sizes = sorted(len(m) for m in groups.values())
    print(f"{tier}: {len(cases)} models in {len(groups)} shape groups (sizes {sizes}), {full} epochs, "
          f"{cases[0].n_samples} samples: one at a time {alone * scale:.0f} s, ensembles {together * scale:.0f} s "
          f"(×{alone / together:.2f}; measured over {epochs} epochs)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--tiers", default="smoke,ci,paper")
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for tier in args.tiers.split(","):
        measure(tier, args.epochs, torch.device(args.device))


if __name__ == "__main__":
    main()
