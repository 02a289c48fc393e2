"""What every suite is built from: the seam a suite implements (:mod:`.seam`), the
one path from an explainer's score to its verdict (:mod:`.verdict`), the checks of
an explainer's own merit (:mod:`.merit`, :mod:`.class_effects`), the
parametrisation of suite tests (:mod:`.parametrize`), the defaults most suites
share (:mod:`.defaults`) and the classifier suites' common part (:mod:`.classifier`).
It imports no suite and no testbed."""
