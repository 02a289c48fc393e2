"""Result records: one measured value of one (suite, model, explainer, case, seed).

A record's ``case`` holds the fields of the case it was measured on (the noise
condition among them). Results written before version 2 named it ``condition``;
:meth:`Record.from_dict` reads both."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: a case field's value (JSON scalars)
CaseValue = str | int | float | bool | None

#: results.json's format: 3 groups the records by test and keeps their per-sample fields in a
#: samples file beside it (:mod:`pytest_chaosmining.core.results_file`); 2 names a record's case
#: fields ``case`` (1: ``condition``)
RESULTS_FORMAT = 3
USER_PROPERTY = "chaosmining_record"
MODEL_LEVEL = "-"  # explainer column of model-level records (prediction quality)
OUTCOME_PROPERTY = "chaosmining_test"
#: a test's note that a result changed against the baseline within what harmless changes do
CHANGED_PROPERTY = "chaosmining_changed"
#: the user property of a check failed as a known defect of the explainer's library makes it fail
KNOWN_DEFECT_PROPERTY = "chaosmining_known_defect"
#: the user property of a baseline result this run did not judge again: its records, as JSON
MISSING_PROPERTY = "chaosmining_missing"
#: the user property of an explainer's work on a model that grew against the baseline: its suite and explainer
COST_PROPERTY = "chaosmining_cost"
#: a shipped test's suite and explainer, set at collection (names a test that failed before it tagged itself)
SHIPPED_TEST_PROPERTY = "chaosmining_shipped_test"
#: a suite's result entry of each explained sample's class (the target it was explained for)
TARGETS = "targets"
#: a result entry of where the explainer's own noise showed (``seed``, ``twins``; ``none``: deterministic)
NOISE_SOURCE = "noise_source"
#: the metric of a record that keeps a fingerprint of an explainer's maps (its value: the samples kept)
FINGERPRINT = "fingerprint"
#: the metric of a record that keeps an outline of every explained sample's map (its value: the samples)
OUTLINE = "outline"
#: the metrics of the records that keep maps (:data:`FINGERPRINT`, :data:`OUTLINE`)
MAP_METRICS = (FINGERPRINT, OUTLINE)
#: the metrics of a declared sampler's own noise on a case (:class:`~pytest_chaosmining.core.metrics.drift.DrawNoise`'s
#: fields), recorded beside its fingerprint so that a later run's drift allowance can be the stricter of the two runs'
NOISE_METRICS = {
    "mean": "noise_agreement",
    "sample": "noise_sample_agreement",
    "outlines": "noise_outline_change",
    "signs": "noise_sign_share",
}


@dataclass
class Record:
    """One measured value; ``threshold``/``passed`` are set when a test asserts it."""

    suite: str
    model: str
    explainer: str
    seed: int
    metric: str
    value: float
    case: dict[str, CaseValue] = field(default_factory=dict)
    threshold: float | None = None
    passed: bool | None = None
    nodeid: str = ""
    #: a fingerprint of the explainer's maps (metric :data:`FINGERPRINT`: the stored
    #: :class:`~pytest_chaosmining.core.metrics.fingerprints.Fingerprint`, a list of rows
    #: in an older results.json) or an outline's rows (metric :data:`OUTLINE`), else None
    maps: list[list[float]] | dict[str, object] | None = None
    #: the per-sample values whose mean ``value`` is (an image's IoU, a clip's hit), where the
    #: suite keeps them: a baseline judges a drop as a paired difference against their spread
    samples: list[float] | None = None
    #: the known library defect this check failed as expected (``passed`` is False; not the
    #: explainer's regression: :mod:`pytest_chaosmining.explainers.limitations`), else None
    expected: str | None = None
    #: of a time or memory: True where this run measured it, False where it was replayed with a
    #: result reused from the pack or the derived-results cache (None: not recorded, as before
    #: version 0.9's results); a replayed cost is never gated against a measured one
    measured: bool | None = None
    #: the class each explained sample was explained for (its target), aligned with
    #: ``samples`` and an outline's or fingerprint's rows, where the suite's models classify
    labels: list[int] | None = None

    def key(self) -> tuple[str | int, ...]:
        """Identity of a result across runs (for baselines and sorting)."""
        return (
            self.suite,
            self.model,
            self.explainer,
            json.dumps(self.case, sort_keys=True),
            self.seed,
            self.metric,
        )

    def flat(self) -> dict[str, object]:
        """A table row: the scalar fields with the case fields beside them (no map fingerprint, no samples)."""
        dropped = ("case", "maps", "samples", "labels")
        return {**{k: v for k, v in self.to_dict().items() if k not in dropped}, **self.case}

    def to_dict(self) -> dict[str, object]:
        """The record as JSON-serialisable fields (its case a copy; its maps and samples its own)."""
        return {**{f: getattr(self, f) for f in self.__dataclass_fields__}, "case": dict(self.case)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Record:
        """The record :meth:`to_dict` wrote (unknown fields ignored; a ``condition``
        field of results before version 2 is read as ``case``)."""
        data = {**data, "case": case_of(data)}
        if data.get("value", 0.0) is None:  # results.json is strict JSON: null for a number not measured
            data["value"] = math.nan
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})  # type: ignore[arg-type]


def strict_json(value: object) -> object:
    """``value`` with every non-finite float (NaN: not measured, such as a correlation
    of a constant; ±inf) as None, so that it serialises as strict JSON (``null``)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


def strict_dumps(value: object, **options: object) -> str:
    """``value`` as strict JSON (:func:`strict_json`'s nulls for non-finite floats), at
    :func:`json.dumps`'s speed where it holds none."""
    try:
        return json.dumps(value, allow_nan=False, **options)  # type: ignore[arg-type]
    except ValueError:
        return json.dumps(strict_json(value), allow_nan=False, **options)  # type: ignore[arg-type]


def case_of(data: Mapping[str, object]) -> dict[str, CaseValue]:
    """The case fields of a record as results.json holds it, in either format."""
    fields = data.get("case", data.get("condition", {}))
    return dict(fields) if isinstance(fields, Mapping) else {}


def human_facing(records: list[Record]) -> list[Record]:
    """``records`` without the fingerprints and outlines of maps (kept in results.json's
    samples file, shown nowhere else), whether or not their maps were read."""
    return [r for r in records if r.maps is None and r.metric not in MAP_METRICS]


def shared_keys(records: list[Record]) -> dict[tuple[str | int, ...], list[str]]:
    """Judged results of different tests with one :meth:`Record.key` (suite, model,
    explainer, case, seed, metric): key → the tests' node ids.  A baseline holds one
    result per key, so it cannot tell such tests apart."""
    tests: dict[tuple[str | int, ...], set[str]] = {}
    for r in records:
        if r.threshold is not None:
            tests.setdefault(r.key(), set()).add(r.nodeid)
    return {key: sorted(ids) for key, ids in tests.items() if len(ids) > 1}


def sort_records(records: list[Record]) -> list[Record]:
    """Deterministic order, independent of which worker ran what."""
    return sorted(records, key=lambda r: tuple(str(p) for p in r.key()))


def parameter_id(nodeid: str) -> str | None:
    """The parameter id of a test's node id (between its first ``[`` and last ``]``), if any."""
    start, end = nodeid.find("["), nodeid.rfind("]")
    return nodeid[start + 1 : end] if 0 <= start < end else None


#: makes a record of one metric's value (``record(metric, value)``) for a test's case and explainer
Recorder = Callable[[str, float], Record]
