"""Command-line and ini options, resolved into one :class:`Settings`.

Every option can be given on the command line or as an ini / pyproject key of
the same name with ``-`` replaced by ``_`` (``chaosmining_tier = "paper"``).
The command line wins.  Relative paths from ini files are taken relative to the
ini file's directory.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import pytest

from pytest_chaosmining.core.storage.pack_location import SHIPPED
from pytest_chaosmining.core.tiers import DEFAULT_TIER, TIERS
from pytest_chaosmining.core.training.modes import (
    PRECISIONS,
    STANDARD_PRECISION,
    STANDARD_TRAINING,
    TRAINING_MODES,
    SaliencyGuided,
)
from pytest_chaosmining.explainers.contract import DEFAULT_CALL_TIMEOUT_S
from pytest_chaosmining.verdict.baseline import DEFAULT_MAX_SLOWDOWN
from pytest_chaosmining.verdict.thresholds import Thresholds

#: saliency guided training's defaults (the reference's)
GUIDE = SaliencyGuided()


@dataclass(frozen=True)
class Option:
    """One ``--chaosmining-<name>`` option (and ini key ``chaosmining_<name>``): its help, the
    value a run takes where it is not given (written here only; ``{default}`` in the help
    names it) and argparse's ``choices``, ``metavar`` and ``type``."""

    name: str
    help: str
    default: str | float | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    type: type[float] | None = None

    def help_text(self, suite_names: Sequence[str]) -> str:
        """The help, its ``{default}`` and ``{suites}`` filled in."""
        default = f"{self.default:g}" if isinstance(self.default, float) else str(self.default)
        return self.help.replace("{default}", default).replace("{suites}", ", ".join(suite_names))

    def argparse_keywords(self) -> dict[str, object]:
        """What ``addoption`` takes beside the name (no default: an option not given is None)."""
        keywords: dict[str, object] = {"choices": self.choices} if self.choices else {"metavar": self.metavar}
        return keywords | ({"type": self.type} if self.type else {})


OPTIONS: tuple[Option, ...] = (
    Option(
        "tier",
        "suite size: {default} (default: calibrated bars, minutes on a CI runner), ci or paper",
        DEFAULT_TIER,
        TIERS,
    ),
    Option("report", "write results.json, results.csv, report.md and plots to DIR", metavar="DIR"),
    Option("cache", "model cache directory (default: the user cache dir)", metavar="DIR"),
    Option("device", "torch device (default: cuda if available, else cpu)", metavar="DEVICE"),
    Option(
        "explainers",
        "comma list of explainers to run (default: all registered; own: those you registered, and the control)",
        metavar="NAMES",
    ),
    Option("suites", "comma list of suites to run (default: all: {suites})", metavar="NAMES"),
    Option(
        "seeds", "number of seeds N (seeds 0..N-1) or an inclusive range A-B (default: the tier's)", metavar="N|A-B"
    ),
    Option(
        "data",
        "real datasets on disk (CIFAR-10, Flowers102 as torchvision stores them; Speech Commands, "
        "Rainforest Connection, Santander); never downloaded",
        metavar="DIR",
    ),
    Option("sweep", "comma list of one-factor sweeps to add (ChaosMining Figure 4)", metavar="FACTORS"),
    Option(
        "training",
        "comma list of training modes of the symbolic, vision and audio models: {default} (default), saliency-guided",
        STANDARD_TRAINING,
        metavar="MODES",
    ),
    Option(
        "sg-k",
        "saliency guided training: fraction of inputs masked per sample (default {default})",
        GUIDE.k,
        metavar="K",
        type=float,
    ),
    Option(
        "sg-lambda",
        "saliency guided training: weight of the consistency term (default {default})",
        GUIDE.lam,
        metavar="X",
        type=float,
    ),
    Option(
        "sg-gradient",
        "saliency guided training: mask the lowest {default} (default, as the reference) or absolute gradients",
        "absolute" if GUIDE.absolute else "signed",
        ("signed", "absolute"),
    ),
    Option(
        "ensemble",
        "train same-shape networks as one batched ensemble (the symbolic MLPs, standard and saliency guided, "
        "and the networks of RFEwNA rounds side by side): on, off, or {default} (default: on for CUDA, off on "
        "CPU, where it measured no faster)",
        "auto",
        ("auto", "on", "off"),
    ),
    Option(
        "precision",
        "arithmetic of the vision and audio classifiers' standard training: {default} (default) or bf16 "
        "(autocast, channels_last image batches; models keyed and named apart, weights kept fp32)",
        STANDARD_PRECISION,
        PRECISIONS,
    ),
    Option(
        "pack",
        "models shipped ready-trained: a pack folder, or 'none' to train every model "
        "(default: the pack shipped with the plugin)",
        metavar="DIR|none",
    ),
    Option(
        "builtin-results",
        "the built-in explainers' scores: {default} those an earlier run cached (default) or recompute them",
        "reuse",
        ("reuse", "recompute"),
    ),
    Option(
        "known-defects",
        "a built-in's check that a reported defect of its library makes fail: held as a strict expected "
        "failure ({default}, default), or judged by the bar like any other (none: as before the defect was known)",
        "hold",
        ("hold", "none"),
    ),
    Option(
        "own-merit",
        "the cases the checks of an explainer's own merit run on: {default} (default: a suite's first case, "
        "against a baseline the case its rotation last moved to and the next, docs/properties.md) or all",
        "rotate",
        ("rotate", "all"),
    ),
    Option(
        "figures",
        "the report's figures: {default} (default: only what a failure needs, the example figure of a suite "
        "where an explainer's test failed, drawn from the run's results, no model loaded), all (every figure: "
        "the leaderboard, cost and the papers' figures, every example figure from the run's results) or models "
        "(every figure, the examples drawn again from the trained models, each explainer called for its full "
        "map: a paper-tier report)",
        "needed",
        ("needed", "all", "models"),
    ),
    Option(
        "verdict",
        "{default} (default): a run that judges no test fails, never passes green; report-only: record and "
        "report without judging (a paper-tier table run), a run that judges nothing passes and says so",
        "required",
        ("required", "report-only"),
    ),
    Option(
        "call-timeout",
        "longest an explainer call may take before it is stopped and its test fails (default {default})",
        DEFAULT_CALL_TIMEOUT_S,
        metavar="SECONDS",
        type=float,
    ),
    Option(
        "shard",
        "run the I-th of N shards of the cases (a case's shard follows from its id, "
        "the same in every run); merge the shards' results.json with chaosmining-rebuild",
        metavar="I/N",
    ),
    Option("thresholds", "TOML file of thresholds overriding the shipped ones", metavar="FILE"),
    Option("baseline", "results.json of an earlier run; fail results that dropped", metavar="FILE"),
    Option(
        "retired",
        "comma list of the baseline's explainers this run retires (renamed or removed): their results are not "
        "missing, and the summary says so; any other explainer of the baseline this run does not judge is missing, "
        "whatever --chaosmining-explainers names",
        metavar="NAMES",
    ),
    Option(
        "max-drop",
        "largest allowed drop below the baseline, for every metric "
        "(default: each metric's calibrated drop, docs/ci.md)",
        metavar="X",
        type=float,
    ),
    Option(
        "max-slowdown",
        "largest allowed growth of an explainer's time and peak memory over the baseline's, as a factor "
        "(default {default}; plus 20 ms / 16 MiB of slack)",
        DEFAULT_MAX_SLOWDOWN,
        metavar="FACTOR",
        type=float,
    ),
)

#: the options by ini name (``builtin_results``)
_BY_KEY = {option.name.replace("-", "_"): option for option in OPTIONS}
#: every option's name (``--chaosmining-<name>``)
OPTION_NAMES = tuple(option.name for option in OPTIONS)


def add_options(parser: pytest.Parser, suite_names: Sequence[str]) -> None:
    """Register the ``--chaosmining*`` options and ini keys in one group
    (``suite_names``: the registered suites, for the help text)."""
    group = parser.getgroup("chaosmining", "ChaosMining attribution conformance")
    group.addoption("--chaosmining", action="store_true", default=None, help="run the ChaosMining conformance suites")
    parser.addini("chaosmining", "run the ChaosMining suites (like --chaosmining)", type="bool", default=False)
    for option in OPTIONS:
        key = option.name.replace("-", "_")
        help_text = option.help_text(suite_names)
        group.addoption(
            f"--chaosmining-{option.name}",
            dest=f"chaosmining_{key}",
            default=None,
            help=help_text,
            **option.argparse_keywords(),
        )
        parser.addini(f"chaosmining_{key}", help_text, default="")


@dataclass(frozen=True)
class Settings:
    """Resolved options of one pytest session, each field named as its option
    (``--chaosmining-builtin-results`` is ``builtin_results``); the defaults are the
    :data:`OPTIONS`' ."""

    enabled: bool
    tier: str
    report: Path | None
    cache: Path | None
    pack: Path | None  # None: no pack ('none'); the default is the shipped pack
    #: the built-ins' results: ``reuse`` those an earlier run cached, or ``recompute``
    builtin_results: str
    #: ``hold``: a built-in's check that a known library defect makes fail is a strict expected failure
    known_defects: str
    #: ``rotate``: own-merit checks on a suite's rotating cases (:mod:`~pytest_chaosmining.verdict.rotation`);
    #: ``all``: on every case
    own_merit: str
    #: ``needed``: only the example figures of failures; ``all``: every figure, from the run's results;
    #: ``models``: every figure, the examples from the trained models
    figures: str
    #: ``required``: a run that judges nothing fails; ``report-only``: it passes
    verdict: str
    call_timeout: float
    device: str | None
    explainers: tuple[str, ...]
    #: the suites to run (resolved: every registered suite unless ``--chaosmining-suites`` names some)
    suites: tuple[str, ...]
    seeds: int | range | None
    data: Path | None
    sweep: tuple[str, ...]
    thresholds: Path | None
    baseline: Path | None
    #: the baseline's explainers this run retires: their results are not missing
    retired: tuple[str, ...]
    #: one allowed drop for every metric (None: each metric's calibrated one)
    max_drop: float | None
    max_slowdown: float
    shard: tuple[int, int] | None
    ensemble: str
    precision: str
    #: the training modes, each once
    training: tuple[str, ...]
    sg_k: float
    sg_lambda: float
    #: which gradients saliency guided training masks the lowest of: ``signed`` or ``absolute``
    sg_gradient: str

    def guide(self) -> SaliencyGuided:
        """The saliency guided training settings of this session."""
        return SaliencyGuided(self.sg_k, self.sg_lambda, self.sg_gradient == "absolute")

    def guides(self) -> list[SaliencyGuided | None]:
        """One entry per selected training mode: None for standard training."""
        return [None if mode == STANDARD_TRAINING else self.guide() for mode in self.training]


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def parse_seeds(text: str) -> int | range:
    """``N`` (seeds 0..N-1) or ``A-B`` (seeds A..B inclusive), as ``--chaosmining-seeds`` takes them."""
    first, sep, last = text.strip().partition("-")
    try:
        if sep:
            span = range(int(first), int(last) + 1)
            if len(span) < 1:
                raise ValueError
            seeds: int | range = span
        else:
            seeds = int(first)
            if seeds < 1:
                raise ValueError
    except ValueError:
        raise ValueError(f"seeds {text!r}: a count N >= 1 or a range A-B with A <= B") from None
    return seeds


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` (the I-th of N shards, 1 <= I <= N), as ``--chaosmining-shard`` takes it."""
    index, sep, count = text.strip().partition("/")
    try:
        shard = (int(index), int(count))
        if not sep or not 1 <= shard[0] <= shard[1]:
            raise ValueError
    except ValueError:
        raise ValueError(f"shard {text!r}: I/N with 1 <= I <= N") from None
    return shard


@dataclass(frozen=True)
class Given:
    """One option's value as the user gave it: where from (``label``: the flag as typed, or
    the ini key and file) and the folder its relative paths start from."""

    value: Any
    base: Path
    label: str
    #: the option's default (:data:`OPTIONS`), taken where it is not given
    default: str | float | None = None

    def fail(self, allowed: str) -> NoReturn:
        """A usage error naming the option, its value and what is allowed."""
        raise pytest.UsageError(f"{self.label}: {self.value!r} is not allowed; {allowed}")

    def text(self) -> str:
        """The value as given, else the option's default (an option with one)."""
        return str(self.value if self.value is not None else self.default)

    def number(self, allowed: str, valid: Callable[[float], bool]) -> float:
        """The value as a finite number for which ``valid`` holds (the default where not given)."""
        if self.value is None:
            assert isinstance(self.default, float), self.label
            return self.default
        try:
            number = float(self.value)
        except (TypeError, ValueError):
            self.fail(allowed)
        if not math.isfinite(number) or not valid(number):
            self.fail(allowed)
        return number

    def parsed(self, parse: Callable[[str], T]) -> T | None:
        """``parse(value)``, its ``ValueError`` a usage error (None where not given)."""
        if self.value is None:
            return None
        try:
            return parse(str(self.value))
        except ValueError as exc:
            raise pytest.UsageError(f"{self.label}: {exc}") from None

    def path(self) -> Path | None:
        """The value as a path (relative to where it was given), or None."""
        return self.base / Path(str(self.value)).expanduser() if self.value else None

    def folder(self, must_exist: bool) -> Path | None:
        """:meth:`path`, which must be a folder (or, unless ``must_exist``, not yet exist)."""
        found = self.path()
        if found is not None and (found.exists() or must_exist) and not found.is_dir():
            self.fail("an existing folder" if must_exist else "a folder (not a file)")
        return found

    def names(self, known: Sequence[str], what: str) -> tuple[str, ...]:
        """The comma list's names, each one of ``known``."""
        names = _split(self.value)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise pytest.UsageError(
                f"{self.label}: unknown {what} {', '.join(unknown)}; choose from {', '.join(known)}"
            )
        return names


T = TypeVar("T")


def _retired(given: Given, baseline: object) -> tuple[str, ...]:
    """``--chaosmining-retired``: explainer names, given only beside a baseline (they retire its explainers)."""
    names = _split(given.value)
    if names and baseline is None:
        given.fail("explainers of a baseline, so --chaosmining-baseline too")
    return names


def _pack(given: Given) -> Path | None:
    """``--chaosmining-pack``: the shipped pack by default, ``none`` for no pack, else an existing folder."""
    if given.value is None:
        return SHIPPED
    if str(given.value).lower() == "none":
        return None
    return given.folder(must_exist=True)


def _thresholds_file(given: Given, shipped: Sequence[Path]) -> Path | None:
    """``--chaosmining-thresholds``: an existing, readable TOML file of threshold tables,
    each value of the kind the ``shipped`` tables hold there."""
    path = given.path()
    if path is None:
        return None
    try:
        Thresholds.load(shipped, path)
    except ValueError as exc:
        raise pytest.UsageError(f"{given.label}: {str(given.value)!r}: {exc}") from None
    return path


def _max_drop(given: Given) -> float | None:
    """``--chaosmining-max-drop``: a drop >= 0, or None (each metric's calibrated drop)."""
    return None if given.value is None else given.number("a drop >= 0", lambda d: d >= 0)


def option_label(config: pytest.Config, name: str) -> str:
    """How the user gave option ``name`` (``sweep``): the flag as typed, else its ini key and file."""
    if config.getoption(f"chaosmining_{name}") is not None:
        return f"--chaosmining-{name.replace('_', '-')}"
    return f"chaosmining_{name} in {Path(config.inipath).name if config.inipath else 'the ini file'}"


def resolve(config: pytest.Config, suite_names: Sequence[str], thresholds: Sequence[Path] = ()) -> Settings:
    """Read options (command line first, then ini) into :class:`Settings`
    (``suite_names``: the registered suites, in report order; ``thresholds``: their
    thresholds files, which a user's file must match in kind); a value that is not
    allowed raises ``pytest.UsageError`` naming the option as given and what it allows."""
    ini_dir = Path(config.inipath).parent if config.inipath else Path(config.invocation_params.dir)
    cwd = Path(config.invocation_params.dir)

    def get(name: str) -> Given:
        option = _BY_KEY[name]
        cli = config.getoption(f"chaosmining_{name}")
        if cli is not None:
            return Given(cli, cwd, option_label(config, name), option.default)
        ini = config.getini(f"chaosmining_{name}")
        given = Given(ini if ini != "" else None, ini_dir, option_label(config, name), option.default)
        if given.value is not None and option.choices is not None and ini not in option.choices:
            given.fail(f"choose from {', '.join(option.choices)}")  # the command line checks its own
        return given

    flag = config.getoption("chaosmining")
    enabled = bool(flag) if flag is not None else bool(config.getini("chaosmining"))
    given_training = get("training")
    training = given_training.names(TRAINING_MODES, "training mode(s)") or (str(given_training.default),)
    return Settings(
        enabled=enabled,
        tier=get("tier").text(),
        report=get("report").folder(must_exist=False),
        cache=get("cache").folder(must_exist=False),
        pack=_pack(get("pack")),
        builtin_results=get("builtin_results").text(),
        known_defects=get("known_defects").text(),
        own_merit=get("own_merit").text(),
        figures=get("figures").text(),
        verdict=get("verdict").text(),
        call_timeout=get("call_timeout").number("a number of seconds > 0", lambda t: t > 0),
        device=get("device").value,
        explainers=_split(get("explainers").value),
        suites=get("suites").names(suite_names, "suite(s)") or tuple(suite_names),
        seeds=get("seeds").parsed(parse_seeds),
        data=get("data").folder(must_exist=True),
        sweep=_split(get("sweep").value),
        thresholds=_thresholds_file(get("thresholds"), thresholds),
        baseline=get("baseline").path(),
        retired=_retired(get("retired"), get("baseline").value),
        max_drop=_max_drop(get("max_drop")),
        max_slowdown=get("max_slowdown").number("a factor >= 1", lambda f: f >= 1),
        ensemble=get("ensemble").text(),
        precision=get("precision").text(),
        shard=get("shard").parsed(parse_shard),
        training=tuple(dict.fromkeys(training)),
        sg_k=get("sg_k").number("a fraction in (0, 1)", lambda k: 0 < k < 1),
        sg_lambda=get("sg_lambda").number("a weight >= 0", lambda x: x >= 0),
        sg_gradient=get("sg_gradient").text(),
    )
