"""Registers the reference cheats and misbehaving explainers for calibration runs
(``benchmarks/calibration/run.sh``); select them with ``--chaosmining-explainers``."""

from pytest_chaosmining.explainers.cheats import CHEATS, MISBEHAVING


def pytest_chaosmining_explainers(config):
    return {**CHEATS, **MISBEHAVING}
