"""How the suites' models train: regression and classification loops, batched ensembles,
saliency guided training and the training modes."""
