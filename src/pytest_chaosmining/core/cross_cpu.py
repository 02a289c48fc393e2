"""How far one result may move between machines of different CPU kinds, stated once.

Float results of one computation differ between CPU kinds (Intel with AVX-512, AMD EPYC
with AVX2) at about 1e-8; :data:`FLOAT_TOLERANCE` allows 1e-6 (relative above 1).

A value decided by a model the run trains itself, or an optimisation it runs, from an
explainer's output (IteROAR's mask-leakage classifiers, 300 full-batch Adam steps on the
masks; BAM's neutral patches, 100 optimiser steps on f_s) is not one computation's float:
float32 training amplifies the last digits until they decide on which side of a near tie a
sample of its evaluation set falls.  Measured between an Intel Xeon and the AMD EPYC that
built the pack (the default run, every explainer): the leakage accuracies moved by up to 6
of their 200 decisions (IG's, the control's: near chance a classifier of masks is
chaotic), BAM's input-independence rate by up to 2 of 136; perturbing the classifier's
inputs by 1e-7 here moves 1 or 2 of 200.  So a value declared so may move by
:data:`DECISIONS_MOVED_SHARE` of its ``n`` decisions (at least one: 10 of IteROAR's 200
smoke images, 0.05).  A suite declares such a metric with the size of its evaluation set
(:attr:`~pytest_chaosmining.core.metrics.catalog.Metric.decisions`); a value computed here
and one computed elsewhere (the pack's) are compared within that, never exactly.  What
both sides read from the pack (a shipped model, a shipped result) is the same number on
every CPU.

A model trained here where the pack's was trained elsewhere scores within
:data:`FLOAT_TOLERANCE` on most values; a rank metric (FPrec) steps where two
attributions nearly tie, by at most :data:`RANK_STEP` on at most :data:`RANK_MOVED` of the
values (measured on the default run: 53 of 1,699 records beyond 1e-6, 3 by more than 0.02).
"""

from __future__ import annotations

import math

#: float agreement of one computation between CPU kinds (measured: about 1e-8)
FLOAT_TOLERANCE = 1e-6
#: the share of a run-trained model's decisions that may fall the other way on another CPU kind
#: (measured at most 6 of 200: 0.03)
DECISIONS_MOVED_SHARE = 0.05
#: the largest move of a retrained model's rank metric past :data:`FLOAT_TOLERANCE` (a near tie)
RANK_STEP = 0.05
#: the share of a retrained model's values that may move past :data:`FLOAT_TOLERANCE`
RANK_MOVED = 0.05


def decisions_moved(decisions: int) -> int:
    """How many of ``decisions`` may fall the other way on another CPU kind (at least one)."""
    return max(1, math.ceil(DECISIONS_MOVED_SHARE * decisions))


def allowed_move(value: float, decisions: int | None = None) -> float:
    """How far ``value`` may move on another CPU kind: :data:`FLOAT_TOLERANCE` (relative
    above 1), plus :func:`decisions_moved` of ``decisions`` (each worth ``1/decisions``)
    where a model trained or an optimisation run in the run decides it over an evaluation
    set of that size."""
    allowed = FLOAT_TOLERANCE * max(1.0, abs(value))
    return allowed + decisions_moved(decisions) / decisions if decisions else allowed


def agree(then: object, now: object, decisions: int | None = None) -> bool:
    """Whether two results of the same computation on two CPU kinds agree: floats within
    :func:`allowed_move` (NaN equal to NaN), anything else equal."""
    if isinstance(then, float) and isinstance(now, float):
        if math.isnan(then) or math.isnan(now):
            return math.isnan(then) and math.isnan(now)
        return abs(then - now) <= allowed_move(then, decisions)
    return then == now
