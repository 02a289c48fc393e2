"""Registers the explainers of a benchmark run: ``candidate``, the mutant (or
``base:<built-in>``) that ``CHAOSMINING_MUTANT`` names (mutants.py, run.py), or the
benign changes and bases that ``CHAOSMINING_BENIGN`` lists (benign.py, benign_run.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    if os.environ.get("CHAOSMINING_BENIGN"):
        import dataclasses

        from benign import explainer as benign_explainer
        from mutants import explainer

        names = os.environ["CHAOSMINING_BENIGN"].split(",")
        return {
            name: dataclasses.replace(explainer(name.removeprefix("mut-")), name=name)
            if name.startswith("mut-")
            else benign_explainer(name)
            for name in names
        }
    from mutants import explainer

    return {"candidate": explainer(os.environ["CHAOSMINING_MUTANT"])}
