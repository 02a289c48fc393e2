"""Thresholds per suite and tier: each suite folder's ``thresholds.toml``, with an
optional user file (``--chaosmining-thresholds``, same layout) merged over them.

Layout::

    [<suite>.<tier>]                        quality_gate: the model quality a model needs before
                                            its explainers are judged (below it their tests skip);
                                            calibrated: how the tier's bars were calibrated;
                                            report_only: true where they were not (recorded, not judged)
    [<suite>.<tier>.<metric>]               per bar key (``f03``, ``SBRP``, ...) and
                                            ``default``: the bar of an explainer without its own;
                                            ``sampler_default``: where set, that bar of a stochastic one
    [<suite>.<tier>.<metric>.explainer.NAME]  the bars of one built-in explainer
    [<suite>.<tier>.max_drop]               the baseline rule's (verdict/rule.py CalibratedDrops):
                                            per metric, how far it may fall below a baseline
    [<suite>.<tier>.paired_drop]            ``t`` and, per metric, ``cap``: a drop beyond max_drop of a
                                            score with per-sample values regresses only with a paired
                                            t above ``t`` or a drop of at least the cap (else: changed)
    [<suite>.<tier>.sample_drift]           ``floor`` and ``allowed``: at most ``allowed`` explained samples'
                                            maps may agree less than ``floor`` with the baseline's

Smoke bars come from ``python -m pytest_chaosmining.tools.calibrate`` on
held-out seeds (docs/thresholds.md).  The ci and paper bars are older: the
lowest value seen over the calibration seeds minus 0.05, rounded down to 0.01
(ci: seeds 0-3, paper: seeds 0-4, on CPU); runs at those tiers say so.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: a bar written as ``-inf``: calibration refused a bar there (too noisy, or the control reaches it)
NOT_JUDGED = float("-inf")


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "a list" if isinstance(value, list) else "a text" if isinstance(value, str) else "a table"


def mistyped(shipped: dict[str, Any], given: dict[str, Any], where: str = "") -> list[str]:
    """Where a user's thresholds table ``given`` puts a value of another kind than the
    shipped table holds there (or, at a key it lacks, than its neighbours hold; a
    number where it has none): ``[symbolic.smoke.fprec] f03 = 'high' (a number expected)``."""
    found = []
    neighbours = [_kind(v) for v in shipped.values() if not isinstance(v, dict)]
    for key, value in given.items():
        there = shipped.get(key)
        if isinstance(value, dict):
            found += mistyped(there if isinstance(there, dict) else {}, value, f"{where}.{key}".strip("."))
            continue
        expected = _kind(there) if there is not None else (neighbours[0] if neighbours else "a number")
        if _kind(value) != expected:
            found.append(f"[{where}] {key} = {value!r} ({expected} expected)")
    return found


class Thresholds:
    """Look-ups into the merged threshold table."""

    def __init__(self, table: dict[str, Any], own_bars_only: frozenset[str] = frozenset()):
        self.table = table
        #: explainers judged only against bars of their own (the built-ins beyond the paper's four:
        #: where no calibration gave them bars, they are reported, not judged)
        self.own_bars_only = own_bars_only

    @classmethod
    def load(
        cls, files: Iterable[Path], user_file: Path | None = None, own_bars_only: frozenset[str] = frozenset()
    ) -> Thresholds:
        """The tables of ``files`` (the suites' ``thresholds.toml``), ``user_file`` merged over them."""
        table: dict[str, Any] = {}
        for path in files:
            table = _merge(table, tomllib.loads(path.read_text()))
        if user_file is not None:
            try:
                given = tomllib.loads(Path(user_file).read_text())
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ValueError(
                    f"cannot read chaosmining thresholds {user_file}: not a readable TOML file ({exc})"
                ) from exc
            cls(table).check(given)
            table = _merge(table, given)
        return cls(table, own_bars_only)

    def check(self, given: dict[str, Any]) -> None:
        """Raise ``ValueError`` where a user's table ``given`` puts a value of another
        kind than this table holds there (:func:`mistyped`)."""
        if wrong := mistyped(self.table, given):
            raise ValueError("; ".join(wrong[:3]))

    def section(self, suite: str, tier: str) -> dict[str, Any]:
        try:
            return self.table[suite][tier]
        except KeyError:
            raise KeyError(f"no thresholds for suite {suite!r}, tier {tier!r}") from None

    def lacks_own_bars(self, suite: str, tier: str, explainer: str) -> bool:
        """Whether ``explainer`` (one of :attr:`own_bars_only`) has no bars of its own
        in ``[suite.tier]`` while other explainers do (a suite without
        per-explainer bars, such as the cost suite, lacks nothing)."""
        if explainer not in self.own_bars_only:
            return False
        section = self.table.get(suite, {}).get(tier, {})
        tables = [t.get("explainer", {}) for t in section.values() if isinstance(t, dict)]
        return any(tables) and not any(explainer in t for t in tables)

    def quality_gate(self, suite: str, tier: str) -> float:
        """The prediction quality a model needs before its explainers are judged."""
        return float(self.section(suite, tier)["quality_gate"])

    def unlearned(self, suite: str, tier: str, *keys: str) -> str | None:
        """The declared reason why a model is expected not to learn, if any;
        looked up under ``[suite.tier.unlearned]`` by each of ``keys`` (model, condition)."""
        table = self.section(suite, tier).get("unlearned", {})
        return next((str(table[k]) for k in keys if k in table), None)

    def metric(self, suite: str, tier: str, metric: str, bar_key: str, explainer: str) -> float:
        """Threshold of ``metric`` for one case (e.g. ``f03``) and explainer.

        Order: ``[suite.tier.<metric>.<explainer>]`` case or default entry, then
        ``[suite.tier.<metric>]`` case entry, then its ``default``.
        """
        found = self.optional_metric(suite, tier, metric, bar_key, explainer)
        if found is None:
            raise KeyError(f"no {metric} threshold for {bar_key!r} / {explainer!r} in [{suite}.{tier}]")
        return found

    def uncalibrated(self, suites: list[str], tier: str) -> list[str]:
        """Those of ``suites`` whose bars at ``tier`` were not calibrated on held-out
        seeds (their section has no ``calibrated`` entry); suites without bars are skipped."""
        return [s for s in suites if tier in self.table.get(s, {}) and not self.section(s, tier).get("calibrated")]

    def report_only(self, suites: list[str], tier: str) -> list[str]:
        """Those of ``suites`` whose section at ``tier`` says ``report_only = true``: their
        bars were not calibrated on held-out seeds, so their results are recorded and
        never judged (a user's thresholds file can set it to false, taking the bars on)."""
        return [s for s in suites if self.table.get(s, {}).get(tier, {}).get("report_only", False)]

    def baseline_table(self, suite: str, tier: str, name: str) -> dict[str, Any]:
        """The table ``[suite.tier.<name>]`` of the baseline rule's calibrated parameters
        (``max_drop``, ``paired_drop``, ``sample_drift``; empty where it has none): read by
        :class:`~pytest_chaosmining.verdict.rule.CalibratedDrops`."""
        return dict(self.table.get(suite, {}).get(tier, {}).get(name, {}))

    def default(self, suite: str, tier: str, metric: str) -> float:
        """The ``default`` bar of ``metric`` (for any case and explainer without its own)."""
        return float(self.section(suite, tier)[metric]["default"])

    def optional_metric(
        self, suite: str, tier: str, metric: str, bar_key: str, explainer: str, stochastic: bool = False
    ) -> float | None:
        """Like :meth:`metric`, but None where the table has no bar or marks it ``-inf``
        (the metric is not judged there: calibration found it too noisy, or the
        random control reaches it), and for an explainer of :attr:`own_bars_only`
        without a table of its own.  A ``stochastic`` explainer without bars of its own
        gets the table's ``sampler_default`` where it has one (samplers over a
        distribution of baselines follow the zero baseline's signs less closely)."""
        table = self.section(suite, tier).get(metric, {})
        per_explainer = table.get("explainer", {}).get(explainer, {})
        if explainer in self.own_bars_only and not per_explainer:
            return None
        return self._bar(table, per_explainer, bar_key, stochastic)

    def drift_bar(self, suite: str, tier: str, metric: str, bar_key: str, explainer: str) -> float | None:
        """The bar of a drift metric (``map_agreement``, ``size_agreement``): it judges how far
        an explainer's maps moved from its baseline's, not their merit, so every explainer is
        held to it, a built-in of :attr:`own_bars_only` included (the bars were calibrated on
        benign changes of the built-ins: benchmarks/mutations/benign-calibration.md)."""
        table = self.section(suite, tier).get(metric, {})
        return self._bar(table, table.get("explainer", {}).get(explainer, {}), bar_key, False)

    @staticmethod
    def _bar(table: dict[str, Any], per_explainer: dict[str, Any], bar_key: str, stochastic: bool) -> float | None:
        """The bar of ``table`` for ``bar_key`` (the explainer's own first), None where none is judged."""
        default = "sampler_default" if stochastic and "sampler_default" in table else "default"
        found: float | None = None
        if bar_key in per_explainer:
            found = float(per_explainer[bar_key])
        elif "default" in per_explainer:
            found = float(per_explainer["default"])
        elif bar_key in table and bar_key != "default":
            found = float(table[bar_key])
        elif default in table:
            found = float(table[default])
        return None if found == NOT_JUDGED else found
