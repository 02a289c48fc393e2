"""The run's explainers: every registered one, those selected, and which of them
each suite runs."""

from __future__ import annotations

import dataclasses
import functools
import traceback
from typing import TYPE_CHECKING

import pytest

from pytest_chaosmining.explainers import CONTROL_NAME, PAPER_NAMES, collect_explainers, select
from pytest_chaosmining.explainers.diagnosis import MapNotes
from pytest_chaosmining.settings import Settings
from pytest_chaosmining.suites import get_spec, shapes_of, shipped_thresholds

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.verdict.thresholds import Thresholds


class ExplainerRoster:
    """Built-ins and the ``pytest_chaosmining_explainers`` hook's explainers, filtered by
    ``--chaosmining-explainers``, and the bars they are held to (a built-in beyond the
    paper's four runs only where it has bars of its own, unless named)."""

    def __init__(self, config: pytest.Config, settings: Settings):
        self.config = config
        self.settings = settings

    @functools.cached_property
    def registered(self) -> dict[str, Explainer]:
        """Every registered explainer (built-ins and the hook's)."""
        return collect_explainers(self._hook_results())

    def _hook_results(self) -> list[dict[str, object]]:
        """The ``pytest_chaosmining_explainers`` hooks' results; a hook that raises (a
        library its conftest imports is missing) is one usage error naming the hook's file
        and the error, never an internal error of the run."""
        try:
            return self.config.hook.pytest_chaosmining_explainers(config=self.config)
        except Exception as exc:
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.name == "pytest_chaosmining_explainers"]
            where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            raise pytest.UsageError(
                f"pytest_chaosmining_explainers{where} raised {type(exc).__name__}: {exc}; no explainer was registered"
            ) from None

    @functools.cached_property
    def own_bars_only(self) -> frozenset[str]:
        """The built-ins beyond the paper's four (and the control): judged only against bars of their own."""
        return frozenset(
            name
            for name, e in self.registered.items()
            if e.source == "builtin" and name not in PAPER_NAMES and name != CONTROL_NAME
        )

    @functools.cached_property
    def thresholds(self) -> Thresholds:
        """The run's bars: the shipped ones, ``--chaosmining-thresholds`` merged over them (the
        built-ins of :attr:`own_bars_only` held only to bars written for them)."""
        return shipped_thresholds(self.settings.thresholds, self.own_bars_only)

    @functools.cached_property
    def map_notes(self) -> MapNotes:
        """What the run's explainers noted about their maps (for the judge's messages)."""
        return MapNotes()

    @functools.cached_property
    def selected(self) -> dict[str, Explainer]:
        """The registered explainers, filtered by ``--chaosmining-explainers``
        (``pytest.UsageError`` for an unknown name or one that applies in none of the
        suites), carrying the run's call time limit and map notes."""
        try:
            chosen = select(self.registered, list(self.settings.explainers), shapes_of(self.settings.suites))
        except ValueError as exc:
            raise pytest.UsageError(f"--chaosmining-explainers: {exc}") from None
        return {
            name: dataclasses.replace(e, call_timeout_s=self.settings.call_timeout, map_notes=self.map_notes)
            for name, e in chosen.items()
        }

    def check_named(self, label: str) -> None:
        """Before anything runs: a usage error for a ``pytest_chaosmining_explainers`` hook
        that raises, and (``label``: the option as given) for an explainer
        ``--chaosmining-explainers`` names that no loaded conftest, entry point or built-in
        registers, or that applies in none of the selected suites."""
        found = collect_explainers(self._hook_results())  # a hook that raises: a usage error, here
        if not self.settings.explainers:
            return
        try:
            select(found, list(self.settings.explainers), shapes_of(self.settings.suites))
        except ValueError as exc:
            raise pytest.UsageError(f"{label}: {exc}") from None

    def explainers_in(self, suite: str) -> list[str]:
        """The explainers ``suite`` runs: all selected ones but the built-ins beyond
        the paper's four that apply there and have no bars of their own there at
        this tier (their values would be reported, not judged), unless named in
        ``--chaosmining-explainers``.  One that does not apply there stays, to be
        skipped with its reason."""
        named, tier, thresholds = set(self.settings.explainers), self.settings.tier, self.thresholds
        shapes = get_spec(suite).shapes if suite in self.settings.suites else ()

        def runs(name: str) -> bool:
            declared = self.selected[name].applies_to
            return (
                name in named
                or not thresholds.lacks_own_bars(suite, tier, name)
                or (declared is not None and not declared.applies_in(shapes))
            )

        return [name for name in self.selected if runs(name)]

    def left_out(self, suites: list[str]) -> dict[str, list[str]]:
        """Per suite of ``suites`` this run selected, the selected explainers :meth:`explainers_in` leaves out."""
        out = {}
        for suite in suites:
            if suite in self.settings.suites:
                runs = set(self.explainers_in(suite))
                if left := [n for n in self.selected if n not in runs]:
                    out[suite] = left
        return out
