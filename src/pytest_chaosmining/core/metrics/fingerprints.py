"""A fingerprint of an explainer's maps: each feature's |attribution| mass and signed sum, for
every explained sample, stored compactly in results.json.

Each array is kept as float16 after dividing every row by its largest |value| (the row's
scale, float32 beside it), base64-encoded (not compressed: a file of many, xz-compressed
whole, shrinks four times more than each compressed alone): a relative precision of
about 5e-4 per value, so a cosine of two fingerprints is exact to about 1e-7 (the drift
bars lie at 0.9 and beyond) and two runs of the same maps store the same bytes.  Where
every value is its own feature (a tabular row) the masses are the signed sums' absolute
values and only these are kept.  An older results.json (before the signed fingerprints)
kept a list of the masses of the first 32 samples: :meth:`Fingerprint.read` reads both
(its signs: none).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pytest_chaosmining.core.metrics.attribution import feature_sums

#: a stored fingerprint: the arrays as text (this version), or the masses as lists (an older results.json)
StoredFingerprint = Mapping[str, object] | Sequence[Sequence[float]]


def pack(rows: np.ndarray) -> str:
    """``rows`` (samples × features) as text: per-row float32 scales and float16 values, base64."""
    rows = np.asarray(rows, dtype=np.float64)
    scale = np.abs(rows).max(axis=1, initial=0.0)
    safe = np.where(scale > 0, scale, 1.0)
    values = (rows / safe[:, None]).astype(np.float16)
    return base64.b64encode(scale.astype(np.float32).tobytes() + values.tobytes()).decode("ascii")


def unpack(text: str, samples: int, features: int) -> np.ndarray:
    """The array :func:`pack` stored (float64, samples × features)."""
    raw = base64.b64decode(text)
    scale = np.frombuffer(raw[: 4 * samples], dtype=np.float32).astype(np.float64)
    values = np.frombuffer(raw[4 * samples :], dtype=np.float16).astype(np.float64).reshape(samples, features)
    return values * scale[:, None]


@dataclass(frozen=True)
class Fingerprint:
    """Each explained sample's |attribution| mass per feature (``mass``) and signed sum per
    feature (``signed``: None where an older run kept no signs)."""

    mass: np.ndarray
    signed: np.ndarray | None

    @property
    def samples(self) -> int:
        """How many explained samples it keeps."""
        return len(self.mass)

    def rows(self, index: Sequence[int]) -> Fingerprint:
        """The fingerprint of the samples ``index`` alone."""
        chosen = np.asarray(index, dtype=np.int64)
        return Fingerprint(self.mass[chosen], None if self.signed is None else self.signed[chosen])

    def stored(self) -> dict[str, object]:
        """As results.json keeps it (:meth:`read` reads it back)."""
        n, f = self.mass.shape
        out: dict[str, object] = {"samples": int(n), "features": int(f)}
        if self.signed is not None and np.array_equal(np.abs(self.signed), self.mass):
            out["signed"] = pack(self.signed)  # every value its own feature: the masses are |signed|
            return out
        out["mass"] = pack(self.mass)
        if self.signed is not None:
            out["signed"] = pack(self.signed)
        return out

    @classmethod
    def read(cls, stored: StoredFingerprint) -> Fingerprint:
        """The fingerprint :meth:`stored` wrote, or an older run's list of masses (no signs)."""
        if isinstance(stored, Mapping):
            n, f = int(stored["samples"]), int(stored["features"])  # type: ignore[call-overload]
            signed = unpack(str(stored["signed"]), n, f) if "signed" in stored else None
            if "mass" in stored:
                return cls(unpack(str(stored["mass"]), n, f), signed)
            if signed is None:
                raise ValueError("a stored fingerprint keeps its masses, its signed sums or both")
            return cls(np.abs(signed), signed)
        mass = np.asarray(stored, dtype=np.float64)
        return cls(mass.reshape(len(mass), -1) if mass.size else mass.reshape(0, 0), None)


def fingerprint_of(attr: np.ndarray, feature_mask: np.ndarray | None = None) -> Fingerprint:
    """The :class:`Fingerprint` of every sample of ``attr`` (``feature_mask``: integer
    feature ids broadcastable to one sample's map; None: every value its own feature)."""
    values = np.asarray(attr, dtype=np.float64)
    return Fingerprint(feature_sums(np.abs(values), feature_mask), feature_sums(values, feature_mask))
