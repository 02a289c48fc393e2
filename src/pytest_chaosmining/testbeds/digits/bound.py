"""The digits testbed bound to its heavy half (its scoring, torch at its top): what a run
trains and scores with, and the suites that compose its classifiers (saliency, IteROAR)
reach."""

from __future__ import annotations

from pytest_chaosmining.testbeds.digits import scoring
from pytest_chaosmining.testbeds.digits.testbed import DigitTestbed


class DigitModels(DigitTestbed):
    """The digits testbed with its scoring: trains or loads a case's classifier, evaluates
    an explainer on it, probes it."""

    scoring = scoring


#: the digits testbed, bound
DIGIT_MODELS = DigitModels()
