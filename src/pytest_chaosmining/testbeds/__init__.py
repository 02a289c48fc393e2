"""The testbeds several suites share: data whose predictive features are known,
the models trained on it, the tiers' sizes and the cases.  :mod:`.formulas`: the
symbolic-function regressions (symbolic, cost, RFE, saliency); :mod:`.digits`: the
digit-image classifiers (vision, IteROAR, BAM, saliency); :mod:`.noise_conditions`:
the noise conditions the digit and audio data share.  A testbed imports no suite."""
