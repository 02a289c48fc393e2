"""Where a regression sits: the explained samples a check found changed, named by the
class each was explained for, so that a bug on some inputs reads as such ("all in class
5: 3 of its 3 samples; the other 9 classes untouched") -- only where the evidence holds
it: several changed samples, most of them in the class named, most of its samples changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

#: the fewest changed samples of one class a class hint rests on (one sample is no class's change)
HINT_SAMPLES = 2


def in_classes(changed: Sequence[int], labels: Sequence[int] | None) -> str:
    """The class the ``changed`` samples (indices into ``labels``, each explained sample's
    class) sit in, with how many of its samples changed, where one class holds the change:
    at least :data:`HINT_SAMPLES` of them, more than half of the changed samples and more
    than half of its own; else empty (no classes, nothing changed, or a change that is no
    class's: a hint drawn from a sample or two misleads)."""
    if not labels or not changed:
        return ""
    known = [i for i in changed if 0 <= i < len(labels)]
    if not known:
        return ""
    per_class, hit = Counter(labels), Counter(labels[i] for i in known)
    top = min(hit, key=lambda c: (-hit[c], -hit[c] / per_class[c], c))
    if hit[top] < HINT_SAMPLES or 2 * hit[top] <= len(known) or 2 * hit[top] <= per_class[top]:
        return ""
    untouched = len(per_class) - len(hit)
    rest = f"; the other {untouched} classes untouched" if untouched else "; every class touched"
    if len(hit) == 1:
        return f"all in class {top}: {hit[top]} of its {per_class[top]} samples{rest}"
    share = f"{hit[top]} of its {per_class[top]} samples, {hit[top]} of the {len(known)} changed"
    return f"mostly in class {top}: {share}{rest}"
