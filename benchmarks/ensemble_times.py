"""Training time of small networks one at a time against batched ensembles, at
each tier's settings, on this machine.

    python benchmarks/ensemble_times.py [--epochs 20] [--tiers smoke,ci,paper] [--device cpu]
                                        [--models symbolic,guided,rfe]

- ``symbolic``: every MLP of the symbolic suite's grid (all formulas and seeds),
  one ensemble per shape group;
- ``guided``: the same grid trained saliency guided (the saliency suite's twins;
  its paper tier guides all 15 formulas × 5 seeds);
- ``rfe``: RFEwNA's second round on each of the tier's datasets, one network per
  distinct feature set (8: what ten built-ins kept at smoke), side by side.

Times ``--epochs`` epochs both ways, one torch thread (as the plugin's
processes), and extrapolates to the tier's full epoch count.  A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np
import torch

from pytest_chaosmining.core.training.ensemble import train_regressors_together
from pytest_chaosmining.core.training.modes import SaliencyGuided
from pytest_chaosmining.core.training.regression import RegressionTraining, train_regressor
from pytest_chaosmining.testbeds.formulas.cases import plan_cases
from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate
from pytest_chaosmining.testbeds.formulas.tiers import SYMBOLIC
from pytest_chaosmining.testbeds.formulas.training import untrained_model


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(tier: str, epochs: int, device: torch.device, guide: SaliencyGuided | None = None) -> None:
    cases = plan_cases(SYMBOLIC[tier])
    data = {
        c: generate(SymbolicDataSpec(c.formula, c.noise_features, c.label_noise, c.n_samples, c.seed)) for c in cases
    }
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
        train_regressor(model, x, y, settings, seed=case.seed, guide=guide)
    _sync(device)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    for members in groups.values():
        models = [untrained_model(c, data[c].n_features).to(device) for c in members]
        xs = torch.stack([torch.from_numpy(data[c].x_train) for c in members]).to(device)
        ys = torch.stack([torch.from_numpy(data[c].y_train) for c in members]).to(device)
        train_regressors_together(models, xs, ys, settings, guide=guide, seeds=[c.seed for c in members])
    _sync(device)
    together = time.perf_counter() - start
    scale = full / epochs
    sizes = sorted(len(m) for m in groups.values())
    print(
        f"{tier}{' guided' if guide else ''}: {len(cases)} models in {len(groups)} shape groups "
        f"(sizes {sizes}), {full} epochs, "
        f"{cases[0].n_samples} samples: one at a time {alone * scale:.0f} s, ensembles {together * scale:.0f} s "
        f"(×{alone / together:.2f}; measured over {epochs} epochs)",
        flush=True,
    )


def measure_rfe(tier: str, epochs: int, device: torch.device, sets: int = 8) -> None:
    from pytest_chaosmining.suites.rfe.evaluation import load
    from pytest_chaosmining.suites.rfe.rfewna import validation_split
    from pytest_chaosmining.suites.rfe.rounds import RoundNetworks, RoundRequest, RoundTraining
    from pytest_chaosmining.suites.rfe.spec import plan_cases as rfe_cases
    from pytest_chaosmining.suites.rfe.tiers import RFE_TIERS

    alone = together = 0.0
    full = []
    for case in rfe_cases(RFE_TIERS[tier]):
        data = load(case)
        train, _ = validation_split(len(data.y_train), 0.2, case.seed)
        x = np.ascontiguousarray(data.x_train[train])
        y = data.y_train[train].astype(np.int64 if case.task == "classification" else np.float32)
        n_out = len(np.unique(y)) if case.task == "classification" else 1
        training = RoundTraining(case.task, n_out, epochs, case.lr, case.batch_size, case.seed, str(device))
        rng = np.random.default_rng(0)
        keep = x.shape[1] - x.shape[1] // 2
        requests = [
            RoundRequest(training, x, y, np.sort(rng.choice(x.shape[1], keep, replace=False))) for _ in range(sets)
        ]
        scale = case.epochs / epochs
        for ensemble in (False, True):
            _sync(device)
            start = time.perf_counter()
            RoundNetworks(ensemble=ensemble).train(requests)
            _sync(device)
            seconds = (time.perf_counter() - start) * scale
            if ensemble:
                together += seconds
            else:
                alone += seconds
        full.append(case.epochs)
    print(
        f"{tier} rfe: {len(full)} datasets × {sets} second-round networks, {sorted(set(full))} epochs: "
        f"one at a time {alone:.0f} s, ensembles {together:.0f} s (×{alone / together:.2f}; measured over "
        f"{epochs} epochs)",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--tiers", default="smoke,ci,paper")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--models", default="symbolic,guided,rfe")
    args = parser.parse_args()
    torch.set_num_threads(1)
    device = torch.device(args.device)
    for tier in args.tiers.split(","):
        for models in args.models.split(","):
            if models == "rfe":
                measure_rfe(tier, args.epochs, device)
            else:
                measure(tier, args.epochs, device, SaliencyGuided() if models == "guided" else None)


if __name__ == "__main__":
    main()
