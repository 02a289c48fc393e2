"""Your explainers, registered for the chaosmining suites (next to the built-ins).

Each entry is one line: a captum class (or a functools.partial of one), a
callable ``(model, inputs, target, context) -> map``, or an adapter of
pytest_chaosmining.explainers.adapters (shap, pytorch-grad-cam, Quantus, zennit).
The plugin's README ("Registering an explainer") and docs/explainers.md say more.
"""

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    # from mylib import MyIntegratedGradients
    # return {"my-ig": MyIntegratedGradients}
    return {}
