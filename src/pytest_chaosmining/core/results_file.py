"""Writing and reading a run's results.json, or saying in one line why a file is not one
(not JSON, another tool's JSON, another results format, its samples file missing): the
plugin's baseline, the recipe's scripts, ``chaosmining-compare``, the pull request's summary,
the annotate step and ``chaosmining-rebuild`` read through it.  Imports nothing heavy.

Format 3 keeps results.json small enough to read in a blink: its records grouped by test
(``tests``: the fields a test's records share, then one row per record), and their
per-sample fields (the maps' fingerprints and outlines, the per-sample values, the
classes explained: :data:`PER_SAMPLE`) in a gzip-compressed samples file beside it
(``results.samples.json.gz`` beside ``results.json``), which results.json names with the
digest of its bytes.  Only the readers that judge maps ask for it; one whose samples file is
missing or belongs to another run stops, naming it.  :func:`read_results` gives every
format as records in format 2's shape (one object per record)."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_chaosmining.core.records import RESULTS_FORMAT, strict_dumps
from pytest_chaosmining.core.storage.atomic import atomic_write, atomic_write_text

#: the fields a test's records share (format 3 writes them once per test)
TEST_FIELDS = ("suite", "model", "explainer", "case", "seed", "nodeid")
#: the fields of each record of a test (one row each)
ROW_FIELDS = ("metric", "value", "threshold", "passed", "expected", "measured")
#: the fields of a record kept in the samples file
PER_SAMPLE = ("maps", "samples", "labels")
#: the samples file's own format
SAMPLES_SCHEMA = 1


class NotAResultsFile(ValueError):
    """A file given as a chaosmining results.json is not one; the message names it and what is wrong."""


def samples_file(path: Path) -> Path:
    """The samples file beside the results.json at ``path`` (``X.json`` → ``X.samples.json.gz``)."""
    path = Path(path)
    return path.with_name(path.name.removesuffix(".gz").removesuffix(".json") + ".samples.json.gz")


def write_results(path: Path, payload: Mapping[str, object], records: Sequence[Mapping[str, object]]) -> list[str]:
    """Write ``payload`` (meta, outcomes, failures, counts) and ``records`` (one object per
    record, :meth:`~pytest_chaosmining.core.records.Record.to_dict`) as a format-3
    results.json at ``path`` and its samples file beside it; the paths written (the samples
    file first, so that a results.json never names one not yet written)."""
    path = Path(path)
    known = set(TEST_FIELDS) | set(ROW_FIELDS) | set(PER_SAMPLE)
    entries: dict[str, dict[str, object]] = {}
    tests: list[list[object]] = []
    last: list[object] | None = None
    for i, record in enumerate(records):
        extra = set(record) - known
        if extra:
            raise ValueError(f"a record field results.json has no place for: {sorted(extra)}")
        head = [record.get(k) for k in TEST_FIELDS]
        if head != last:
            tests.append([head, []])
            last = head
        rows = tests[-1][1]
        assert isinstance(rows, list)
        rows.append([record.get(k) for k in ROW_FIELDS])
        kept = {k: record[k] for k in PER_SAMPLE if record.get(k) is not None}
        if kept:
            entries[str(i)] = {"at": _entry_key(record), **kept}
    side = samples_file(path)
    data = gzip.compress(strict_dumps({"schema": SAMPLES_SCHEMA, "records": entries}).encode(), 6, mtime=0)
    atomic_write(side, lambda fh: fh.write(data))
    link = {"file": side.name, "sha256": hashlib.sha256(data).hexdigest(), "records": len(entries)}
    top = {
        **payload,
        "format": RESULTS_FORMAT,
        "fields": {"test": list(TEST_FIELDS), "row": list(ROW_FIELDS)},
        "samples": link,
    }
    parts = [f"{json.dumps(k)}: {strict_dumps(top[k], indent=1, sort_keys=True)}" for k in sorted(top)]
    lines = ",\n".join(strict_dumps(t, sort_keys=True, separators=(",", ":")) for t in tests)
    parts.append(f'"tests": [\n{lines}\n]')
    atomic_write_text(path, "{\n" + ",\n".join(parts) + "\n}\n")
    return [str(side), str(path)]


def read_results(path: Path, samples: bool = False) -> dict[str, Any]:
    """The payload of the results.json at ``path`` (or gzip-compressed ``.json.gz``): an
    object with a ``records`` list (one object per record) and a ``meta`` object, of this
    plugin's format or an older one (:class:`NotAResultsFile` else).  ``samples``: with
    each record's per-sample fields (format 3 reads them from its samples file)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile) as exc:
        raise NotAResultsFile(f"{path}: cannot be read ({type(exc).__name__}: {exc})") from None
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise NotAResultsFile(f"{path}: not JSON ({exc}): not a chaosmining results.json") from None
    if isinstance(payload, dict) and "records" not in payload and isinstance(payload.get("tests"), list):
        payload["records"] = _expanded(path, payload)
    if not isinstance(payload, dict) or not isinstance(payload.get("records"), list):
        kind = type(payload).__name__ if not isinstance(payload, dict) else f"keys {', '.join(sorted(payload)[:5])}"
        raise NotAResultsFile(
            f"{path}: JSON, but not a chaosmining results.json (no 'records' list; {kind}): another tool's file?"
        )
    if not isinstance(payload.get("meta", {}), dict):
        raise NotAResultsFile(f"{path}: a results.json whose 'meta' is not an object")
    made = payload.get("format", RESULTS_FORMAT)
    if not isinstance(made, int) or made > RESULTS_FORMAT:
        raise NotAResultsFile(
            f"{path}: results format {made!r}, newer than this plugin's {RESULTS_FORMAT}: upgrade pytest-chaosmining"
        )
    bad = next((i for i, r in enumerate(payload["records"]) if not isinstance(r, dict) or "suite" not in r), None)
    if bad is not None:
        raise NotAResultsFile(f"{path}: record {bad} is not a chaosmining result (no 'suite'): another tool's file?")
    if samples and isinstance(payload.get("samples"), dict):
        _merge_samples(path, payload)
    return payload


def copy_results(source: Path, target: Path) -> list[str]:
    """Copy the results.json at ``source`` and its samples file to ``target`` and the samples
    file beside it (a baseline is both); the paths written."""
    source, target = Path(source), Path(target)
    written = []
    if source.suffix != ".gz" and samples_file(source).exists():
        kept = samples_file(source).read_bytes()
        atomic_write(samples_file(target), lambda fh: fh.write(kept))
        written.append(str(samples_file(target)))
    data = source.read_bytes()
    atomic_write(target, lambda fh: fh.write(data))
    return [*written, str(target)]


def _entry_key(record: Mapping[str, object]) -> str:
    """What a samples file's entry says of its record (checked when the two are joined)."""
    return f"{record.get('nodeid')}|{record.get('metric')}"


def _expanded(path: Path, payload: dict[str, Any]) -> list[dict[str, object]]:
    """Format 3's ``tests`` as one object per record (the ``tests`` entry removed)."""
    found = payload.get("fields")
    fields: dict[str, Any] = found if isinstance(found, dict) else {}
    test_fields, row_fields = fields.get("test", TEST_FIELDS), fields.get("row", ROW_FIELDS)
    records: list[dict[str, object]] = []
    try:
        for head, rows in payload.pop("tests"):
            shared = dict(zip(test_fields, head, strict=True))
            case = shared.get("case")
            for row in rows:
                record = {**shared, **dict(zip(row_fields, row, strict=True))}
                if isinstance(case, dict):
                    record["case"] = dict(case)
                records.append(record)
    except (TypeError, ValueError) as exc:
        raise NotAResultsFile(f"{path}: a results.json whose 'tests' are not [fields, rows] pairs ({exc})") from None
    return records


def _merge_samples(path: Path, payload: dict[str, Any]) -> None:
    """Join the samples file results.json names to its records (:class:`NotAResultsFile`
    where it is missing, or is not the one results.json was written with)."""
    link, side = payload.pop("samples"), samples_file(path)
    try:
        data = side.read_bytes()
    except OSError:
        raise NotAResultsFile(
            f"{path}: its per-sample results {side.name} are missing beside it (the maps a baseline compares are "
            f"there): copy {link.get('file', side.name)} along with the results.json it belongs to"
        ) from None
    if hashlib.sha256(data).hexdigest() != link.get("sha256"):
        raise NotAResultsFile(
            f"{path}: {side} belongs to another run than this results.json (its digest differs): copy the two together"
        )
    try:
        body = json.loads(gzip.decompress(data))
    except (ValueError, EOFError, OSError) as exc:
        raise NotAResultsFile(f"{side}: not a samples file ({type(exc).__name__}: {exc})") from None
    if not isinstance(body, dict) or not isinstance(body.get("schema"), int) or body["schema"] > SAMPLES_SCHEMA:
        raise NotAResultsFile(f"{side}: samples schema {body.get('schema')!r}, newer than this plugin's: upgrade it")
    records = payload["records"]
    for index, entry in body.get("records", {}).items():
        i = int(index)
        if i >= len(records) or entry.get("at") != _entry_key(records[i]):
            raise NotAResultsFile(f"{side}: entry {index} is not record {index} of {path} (edited apart?)")
        records[i].update({k: v for k, v in entry.items() if k in PER_SAMPLE})
