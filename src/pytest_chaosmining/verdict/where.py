"""Where a regression sits: the explained samples a check found changed, named by the
class each was explained for, so that a bug on some inputs reads as such ("all in class
5: 3 of its 3 samples; the other 9 classes untouched")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def in_classes(changed: Sequence[int], labels: Sequence[int] | None, most: int = 4) -> str:
    """The classes of the ``changed`` samples (indices into ``labels``, each explained
    sample's class), each with how many of its samples changed; empty where the samples
    have no classes or nothing changed."""
    if not labels or not changed:
        return ""
    known = [i for i in changed if 0 <= i < len(labels)]
    if not known:
        return ""
    per_class = Counter(labels)
    hit = Counter(labels[i] for i in known)
    ranked = sorted(hit, key=lambda c: (-hit[c] / per_class[c], -hit[c], c))
    shown = ", ".join(f"class {c}: {hit[c]} of its {per_class[c]}" for c in ranked[:most])
    if len(ranked) > most:
        shown += f" and {len(ranked) - most} more classes"
    untouched = len(per_class) - len(hit)
    lead = "all in " if len(hit) == 1 else "in "
    rest = f"; the other {untouched} classes untouched" if untouched else "; every class touched"
    return f"{lead}{shown}{rest}"
