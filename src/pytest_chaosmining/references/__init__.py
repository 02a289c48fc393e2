"""Reference implementations of the papers' attribution formulas, small and exact
(float64), each cited where it is defined: :func:`paper` makes one an explainer."""
