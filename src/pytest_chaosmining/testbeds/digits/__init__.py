"""The ChaosMining vision classifiers, shared by the suites that build on them
(vision, IteROAR, BAM): the digit images and their canvases, the CNNs, the
tiers' sizes, the cases, training or loading a case's classifier, and the
patch-grid context image explainers get."""
