"""Registers the explainer ``candidate``: the mutant (or ``base:<built-in>``) that
``CHAOSMINING_MUTANT`` names (see mutants.py and run.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    from mutants import explainer

    return {"candidate": explainer(os.environ["CHAOSMINING_MUTANT"])}
