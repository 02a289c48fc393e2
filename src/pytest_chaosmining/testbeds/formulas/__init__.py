"""The ChaosMining symbolic-function regression models, shared by the suites that
build on them (symbolic, cost, RFE, saliency through the symbolic suite): the
formulas and their data, the MLP, the tiers' sizes, the cases, and training or
loading a case's model (alone or in a batched ensemble)."""
