"""Your explainers, registered for the chaosmining suites (next to the built-ins).

Each entry is one line: a captum ``Attribution`` class (or a functools.partial of
one), a callable ``(model, inputs, target) -> map``, or an adapter of
pytest_chaosmining.explainers.adapters (shap, pytorch-grad-cam, Quantus, zennit).

``target`` is what captum's ``target=`` takes: ``0`` for the regressors (the
symbolic and cost suites: their one output), a ``torch.long`` tensor of shape
``(batch,)`` holding each input's predicted class for the classifiers (vision,
audio, rfe, iteroar, bam).  The map has the inputs' shape, on their device.  A
callable that also names a ``context`` parameter receives what the suite knows
(feature mask, baseline, batch sizes): the plugin's docs/explainers.md.
"""

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    # from mylib import MyIntegratedGradients   (installed editable: your working tree is judged)
    #
    # def my_method(model, inputs, target):
    #     ...
    #     return attributions
    #
    # return {"my-ig": MyIntegratedGradients, "mine": my_method}
    return {}
