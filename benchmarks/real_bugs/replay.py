"""Replay the corpus of real bugs (corpus.toml) through the suites, as a library's CI would.

For each entry: the good release's run is the baseline, the bad release the change.
Both releases are installed once, outside the project's environment (``pip install
--no-deps --target``, in the replay's cache), and put first on ``PYTHONPATH`` of a
``pytest --chaosmining`` run of the suites and explainers the entry names.  Three runs
per entry, each from the same model cache:

1. the good release, its results recomputed (``--chaosmining-builtin-results recompute``):
   the baseline, and what the bars say of the good release;
2. the bad release against that baseline, recomputed (costs measured in both runs, never
   replayed from the pack: a replayed cost is not a measurement of this release);
3. the bad release without a baseline, recomputed: what the bars say alone.

A test counts as caught by the bars alone where it fails in run 3 and passed in run 1;
caught against the baseline where it fails in run 2 by a baseline rule (map drift, a
score's drop, cost, a result gone), whatever run 1's bars said of it: the rule compares
the two releases.  A test the good release fails on its own is listed with the entry.
Controls (``control = true``): pairs with no relevant change, and the same release twice;
any failure there is a false alarm and is reported as one.

    python benchmarks/real_bugs/replay.py                 # every entry; committed runs are kept
    python benchmarks/real_bugs/replay.py captum-dl-maxpool-before-relu --again
    python benchmarks/real_bugs/replay.py --table         # docs/real_bugs.md from runs/*.json

Each entry's outcome is written to ``runs/<id>.json`` as it finishes (resumable: an entry
whose file exists for this plugin source is skipped unless ``--again``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "corpus.toml"
RUNS = HERE / "runs"
TABLE = ROOT / "docs" / "real_bugs.md"

CONFTEST = '''\
"""Written by benchmarks/real_bugs/replay.py: registers the corpus entry's library methods."""
import json
import os
import sys

import pytest

sys.path.insert(0, {here!r})


@pytest.hookimpl(optionalhook=True)
def pytest_chaosmining_explainers(config):
    spec = json.loads(os.environ["CHAOSMINING_REPLAY"])
    from explainers import METHODS, WRAPPERS

    from pytest_chaosmining.explainers import Explainer

    made = {{}}
    for name in spec["register"]:
        make = METHODS[name]
        method = WRAPPERS[spec["wrapper"]](make) if spec["wrapper"] and spec["side"] == "bad" else make()
        made[name] = Explainer(name=name, method=method, **spec["declares"])
    return made
'''


@dataclass(frozen=True)
class Entry:
    """One corpus entry, as the replay needs it."""

    id: str
    library: str
    reference: str
    effect: str
    reproduction: str
    suites: tuple[str, ...]
    explainers: tuple[str, ...]
    bad: str
    good: str
    pattern: str
    covered: bool
    not_covered_why: str
    wrapper: str
    control: bool
    raw: dict = field(hash=False, compare=False)

    @property
    def register(self) -> list[str]:
        """The explainers the run registers through the replay's conftest (not built-ins)."""
        from explainers import METHODS

        return [name for name in self.explainers if name in METHODS]


def load_corpus(path: Path = CORPUS) -> list[Entry]:
    """The corpus's entries, in file order."""
    data = tomllib.loads(path.read_text())
    entries = []
    for raw in data["bug"]:
        entries.append(
            Entry(
                id=raw["id"],
                library=raw["library"],
                reference=raw["reference"],
                effect=raw["effect"],
                reproduction=raw["reproduction"],
                suites=tuple(raw.get("suites", ())),
                explainers=tuple(raw.get("explainers", ())),
                bad=raw.get("bad", ""),
                good=raw.get("good", ""),
                pattern=raw["pattern"],
                covered=bool(raw.get("covered", True)),
                not_covered_why=raw.get("not_covered_why", ""),
                wrapper=raw.get("wrapper", ""),
                control=bool(raw.get("control", False)),
                raw=raw,
            )
        )
    return entries


def cache_root() -> Path:
    """Where releases and runs are kept: the plugin's user cache, ``real-bugs/`` in it."""
    import platformdirs

    root = Path(os.environ.get("CHAOSMINING_REPLAY_CACHE") or platformdirs.user_cache_dir("pytest-chaosmining"))
    return root / "real-bugs"


def plugin_source_key() -> str:
    """A digest of what a run's outcome depends on: the plugin's source (every .py and .toml
    under src/), the code that makes and registers the runs (explainers.py, the conftest,
    :func:`run_suites`, :func:`cached_run`, the release installers) and the stack (Python,
    torch, numpy and the libraries' installed releases).  The verdict and table code is left
    out: a change there reclassifies the runs, it does not redo them."""
    import inspect
    from importlib import metadata

    digest = hashlib.sha256(sys.version.encode())
    for name in ("torch", "numpy", "captum", "zennit", "grad-cam", "torchcam", "shap"):  # the stack under the runs
        try:
            digest.update(f"{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} absent".encode())
    for path in sorted((ROOT / "src" / "pytest_chaosmining").rglob("*")):
        if path.suffix in {".py", ".toml"} and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    digest.update((HERE / "explainers.py").read_bytes())
    digest.update(CONFTEST.encode())
    for function in (run_suites, cached_run, release, release_env):
        digest.update(inspect.getsource(function).encode())
    return digest.hexdigest()[:16]


def release(spec: str) -> Path | None:
    """The folder a release is installed in (installed on first use, atomically), or None
    for the environment's own (``spec`` empty or ``"installed"``)."""
    if spec in ("", "installed"):
        return None
    target = cache_root() / "releases" / re.sub(r"[^A-Za-z0-9_.=-]", "_", spec)
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".staging-"))
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(staging), spec]
    try:
        subprocess.run(cmd, check=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def release_env(spec: str) -> dict[str, str]:
    """This process's environment with ``spec``'s release (:func:`release`) first on ``PYTHONPATH``."""
    where = release(spec)
    paths = (str(where) if where else "", os.environ.get("PYTHONPATH", ""))
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def run_suites(entry: Entry, side: str, spec: str, out: Path, baseline: Path | None, recompute: bool) -> dict:
    """One ``pytest --chaosmining`` run with ``spec`` first on the path; its exit code,
    time and failures (from results.json)."""
    work = out.parent / f"{out.name}-work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "conftest.py").write_text(CONFTEST.format(here=str(HERE)))
    env = release_env(spec)
    env["CHAOSMINING_REPLAY"] = json.dumps(
        {"register": entry.register, "wrapper": entry.wrapper, "side": side, "declares": entry.raw.get("declares", {})}
    )
    report = out / "report"
    shutil.rmtree(report, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "pytest", "--chaosmining", "-p", "no:cacheprovider", "-q", "-n", "2",
        "--dist", "loadgroup", f"--chaosmining-suites={','.join(entry.suites)}",
        f"--chaosmining-explainers={','.join(entry.explainers)}", f"--chaosmining-report={report}",
        f"--chaosmining-cache={cache_root() / 'models'}",
        f"--chaosmining-builtin-results={'recompute' if recompute else 'reuse'}",
        "--chaosmining-known-defects=none",  # as the day the bug shipped: no defect of it was known yet
    ]  # fmt: skip
    if baseline is not None:
        cmd.append(f"--chaosmining-baseline={baseline}")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    (out / "output.txt").write_text(proc.stdout + proc.stderr)
    results = report / "results.json"
    if not results.exists():
        return {"exit": proc.returncode, "seconds": seconds, "failures": {}, "crashed": proc.stdout[-2000:]}
    data = json.loads(results.read_text())
    outcomes: dict[str, int] = {}
    for key, n in data["outcomes"].items():
        kind = key.rsplit("|", 1)[-1]
        outcomes[kind] = outcomes.get(kind, 0) + n
    return {
        "exit": proc.returncode,
        "seconds": round(seconds, 1),
        "outcomes": outcomes,
        "failures": {f["nodeid"]: f["message"] for f in data["failures"]},
        "versions": data["meta"].get("versions", {}),
        "results": str(results),
    }


#: the metrics whose "regressed" is a cost's
COSTS = {"cpu_ms", "peak_mem_mb", "time_ms"}


#: a failure by an error of the registration or its adapter on this release (an API it lacks), not of the method
REGISTRATION_ERROR = re.compile(
    r"raised (AttributeError|ImportError|ModuleNotFoundError|TypeError: .*(context manager protocol|"
    r"unexpected keyword argument|positional argument|not callable))"
)


def registration_error(message: str) -> bool:
    """Whether a failure is an error of the replay's registration (the release lacks an API
    the registration or the adapter uses): an error of the replay, never a catch."""
    return REGISTRATION_ERROR.search(message) is not None


def shows_effect(entry: Entry, message: str) -> bool:
    """Whether a failure shows the entry's reported effect: a raise where it raises (naming
    ``raises_match`` where the corpus gives it), a wrong map without one where it is silent."""
    if registration_error(message):
        return False
    raised = "raised" in message.splitlines()[0] if message else False
    if entry.effect == "raises":
        pattern = entry.raw.get("raises_match")
        return raised and (pattern is None or re.search(str(pattern), message) is not None)
    return not raised


def rules_of(message: str) -> list[str]:
    """The baseline rules a failure's message names (its checks' messages are joined), or
    ``["bar"]`` where it names none."""
    found = []
    if "the size of its maps moved from the baseline" in message:
        found.append("map size")
    if any(f"moved from the baseline's {how}" in message for how in ("(mean cosine", "beyond")):
        found.append("map drift")
    regressed = set(re.findall(r"(\w+) regressed:", message))
    if regressed & COSTS:
        found.append("cost")
    if regressed - COSTS:
        found.append("score drop")
    if "baseline" in message and ("missing" in message or "not in this run" in message):
        found.append("missing result")
    return found or ["bar"]


def cached_run(entry: Entry, side: str, spec: str, key: str, baseline: Path | None, recompute: bool) -> dict:
    """:func:`run_suites`, once per plugin source and run: entries that replay the same
    release pair on the same suites share their runs."""
    what = {
        "side": side, "spec": spec, "suites": entry.suites, "explainers": entry.explainers, "wrapper": entry.wrapper,
        "declares": entry.raw.get("declares", {}), "recompute": recompute,
        "baseline": hashlib.sha256(baseline.read_bytes()).hexdigest() if baseline else None,
    }  # fmt: skip
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]
    out = cache_root() / "runs" / key / digest
    summary = out / "summary.json"
    if summary.exists():
        return json.loads(summary.read_text())
    found = run_suites(entry, side, spec, out, baseline, recompute)
    out.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps(found))
    return found


def replay_unfixed(entry: Entry, key: str) -> dict:
    """An entry no release has fixed: the bad release's run alone, caught by the bars where
    a test fails with a message that cites the entry's report (a module-pattern check names
    the bugs its network reproduces)."""
    alone = cached_run(entry, "bad", entry.bad, key, None, recompute=True)
    if "results" not in alone:
        why = f"the bad release's run wrote no results (exit {alone['exit']})"
        return {"id": entry.id, "verdict": "error", "why": why, "plugin_source": key}
    bars = sorted(
        n for n, message in alone["failures"].items() if entry.reference in message and not registration_error(message)
    )
    return {
        "id": entry.id,
        "verdict": "caught by the bars alone" if bars else "missed",
        "shows_effect": sorted(n for n in bars if shows_effect(entry, alone["failures"][n])),
        "bars_alone": bars,
        "against_baseline": [],
        "rules": [],
        "raised": [n for n in bars if "raised" in alone["failures"][n]],
        "cites_report": len(bars),
        "messages": {n: alone["failures"][n][:600] for n in bars},
        "bad": {k: v for k, v in alone.items() if k not in ("failures", "results")},
        "bad_alone_seconds": alone["seconds"],
        "good_fails_alone": [],
        "plugin_source": key,
    }


def replay(entry: Entry, key: str) -> dict:
    """The three runs of one entry and what they caught (one where no release has the fix)."""
    if not entry.good:
        return replay_unfixed(entry, key)
    good = cached_run(entry, "good", entry.good, key, None, recompute=True)
    if "results" not in good:
        why = f"the good release's run wrote no results (exit {good['exit']})"
        return {"id": entry.id, "verdict": "error", "why": why, "plugin_source": key}
    changed = cached_run(entry, "bad", entry.bad, key, Path(good["results"]), recompute=True)
    alone = cached_run(entry, "bad", entry.bad, key, None, recompute=True)
    for run, what in ((changed, "against the baseline"), (alone, "alone")):
        if "results" not in run:
            why = f"the bad release's run {what} wrote no results (exit {run['exit']})"
            return {"id": entry.id, "verdict": "error", "why": why, "plugin_source": key}
    # a test the bars fail in the bad release's run alone and pass in the good release's, or
    # whose failure alone newly cites the entry's report (a module-pattern check names the
    # reports its network reproduces: one test holds every pattern's check)
    bars = sorted(
        n
        for n, message in alone["failures"].items()
        if n not in good["failures"]
        or (not entry.control and entry.reference in message and entry.reference not in good["failures"][n])
    )
    # a test failing against the baseline by a baseline rule (whatever the good release's bars
    # said of it: the rule compares the two releases); a result gone because its test failed
    # in the bad run is that failure, not a second finding
    prefix = "chaosmining-baseline::"
    against = sorted(
        n
        for n, message in changed["failures"].items()
        if n not in bars
        and rules_of(message) != ["bar"]
        and not (n.startswith(prefix) and n.removeprefix(prefix) in changed["failures"])
    )
    rules = sorted({rule for n in against for rule in rules_of(changed["failures"][n])})
    message = {n: alone["failures"].get(n) or changed["failures"].get(n, "") for n in bars + against}
    raised = [n for n in bars + against if "raised" in message[n]]
    registration = sorted(n for n in bars + against if registration_error(message[n]))
    effect = sorted(n for n in bars + against if shows_effect(entry, message[n]))
    if entry.control:
        verdict = "false alarm" if bars or against else "quiet"
    elif (bars or against) and len(registration) == len(bars) + len(against):
        verdict = "error"  # every failure is the registration's: the replay did not exercise the method
    elif (bars or against) and not effect:
        verdict = "failed, not by the reported effect"  # another defect of the release: not this bug's catch
    elif bars:
        verdict = "caught by the bars alone"
    elif against:
        verdict = "caught against the baseline"
    else:
        verdict = "missed"
    first = message[registration[0]].splitlines()[0] if registration else ""
    return {
        "id": entry.id,
        "verdict": verdict,
        "why": f"every failure is an error of the registration on this release: {first}" if verdict == "error" else "",
        "bars_alone": bars,
        "against_baseline": against,
        "rules": rules,
        "raised": raised,
        "registration_errors": registration,
        "shows_effect": effect,
        "cites_report": sum(
            _cites(entry, alone["failures"].get(n) or changed["failures"].get(n, "")) for n in bars + against
        ),
        "messages": {n: (alone["failures"].get(n) or changed["failures"].get(n, ""))[:600] for n in bars + against},
        "good": {k: v for k, v in good.items() if k not in ("failures", "results")} | {"failed": len(good["failures"])},
        "bad": {k: v for k, v in changed.items() if k not in ("failures", "results")},
        "bad_alone_seconds": alone["seconds"],
        "good_fails_alone": sorted(good["failures"]),
        "plugin_source": key,
    }


def _cites(entry: Entry, message: str) -> bool:
    """Whether a failure's message cites the entry's report (the module-pattern checks name the
    reports their network reproduces)."""
    return entry.reference in message


def table(entries: list[Entry]) -> str:
    """docs/real_bugs.md: the corpus and each entry's committed replay."""
    rows, counts = [], {}
    for entry in entries:
        path = RUNS / f"{entry.id}.json"
        run = json.loads(path.read_text()) if path.exists() else None
        verdict = run["verdict"] if run else "not replayed"
        if not entry.covered:
            verdict = f"{verdict} (pattern not covered)" if run else "missed: pattern not covered"
        counts[verdict] = counts.get(verdict, 0) + 1
        how = ""
        if run and run.get("bars_alone"):
            how = f"{len(run['bars_alone'])} test(s) fail by their bars"
        if run and run.get("against_baseline"):
            how += (
                "; " if how else ""
            ) + f"{len(run['against_baseline'])} more against the baseline ({', '.join(run['rules'])})"
        if run and run.get("good_fails_alone"):
            how += ("; " if how else "") + f"the good release fails {len(run['good_fails_alone'])} of its tests alone"
        if run and "shows_effect" in run and (run.get("bars_alone") or run.get("against_baseline")):
            shown = len(run["shows_effect"])
            how += "; " + (
                f"{shown} show the reported effect ({entry.effect})"
                if shown
                else f"**none shows the reported effect ({entry.effect})**"
            )
        if run and entry.raw.get("not_reproduced"):
            how += ("; " if how else "") + f"not reproduced: {entry.raw['not_reproduced']}"
        if run and "cites_report" in run and entry.effect == "raises":
            cited = run["cites_report"]
            how += "; " + (f"{cited} of the failures cite the report" if cited else "no failure cites the report")
        if verdict.startswith("missed") or verdict.endswith("(pattern not covered)"):
            why = entry.not_covered_why or entry.raw.get("missed_why", "")
            how = "; ".join(x for x in (why, how) if x) or "no test moved"
        if verdict == "error":
            how = run["why"]
        if verdict == "quiet":
            how = "nothing flagged"
        pair = (
            f"`{entry.bad}` against `{entry.good}`"
            if entry.reproduction == "release_pair"
            else f"`{entry.bad}` alone (no release has the fix)"
            if entry.reproduction == "unfixed"
            else f"wrapper `{entry.wrapper}`"
        )
        cells = (entry.id, entry.reference, entry.pattern, entry.effect, pair)
        cells += (f"{', '.join(entry.suites)} / {', '.join(entry.explainers)}", f"**{verdict}**", how)
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    head = (
        "| entry | reported | where it lives | effect | replayed as | suites / explainers | verdict | how |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    return f"{len(entries)} entries: {summary}.\n\n{head}\n" + "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ids", nargs="*", help="entries to replay (default: all)")
    parser.add_argument("--again", action="store_true", help="replay even where runs/<id>.json exists")
    parser.add_argument("--table", action="store_true", help="only write the table from runs/*.json")
    parser.add_argument("--all", action="store_true", help="also replay the entries whose pattern no suite covers")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    entries = load_corpus()
    if not args.table:
        key = plugin_source_key()
        RUNS.mkdir(exist_ok=True)
        for entry in entries:
            if args.ids and entry.id not in args.ids:
                continue
            path = RUNS / f"{entry.id}.json"
            if path.exists() and not args.again and json.loads(path.read_text()).get("plugin_source") == key:
                continue
            if not entry.covered and not args.all:  # a miss by construction: the table names why
                continue
            print(f"replay {entry.id}: {entry.bad or entry.wrapper} against {entry.good} ...", flush=True)
            outcome = replay(entry, key)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(outcome, indent=1, sort_keys=True) + "\n")
            tmp.replace(path)
            print(f"  {outcome['verdict']}", flush=True)
    text = TABLE.read_text() if TABLE.exists() else ""
    marker = "<!-- replay table -->"
    body = table(entries)
    if marker in text:
        start = text.index(marker) + len(marker)
        end = text.index(marker, start)
        text = text[:start] + "\n" + body + text[end:]
        TABLE.write_text(text)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
