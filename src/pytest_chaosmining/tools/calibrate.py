"""Bars with a stated false-fail rate: ``python -m pytest_chaosmining.tools.calibrate``.

Procedure (the one the shipped smoke bars were made with; ``benchmarks/calibration/``):

1. Run the tier on calibration seeds it never judges (the tier runs 0..N-1)::

       benchmarks/calibration/run.sh smoke symbolic 100-111 SA,DL,IG,FA,random cal.json

2. Run it again on further unseen seeds, with the reference cheats
   (:mod:`pytest_chaosmining.explainers.cheats`) beside the built-ins::

       benchmarks/calibration/run.sh smoke symbolic 200-209 SA,...,random,input_magnitude,... held.json

3. ``python -m pytest_chaosmining.tools.calibrate cal.json --held-out held.json \\
   --merge thresholds.toml --report cal.md``
   (``benchmarks/calibration/merge.py`` runs it for every suite as ``plan.toml`` there says the
   shipped bars were made: each round's held-out seeds joined the calibration seeds of the next,
   checked on seeds never used before).  ``--cross-validate`` adds a leave-one-seed-out check of
   the rule on the calibration runs; ``--coverage`` sets p below.

For every judged metric, bar key (formula, condition, model-condition,
dataset, chain) and built-in explainer, the m calibration seeds' values give
the mean x̄ and standard deviation s (floored at ``SD_FLOOR``: a metric at its
ceiling on every calibration seed is not exact on the next); the bar is the
one-sided normal tolerance bound x̄ − k·s that covers a proportion p (0.995 unless
``--coverage`` says otherwise) of future seeds with confidence γ = 0.90 (``../shared/CALIBRATION.md``), rounded
down to 0.01.  The predicted false-fail rate of a bar b is Φ((b − x̄)/s).  The
shared bar of a key (for explainers without their own: user explainers) is the
weakest of the paper's four built-ins (SA, DL, IG, FA), none where any of theirs was refused.
Where the random control's upper tolerance bound
x̄_r + k·s_r reaches x̄ − k·s, the bar is raised to just above the control's
bound if its predicted false-fail rate stays at most ``TARGET_RATE`` (1 in
200), and refused otherwise (written ``-inf``: reported, not judged; the
metric cannot tell that explainer from noise there).

The held-out check re-judges every judged test of the held-out runs against the
new bars and counts failures of the built-ins (each should fail about 1 time in
200 at most), passes of the random control and passes of the cheats (each
should be 0).
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scipy.stats import beta, nct

from pytest_chaosmining.core import results_file
from pytest_chaosmining.core.records import MODEL_LEVEL, case_of
from pytest_chaosmining.explainers import BUILTIN_NAMES, CONTROL_NAME, PAPER_NAMES
from pytest_chaosmining.suites import Calibration, get_spec, registered_suites

#: proportion of future seeds a bar covers, and the confidence of that claim
COVERAGE, CONFIDENCE = 0.995, 0.90
#: smallest standard deviation assumed for a value over seeds
SD_FLOOR = 0.02
#: model-randomisation checks: their job is to reject maps that ignore the model (which gain exactly
#: 0), not to grade quality (the primary metric does that), and their values are heavy-tailed (an
#: untrained model sometimes ranks the truth high by luck).  Their bar sits just above the random
#: control's upper tolerance bound, refused where a calibration value of the built-in fell below it.
GAIN_METRICS = {"training_gain"}
#: the largest predicted false-fail rate accepted for a bar set just above the control
TARGET_RATE = 0.005
#: how the comment heading a block of calibrated tables in thresholds.toml begins
BANNER = "# Calibrated bars of "
#: fewest calibration seeds a bar is set from
MIN_SEEDS = 5
BUILT_INS = tuple(n for n in BUILTIN_NAMES if n != CONTROL_NAME)


def _calibration(suite: str) -> Calibration:
    """What suite ``suite`` judges (empty for a name no longer registered)."""
    return get_spec(suite).calibration if suite in registered_suites() else Calibration()


def _is_optional(suite: str, metric: str) -> bool:
    return metric in _calibration(suite).optional


def _norm_ppf(q: float) -> float:
    return statistics.NormalDist().inv_cdf(q)


def tolerance_factor(m: int, coverage: float = COVERAGE, confidence: float = CONFIDENCE) -> float:
    """k of the one-sided normal tolerance bound x̄ − k·s from m values, exact: the
    noncentral t quantile t'_γ(m − 1, z_p·√m) / √m (CALIBRATION.md).  The closed-form
    approximation used before it was 2 % low at 12 values and 9 % low at 3 (bars set
    with it sat slightly too high)."""
    if m < 3:
        raise ValueError(f"a tolerance bound needs at least 3 calibration seeds, got {m}")
    return float(nct.ppf(confidence, m - 1, _norm_ppf(coverage) * math.sqrt(m)) / math.sqrt(m))


def _floor(x: float) -> float:
    return math.floor(x * 100 + 1e-9) / 100


def _ceil(x: float) -> float:
    return math.ceil(x * 100 - 1e-9) / 100


@dataclass(frozen=True)
class Rule:
    """How bars are set: the tolerance bound's coverage and confidence, and the smallest
    standard deviation assumed (``--coverage``, ``--sd-floor``)."""

    coverage: float = COVERAGE
    confidence: float = CONFIDENCE
    sd_floor: float = SD_FLOOR

    def k(self, m: int) -> float:
        """The tolerance factor for m calibration seeds."""
        return tolerance_factor(m, self.coverage, self.confidence)

    def sd(self, values: list[float]) -> float:
        """The standard deviation of ``values``, floored."""
        return max(statistics.stdev(values) if len(values) > 1 else 0.0, self.sd_floor)

    def rate(self, values: list[float], bar: float) -> float:
        """Predicted chance that a value like ``values`` falls below ``bar``: Φ((bar − x̄)/s)."""
        return statistics.NormalDist(statistics.fmean(values), self.sd(values)).cdf(bar)


@dataclass
class Bar:
    """One calibrated bar and the evidence behind it."""

    suite: str
    metric: str
    bar_key: str
    explainer: str
    values: list[float]
    bar: float | None  # None: refused (the control reaches it)
    control: list[float]
    step: float | None = None  # the value's step where it is discrete (the bar then follows the suite's steps rule)
    others: list[float] = field(default_factory=list)  # cheats' values on the calibration seeds
    refused: str = ""  # why there is no bar
    rule: Rule = Rule()

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def sd(self) -> float:
        return self.rule.sd(self.values)

    def false_fail_rate(self) -> float | None:
        """Predicted chance that a correct explainer's value on an unseen seed falls below the bar:
        the normal fit's, or for a discrete value the order-statistic bound 1 / (m + 1)
        (no value of m calibration seeds fell below the lowest level)."""
        if self.bar is None:
            return None
        if self.step is not None:
            return 1 / (len(self.values) + 1)
        return self.rule.rate(self.values, self.bar)


def _judged(records: Iterable[dict]) -> Iterable[tuple[str, str, str, dict]]:
    """Records of the judged metrics (whether or not the run's bars judged them), with their key."""
    for r in records:
        key_of = _calibration(r["suite"]).judged.get(r["metric"])
        if key_of is not None:
            yield r["suite"], r["metric"], key_of(case_of(r)), r


def _upper_bound(values: list[float], rule: Rule) -> float:
    """The random control's upper tolerance bound x̄ + k·s (s floored; no values: 0 ± the floor)."""
    return statistics.fmean(values or [0.0]) + rule.k(max(len(values), 3)) * rule.sd(values)


def calibrate(records: list[dict], rule: Rule = Rule()) -> list[Bar]:
    """A bar per (suite, metric, key, built-in explainer) from calibration-run records
    (records of other explainers are the control and cheats, checked against the bars)."""
    values: dict[tuple[str, str, str, str], list[float]] = defaultdict(list)
    control: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    cheats: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    steps: dict[tuple[str, str, str], float] = {}
    for suite, metric, key, r in _judged(records):
        step_of = _calibration(suite).steps.get(metric)
        if step_of is not None:
            steps[(suite, metric, key)] = step_of(case_of(r))
        if r["explainer"] == CONTROL_NAME:
            control[(suite, metric, key)].append(float(r["value"]))
        elif r["explainer"] in BUILT_INS:
            values[(suite, metric, key, r["explainer"])].append(float(r["value"]))
        elif r["explainer"] != MODEL_LEVEL:  # not a statistical reference method (RFE-linear, ...)
            cheats[(suite, metric, key)].append(float(r["value"]))
    bars = []
    for (suite, metric, key, explainer), vals in sorted(values.items()):
        ctrl, others, step = (
            control.get((suite, metric, key), []),
            cheats.get((suite, metric, key), []),
            steps.get((suite, metric, key)),
        )
        bar: float | None = None
        refused = ""
        if len(vals) < MIN_SEEDS:
            refused = f"judged on {len(vals)} calibration seed(s), fewer than {MIN_SEEDS}"
        elif step is not None:
            bar = _floor(min(vals) - step / 2)
            if max(ctrl + others, default=-math.inf) >= bar:
                bar, refused = None, "the control or a cheat reaches it"
        elif metric in GAIN_METRICS:
            bar = _ceil(_upper_bound(ctrl, rule) + 0.01)
            if min(vals) < bar:
                bar, refused = None, f"a calibration seed gained {min(vals):.3f}, below the control's bound"
            elif rule.rate(vals, bar) > TARGET_RATE:
                bar, refused = None, "its spread reaches the control's bound (predicted false-fail rate over 1 in 200)"
        else:
            mean, sd = statistics.fmean(vals), rule.sd(vals)
            bar = _floor(mean - rule.k(len(vals)) * sd)
            if ctrl:
                ctrl_upper = _upper_bound(ctrl, rule)
                if ctrl_upper >= bar:  # the lowest bar that still rejects the control, if its rate is low enough
                    bar = _ceil(ctrl_upper + 0.01)
                    if rule.rate(vals, bar) > TARGET_RATE:
                        bar, refused = None, "the random control's upper tolerance bound reaches it"
        bars.append(Bar(suite, metric, key, explainer, vals, bar, ctrl, step, others, refused, rule))
    return bars


def shared_bars(bars: list[Bar]) -> dict[tuple[str, str, str], float | None]:
    """The bar of each key for explainers without their own: the weakest of the
    paper's built-ins (SA, DL, IG, FA; the others where none of those was
    calibrated) — None where any of them was refused: a method as good as that
    built-in could not be judged there either; model-randomisation bars excepted."""
    grouped: dict[tuple[str, str, str], list[float | None]] = defaultdict(list)
    paper_keys = {(b.suite, b.metric, b.bar_key) for b in bars if b.explainer in PAPER_NAMES}
    for b in bars:
        key = (b.suite, b.metric, b.bar_key)
        if b.explainer in PAPER_NAMES or key not in paper_keys:
            grouped[key].append(b.bar)
    shared: dict[tuple[str, str, str], float | None] = {}
    for key, values in grouped.items():
        judged = [v for v in values if v is not None]
        # a model-randomisation bar only rejects maps that ignore the model: it applies to every
        # other explainer wherever any built-in could be held to it
        strict = key[1] not in GAIN_METRICS and len(judged) < len(values)
        shared[key] = None if strict or not judged else min(judged)
    return shared


def to_toml(bars: list[Bar], tier: str) -> str:
    """The calibrated tables, ``[<suite>.<tier>.<metric>]`` (per key: the weakest
    built-in's bar, for other explainers) and per built-in explainer.  Where no bar
    could be set the entry is ``-inf``: not judged there, with the reason as a comment."""
    shared = shared_bars(bars)
    lines: list[str] = []
    for suite, metric in dict.fromkeys((b.suite, b.metric) for b in bars):
        keys = {k: v for (s, m, k), v in shared.items() if (s, m) == (suite, metric)}
        judged = [v for v in keys.values() if v is not None]
        lines.append(f"[{suite}.{tier}.{metric}]")
        if judged and not _is_optional(suite, metric):
            lines.append(f"default = {min(judged):.2f}")
        for k, v in keys.items():
            if v is None:
                reasons = sorted(
                    {b.refused for b in bars if (b.suite, b.metric, b.bar_key) == (suite, metric, k) and b.refused}
                )
                lines.append(f"{k} = -inf  # not judged: {'; '.join(reasons)}")
            else:
                lines.append(f"{k} = {v:.2f}")
        lines.append("")
        for explainer in BUILT_INS:
            own = [b for b in bars if (b.suite, b.metric, b.explainer) == (suite, metric, explainer)]
            if own:
                lines.append(f"[{suite}.{tier}.{metric}.explainer.{explainer}]")
                lines += [
                    f"{b.bar_key} = {b.bar:.2f}"
                    if b.bar is not None
                    else f"{b.bar_key} = -inf  # not judged: {b.refused}"
                    for b in own
                ]
                lines.append("")
    return "\n".join(lines)


@dataclass
class HeldOut:
    """Re-judged tests of the held-out runs: per (suite, explainer) tests and failures."""

    tests: dict[tuple[str, str], int]
    failed: dict[tuple[str, str], list[str]]
    #: per (suite, seed): built-in tests judged and how many failed (the run-level rate's evidence)
    runs: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)

    def failing_runs(self) -> tuple[int, int]:
        """(runs with a built-in test failing, runs): one run = one suite on one seed."""
        return sum(1 for _, bad in self.runs.values() if bad), len(self.runs)


def held_out_check(records: list[dict], bars: list[Bar]) -> HeldOut:
    """Judge every judged test of ``records`` against ``bars`` (a test fails when any of its
    calibrated checks does); checks on metrics or keys without a bar are not judged."""
    own = {(b.suite, b.metric, b.bar_key, b.explainer): b.bar for b in bars}
    shared = shared_bars(bars)
    by_test: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    seed_of: dict[tuple[str, str, str], int] = {}
    for suite, metric, key, r in _judged(records):
        if r["explainer"] == MODEL_LEVEL:  # a statistical reference method, not an explainer's test
            continue
        mine = (suite, metric, key, r["explainer"])
        bar = own[mine] if mine in own else shared.get((suite, metric, key))
        if bar is None:  # not judged there
            continue
        test = (suite, r["explainer"], r["nodeid"])
        by_test.setdefault(test, [])
        seed_of[test] = int(r["seed"])
        if float(r["value"]) < bar:
            by_test[test].append(f"{metric} {float(r['value']):.3f} < {bar:.2f} ({key}, seed {r['seed']})")
    tests: dict[tuple[str, str], int] = defaultdict(int)
    failed: dict[tuple[str, str], list[str]] = defaultdict(list)
    runs: dict[tuple[str, int], tuple[int, int]] = {}
    for test, misses in by_test.items():
        suite, explainer, _ = test
        tests[(suite, explainer)] += 1
        if misses:
            failed[(suite, explainer)].append("; ".join(misses))
        if explainer in BUILT_INS:
            judged, bad = runs.get((suite, seed_of[test]), (0, 0))
            runs[(suite, seed_of[test])] = (judged + 1, bad + bool(misses))
    return HeldOut(dict(tests), dict(failed), runs)


def leave_one_seed_out(records: list[dict], rule: Rule = Rule()) -> HeldOut:
    """Cross-validated check of the rule on the calibration runs themselves: each seed's tests
    judged against bars set from all the other seeds (an estimate of the false-fail rate that
    uses every calibration seed; the held-out check on unseen seeds stays the evidence)."""
    tests: dict[tuple[str, str], int] = defaultdict(int)
    failed: dict[tuple[str, str], list[str]] = defaultdict(list)
    runs: dict[tuple[str, int], tuple[int, int]] = {}
    for seed in sorted({r["seed"] for r in records}):
        check = held_out_check(
            [r for r in records if r["seed"] == seed], calibrate([r for r in records if r["seed"] != seed], rule)
        )
        for key, n in check.tests.items():
            tests[key] += n
            failed[key] += check.failed.get(key, [])
        runs.update(check.runs)
    return HeldOut(dict(tests), {k: v for k, v in failed.items() if v}, runs)


def gate_rows(records: list[dict]) -> list[str]:
    """Markdown rows of the model gates: per suite, how many models each run judged
    (prediction quality against the tier's gate), their lowest and mean quality, and
    how many fell below the gate (their explainer tests skip; the model test fails)."""
    grouped: dict[tuple[str, str, float], list[float]] = defaultdict(list)
    for r in records:
        if r["explainer"] == "-" and r.get("threshold") is not None and r["metric"] in ("uscore", "accuracy"):
            grouped[(r["suite"], r["metric"], float(r["threshold"]))].append(float(r["value"]))
    return [
        f"| {suite} | {metric} | {gate:.2f} | {len(v)} | {min(v):.3f} | {statistics.fmean(v):.3f} | "
        f"{sum(x < gate for x in v)} |"
        for (suite, metric, gate), v in sorted(grouped.items())
    ]


def failure_rate_bound(failures: int, tests: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a failure rate seen as ``failures`` in ``tests``."""
    return 1.0 if failures >= tests else float(beta.ppf(confidence, failures + 1, tests - failures))


def _cheat_maxima(records: list[dict]) -> dict[tuple[str, str, str], tuple[float, str]]:
    best: dict[tuple[str, str, str], tuple[float, str]] = {}
    for suite, metric, key, r in _judged(records):
        if r["explainer"] not in BUILTIN_NAMES and r["explainer"] != MODEL_LEVEL:
            found = best.get((suite, metric, key))
            if found is None or float(r["value"]) > found[0]:
                best[(suite, metric, key)] = (float(r["value"]), r["explainer"])
    return best


def _check_rows(check: HeldOut) -> list[str]:
    """Markdown table of a check: its tests and failures per (suite, explainer)."""
    lines = ["| suite | explainer | kind | tests | failed |", "|---|---|---|---|---|"]
    for (suite, explainer), n in sorted(check.tests.items()):
        kind = "built-in" if explainer in BUILT_INS else "control" if explainer == CONTROL_NAME else "cheat"
        lines.append(f"| {suite} | {explainer} | {kind} | {n} | {len(check.failed.get((suite, explainer), []))} |")
    return lines


def run_level_line(check: HeldOut) -> str:
    """The run-level rate of a check: runs (one suite on one seed, every built-in test of it)
    with at least one built-in failure.  Failures of one model cluster, so this rate is
    not the per-test rate times the tests; it is what a run on a fresh seed risks."""
    bad, runs = check.failing_runs()
    per_suite: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (suite, _), (_, failed) in check.runs.items():
        per_suite[suite][0] += bool(failed)
        per_suite[suite][1] += 1
    parts = ", ".join(f"{suite} {b} of {n}" for suite, (b, n) in sorted(per_suite.items()))
    return (
        f"Run level (a suite's built-in tests on one seed): {bad} of {runs} runs had a failure, a rate of "
        f"{bad / max(runs, 1):.3f} (95% upper bound {failure_rate_bound(bad, runs):.3f}); {parts}."
    )


def _totals(check: HeldOut) -> tuple[int, int, int]:
    """Built-in tests, built-in failures, and control or cheat tests that passed."""
    tests = sum(n for (_, e), n in check.tests.items() if e in BUILT_INS)
    failed = sum(len(v) for (_, e), v in check.failed.items() if e in BUILT_INS)
    passing = sum(n - len(check.failed.get((s, e), [])) for (s, e), n in check.tests.items() if e not in BUILT_INS)
    return tests, failed, passing


def report(
    bars: list[Bar],
    held: HeldOut | None,
    tier: str,
    cal_seeds: str,
    held_seeds: str,
    models: list[dict] | None = None,
    held_records: list[dict] | None = None,
    rule: Rule = Rule(),
    cross: HeldOut | None = None,
) -> str:
    """Markdown calibration report: every bar with its evidence, the model gates, the
    leave-one-seed-out check where one was made, then the held-out count."""
    lines = [
        f"# Calibration report: tier {tier}",
        "",
        f"Calibration seeds {cal_seeds}; held-out seeds {held_seeds} (the tier judges seeds from 0). "
        f"Bar = x̄ − k·s over the calibration seeds (s floored at {rule.sd_floor}), k for coverage "
        f"{rule.coverage} at confidence {rule.confidence}; predicted false-fail rate Φ((bar − x̄)/s).  "
        "Control max: the highest value of the random control (and of the cheats, where the calibration runs "
        "had them) over the same seeds.  Discrete values (RFE FPrec, steps of 1/k) take the bar half a step "
        "below the lowest calibration value instead, with the order-statistic rate 1/(m+1).",
        "",
        "Cheats: the highest value any cheat of `pytest_chaosmining.explainers.cheats` reached on the held-out seeds.",
        "",
        "| suite | metric | key | explainer | m | mean | sd | k | bar | predicted false-fail | control max "
        "| cheats max |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    cheats = _cheat_maxima(held_records or [])
    for b in bars:
        rate = b.false_fail_rate()
        cheat = cheats.get((b.suite, b.metric, b.bar_key))
        k = f"{rule.k(len(b.values)):.2f}" if len(b.values) >= 3 else "—"
        lines.append(
            f"| {b.suite} | {b.metric} | {b.bar_key} | {b.explainer} | {len(b.values)} | {b.mean:.3f} | "
            f"{b.sd:.3f} | {k} | "
            f"{f'not judged: {b.refused}' if b.bar is None else f'{b.bar:.2f}'} | "
            f"{'—' if rate is None else f'{rate:.4f}'} | "
            f"{max(b.control + b.others) if b.control or b.others else float('nan'):.3f} | "
            f"{'—' if cheat is None else f'{cheat[0]:.3f} ({cheat[1]})'} |"
        )
    gates = gate_rows(models or [])
    if gates:
        lines += [
            "",
            "## Model gates",
            "",
            "Models of the calibration and held-out runs against the tier's quality "
            "gate (`quality_gate`, not recalibrated).",
            "",
            "| suite | quality | gate | models | lowest | mean | below the gate |",
            "|---|---|---|---|---|---|---|",
            *gates,
        ]
    if cross is not None:
        tests, failed, passing = _totals(cross)
        lines += [
            "",
            "## Leave-one-seed-out check",
            "",
            "Each calibration seed's tests judged against bars set from the other calibration seeds.",
            "",
            *_check_rows(cross),
            "",
            f"Built-in tests: {tests}, failed: {failed}, a rate of {failed / max(tests, 1):.4f} (95% upper "
            f"bound {failure_rate_bound(failed, tests):.4f}); control and cheat tests passing: {passing}.",
            "",
            run_level_line(cross),
            "",
        ]
        lines += [
            f"- {suite} {explainer}: {m}"
            for (suite, explainer), misses in sorted(cross.failed.items())
            if explainer in BUILT_INS
            for m in misses
        ]
    if held is not None:
        lines += [
            "",
            "## Held-out check",
            "",
            "Every judged test of the held-out runs, re-judged against the bars above.",
            "",
            *_check_rows(held),
        ]
        builtin_tests, builtin_failed, bad_passes = _totals(held)
        predicted = sum(r for r in (b.false_fail_rate() for b in bars) if r is not None) / max(
            sum(1 for b in bars if b.bar is not None), 1
        )
        lines += [
            "",
            f"Built-in tests: {builtin_tests}, failed: {builtin_failed}, a rate of "
            f"{builtin_failed / max(builtin_tests, 1):.4f} (95% upper bound "
            f"{failure_rate_bound(builtin_failed, builtin_tests):.4f}; mean predicted false-fail rate per "
            f"check {predicted:.4f}); control and cheat tests passing: {bad_passes}.",
            "",
            run_level_line(held),
            "",
        ]
        for (suite, explainer), misses in sorted(held.failed.items()):
            if explainer in BUILT_INS:
                lines += [f"- {suite} {explainer}: {m}" for m in misses]
    return "\n".join(lines) + "\n"


def merge_into(thresholds_text: str, tables: str, bars: list[Bar], tier: str, note: str) -> str:
    """``thresholds_text`` with the calibrated tables of ``bars`` replacing the old ones
    (``[<suite>.<tier>.<metric>]`` and its per-explainer tables) and each calibrated
    suite's ``[<suite>.<tier>]`` section marked ``calibrated = note``."""
    metrics = {(b.suite, b.metric) for b in bars}
    suites = {suite for suite, _ in metrics}
    out: list[str] = []
    skipping = in_section = False
    for line in thresholds_text.splitlines():
        header = re.match(r"^\[([\w-]+)\.([\w-]+)(?:\.([\w-]+))?(?:\..*)?\]\s*$", line)
        if line.startswith(BANNER):  # another tier's calibrated block begins: not part of a replaced table
            skipping = in_section = False
        if header:
            suite, table_tier, metric = header.groups()
            skipping = table_tier == tier and (suite, metric) in metrics
            in_section = table_tier == tier and metric is None and suite in suites
            if in_section:
                out += [line, f'calibrated = "{note}"']
                continue
        if skipping or (in_section and line.startswith("calibrated = ")):
            continue
        out.append(line)
    banner = f"{BANNER}{', '.join(sorted(suites))}, tier {tier}"
    text = "\n".join(line for line in out if not line.startswith(banner)).rstrip("\n")
    return f"{text}\n\n{banner} ({note}): python -m pytest_chaosmining.tools.calibrate\n{tables}"


#: separates a results.json path from the parts of it kept (``run.json::suite=audio::conditions=RBFP,SBFP``)
PART_SEP = "::"


def run_spec(path: Path | str, suite: str = "", conditions: Iterable[str] = ()) -> str:
    """A run as :func:`load_runs` reads it: ``path``, only the records of ``suite``
    where one is named, and only those of ``conditions`` where they are given (the
    other conditions' models were retrained since: their records no longer
    describe the tier)."""
    parts = (
        [str(path)]
        + ([f"suite={suite}"] if suite else [])
        + ([f"conditions={','.join(conditions)}"] if conditions else [])
    )
    return PART_SEP.join(parts)


def plan_runs(raw: Path, entries: Iterable[str | dict], suite: str = "") -> list[str]:
    """The runs of a calibration plan's list (benchmarks/calibration/plan.toml) for
    ``suite``: a file name in ``raw``, or ``{run = NAME, conditions = [...]}`` for
    the records of some conditions only."""
    return [
        run_spec(raw / e, suite) if isinstance(e, str) else run_spec(raw / e["run"], suite, e["conditions"])
        for e in entries
    ]


def read_results(path: Path) -> dict:
    """A results.json file with its per-sample fields, or the gzip-compressed ``<path>.gz``
    where only that exists (the committed calibration runs are compressed)."""
    packed = path.with_name(path.name + ".gz")
    return results_file.read_results(packed if not path.exists() and packed.exists() else path, samples=True)


def _read_run(spec: Path | str) -> tuple[dict, list[dict]]:
    """The meta and the kept records of one run spec (see :func:`run_spec`)."""
    path, *parts = str(spec).split(PART_SEP)
    payload = read_results(Path(path))
    records = payload["records"]
    kept = dict(part.split("=", 1) for part in parts)
    if "suite" in kept:
        records = [r for r in records if r["suite"] == kept["suite"]]
    if "conditions" in kept:
        conditions = set(kept["conditions"].split(","))
        records = [r for r in records if case_of(r).get("condition") in conditions]
    return payload["meta"], records


def load_runs(paths: list[Path] | list[str]) -> tuple[list[dict], set[str], str]:
    """The records, tiers and seeds (as text) of the results.json files ``paths``
    (each a path or a :func:`run_spec`)."""
    runs = [_read_run(p) for p in paths]
    tiers = {meta["tier"] for meta, _ in runs}
    seeds = sorted({str(s) for meta, _ in runs for s in meta["seeds"].values()})
    return [r for _, records in runs for r in records], tiers, ", ".join(seeds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "results",
        nargs="+",
        help=f"results.json of calibration runs (one tier; see run_spec for PATH{PART_SEP}suite=S)",
    )
    parser.add_argument("--held-out", nargs="*", default=[], help="results.json of held-out runs (as above)")
    parser.add_argument("--toml", type=Path, help="write the calibrated tables here")
    parser.add_argument("--report", type=Path, help="write the Markdown calibration report here")
    parser.add_argument("--merge", type=Path, help="replace the calibrated tables in this thresholds.toml")
    parser.add_argument("--sd-floor", type=float, default=SD_FLOOR, help="smallest standard deviation assumed")
    parser.add_argument(
        "--coverage", type=float, default=COVERAGE, help="proportion of future seeds a bar covers (at confidence 0.90)"
    )
    parser.add_argument(
        "--cross-validate",
        action="store_true",
        help="add a leave-one-seed-out check of the rule on the calibration runs to the report",
    )
    args = parser.parse_args(argv)
    records, tiers, cal_seeds = load_runs(args.results)
    held_records, held_tiers, held_seeds = load_runs(args.held_out) if args.held_out else ([], set(), "none")
    if len(tiers | held_tiers) != 1:
        parser.error(f"results of exactly one tier expected, got {sorted(tiers | held_tiers)}")
    tier = tiers.pop()
    rule = Rule(coverage=args.coverage, sd_floor=args.sd_floor)
    bars = calibrate(records, rule)
    held = held_out_check(held_records, bars) if held_records else None
    text = to_toml(bars, tier)
    if args.toml:
        args.toml.write_text(text)
    else:
        sys.stdout.write(text)
    if args.report:
        cross = leave_one_seed_out(records, rule) if args.cross_validate else None
        args.report.write_text(
            report(bars, held, tier, cal_seeds, held_seeds, records + held_records, held_records, rule, cross)
        )
    if args.merge:
        note = f"calibration seeds {cal_seeds}; held-out check on seeds {held_seeds}" + (
            f"; coverage {rule.coverage}" if rule.coverage != COVERAGE else ""
        )
        args.merge.write_text(merge_into(args.merge.read_text(), text, bars, tier, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
