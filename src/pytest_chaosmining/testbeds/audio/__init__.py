"""The ChaosMining audio classifiers, shared by the suites that build on them (audio,
saliency): the multi-channel clips, the sequence classifiers, the tiers' sizes, the
cases, training or loading a case's classifier, and its scoring."""
