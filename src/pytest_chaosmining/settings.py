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
from pytest_chaosmining.core.tiers import TIERS
from pytest_chaosmining.core.training.modes import PRECISIONS, TRAINING_MODES, SaliencyGuided
from pytest_chaosmining.explainers.contract import DEFAULT_CALL_TIMEOUT_S
from pytest_chaosmining.verdict.baseline import DEFAULT_MAX_SLOWDOWN
from pytest_chaosmining.verdict.thresholds import Thresholds

#: saliency guided training's defaults (the reference's)
GUIDE = SaliencyGuided()

_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("tier", {"choices": TIERS}, "suite size: smoke (default: calibrated bars, minutes on a CI runner), ci or paper"),
    ("report", {"metavar": "DIR"}, "write results.json, results.csv, report.md and plots to DIR"),
    ("cache", {"metavar": "DIR"}, "model cache directory (default: the user cache dir)"),
    ("device", {"metavar": "DEVICE"}, "torch device (default: cuda if available, else cpu)"),
    (
        "explainers",
        {"metavar": "NAMES"},
        "comma list of explainers to run (default: all registered; own: those you registered, and the control)",
    ),
    ("suites", {"metavar": "NAMES"}, "comma list of suites to run (default: all: {suites})"),
    ("seeds", {"metavar": "N|A-B"}, "number of seeds N (seeds 0..N-1) or an inclusive range A-B (default: the tier's)"),
    (
        "data",
        {"metavar": "DIR"},
        "real datasets on disk (CIFAR-10, Flowers102 as torchvision stores them; Speech Commands, "
        "Rainforest Connection, Santander); never downloaded",
    ),
    ("sweep", {"metavar": "FACTORS"}, "comma list of one-factor sweeps to add (ChaosMining Figure 4)"),
    (
        "training",
        {"metavar": "MODES"},
        "comma list of training modes of the symbolic, vision and audio models: standard (default), saliency-guided",
    ),
    (
        "sg-k",
        {"metavar": "K", "type": float},
        f"saliency guided training: fraction of inputs masked per sample (default {GUIDE.k:g})",
    ),
    (
        "sg-lambda",
        {"metavar": "X", "type": float},
        f"saliency guided training: weight of the consistency term (default {GUIDE.lam:g})",
    ),
    (
        "sg-gradient",
        {"choices": ("signed", "absolute")},
        "saliency guided training: mask the lowest signed (default, as the reference) or absolute gradients",
    ),
    (
        "ensemble",
        {"choices": ("auto", "on", "off")},
        "train same-shape networks as one batched ensemble (the "
        "symbolic MLPs, standard and saliency guided, and the networks of RFEwNA rounds side by side): on, off, or "
        "auto (default: on for CUDA, off on CPU, where it measured no faster)",
    ),
    (
        "precision",
        {"choices": PRECISIONS},
        "arithmetic of the vision and audio classifiers' standard training: "
        "fp32 (default) or bf16 (autocast, channels_last image batches; models keyed and named apart, "
        "weights kept fp32)",
    ),
    (
        "pack",
        {"metavar": "DIR|none"},
        "models shipped ready-trained: a pack folder, or 'none' to train every model "
        "(default: the pack shipped with the plugin)",
    ),
    (
        "builtin-results",
        {"choices": ("reuse", "recompute")},
        "the built-in explainers' scores: reuse those an earlier run cached (default) or recompute them",
    ),
    (
        "known-defects",
        {"choices": ("hold", "none")},
        "a built-in's check that a reported defect of its library makes fail: held as a strict expected "
        "failure (hold, default), or judged by the bar like any other (none: as before the defect was known)",
    ),
    (
        "verdict",
        {"choices": ("required", "report-only")},
        "required (default): a run that judges no test fails, never passes green; report-only: record and "
        "report without judging (a paper-tier table run), a run that judges nothing passes and says so",
    ),
    (
        "call-timeout",
        {"metavar": "SECONDS", "type": float},
        "longest an explainer call may take before it is stopped and its test fails "
        f"(default {DEFAULT_CALL_TIMEOUT_S:g})",
    ),
    (
        "shard",
        {"metavar": "I/N"},
        "run the I-th of N shards of the cases (a case's shard follows from its id, "
        "the same in every run); merge the shards' results.json with chaosmining-rebuild",
    ),
    ("thresholds", {"metavar": "FILE"}, "TOML file of thresholds overriding the shipped ones"),
    ("baseline", {"metavar": "FILE"}, "results.json of an earlier run; fail results that dropped"),
    (
        "max-drop",
        {"metavar": "X", "type": float},
        "largest allowed drop below the baseline, for every metric "
        "(default: each metric's calibrated drop, docs/ci.md)",
    ),
    (
        "max-slowdown",
        {"metavar": "FACTOR", "type": float},
        "largest allowed growth of an explainer's time and peak "
        f"memory over the baseline's, as a factor (default {DEFAULT_MAX_SLOWDOWN:g}; plus 20 ms / 16 MiB of slack)",
    ),
]


#: every option's name (``--chaosmining-<name>``)
OPTION_NAMES = tuple(name for name, _, _ in _OPTIONS)
#: the allowed values of the options that have them, by ini name
_CHOICES = {name.replace("-", "_"): kwargs["choices"] for name, kwargs, _ in _OPTIONS if "choices" in kwargs}


def add_options(parser: pytest.Parser, suite_names: Sequence[str]) -> None:
    """Register the ``--chaosmining*`` options and ini keys in one group
    (``suite_names``: the registered suites, for the help text)."""
    group = parser.getgroup("chaosmining", "ChaosMining attribution conformance")
    group.addoption("--chaosmining", action="store_true", default=None, help="run the ChaosMining conformance suites")
    parser.addini("chaosmining", "run the ChaosMining suites (like --chaosmining)", type="bool", default=False)
    for name, kwargs, template in _OPTIONS:
        help_text = template.replace("{suites}", ", ".join(suite_names))
        group.addoption(
            f"--chaosmining-{name}",
            dest=f"chaosmining_{name.replace('-', '_')}",
            default=None,
            help=help_text,
            **kwargs,
        )
        parser.addini(f"chaosmining_{name.replace('-', '_')}", help_text, default="")


@dataclass(frozen=True)
class Settings:
    """Resolved options of one pytest session."""

    enabled: bool
    tier: str = "smoke"
    report_dir: Path | None = None
    cache_dir: Path | None = None
    pack: Path | None = None  # None: no pack ('none'); the default is the shipped pack
    reuse_builtin_results: bool = True
    #: a built-in's check that a known library defect makes fail is a strict expected failure
    hold_known_defects: bool = True
    #: a run that judges nothing passes (``--chaosmining-verdict report-only``); by default it fails
    report_only: bool = False
    call_timeout_s: float = DEFAULT_CALL_TIMEOUT_S
    device: str | None = None
    explainers: tuple[str, ...] = ()
    #: the suites to run (resolved: every registered suite unless ``--chaosmining-suites`` names some)
    suites: tuple[str, ...] = ()
    seeds: int | range | None = None
    data_dir: Path | None = None
    sweeps: tuple[str, ...] = ()
    thresholds_file: Path | None = None
    baseline_file: Path | None = None
    #: one allowed drop for every metric (None: each metric's calibrated one)
    max_drop: float | None = None
    max_slowdown: float = DEFAULT_MAX_SLOWDOWN
    shard: tuple[int, int] | None = None
    ensemble: str = "auto"
    precision: str = "fp32"
    trainings: tuple[str, ...] = ("standard",)
    sg_k: float = GUIDE.k
    sg_lambda: float = GUIDE.lam
    sg_absolute: bool = False

    def guide(self) -> SaliencyGuided:
        """The saliency guided training settings of this session."""
        return SaliencyGuided(self.sg_k, self.sg_lambda, self.sg_absolute)

    def guides(self) -> list[SaliencyGuided | None]:
        """One entry per selected training mode: None for standard training."""
        return [None if mode == "standard" else self.guide() for mode in self.trainings]


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

    def fail(self, allowed: str) -> NoReturn:
        """A usage error naming the option, its value and what is allowed."""
        raise pytest.UsageError(f"{self.label}: {self.value!r} is not allowed; {allowed}")

    def number(self, allowed: str, valid: Callable[[float], bool], default: float) -> float:
        """The value as a finite number for which ``valid`` holds (``default`` where not given)."""
        if self.value is None:
            return default
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
    return None if given.value is None else given.number("a drop >= 0", lambda d: d >= 0, 0.0)


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
        cli = config.getoption(f"chaosmining_{name}")
        if cli is not None:
            return Given(cli, cwd, option_label(config, name))
        ini = config.getini(f"chaosmining_{name}")
        given = Given(ini if ini != "" else None, ini_dir, option_label(config, name))
        choices = _CHOICES.get(name)
        if given.value is not None and choices is not None and ini not in choices:  # the command line checks its own
            given.fail(f"choose from {', '.join(choices)}")
        return given

    flag = config.getoption("chaosmining")
    enabled = bool(flag) if flag is not None else bool(config.getini("chaosmining"))
    trainings = get("training").names(TRAINING_MODES, "training mode(s)") or ("standard",)
    sg_k = get("sg_k").number("a fraction in (0, 1)", lambda k: 0 < k < 1, GUIDE.k)
    sg_lambda = get("sg_lambda").number("a weight >= 0", lambda x: x >= 0, GUIDE.lam)
    return Settings(
        enabled=enabled,
        tier=get("tier").value or "smoke",
        report_dir=get("report").folder(must_exist=False),
        cache_dir=get("cache").folder(must_exist=False),
        pack=_pack(get("pack")),
        reuse_builtin_results=(get("builtin_results").value or "reuse") == "reuse",
        hold_known_defects=(get("known_defects").value or "hold") == "hold",
        report_only=get("verdict").value == "report-only",
        call_timeout_s=get("call_timeout").number("a number of seconds > 0", lambda t: t > 0, DEFAULT_CALL_TIMEOUT_S),
        device=get("device").value,
        explainers=_split(get("explainers").value),
        suites=get("suites").names(suite_names, "suite(s)") or tuple(suite_names),
        seeds=get("seeds").parsed(parse_seeds),
        data_dir=get("data").folder(must_exist=True),
        sweeps=_split(get("sweep").value),
        thresholds_file=_thresholds_file(get("thresholds"), thresholds),
        baseline_file=get("baseline").path(),
        max_drop=_max_drop(get("max_drop")),
        max_slowdown=get("max_slowdown").number("a factor >= 1", lambda f: f >= 1, DEFAULT_MAX_SLOWDOWN),
        ensemble=get("ensemble").value or "auto",
        precision=get("precision").value or "fp32",
        shard=get("shard").parsed(parse_shard),
        trainings=tuple(dict.fromkeys(trainings)),
        sg_k=sg_k,
        sg_lambda=sg_lambda,
        sg_absolute=(get("sg_gradient").value or "signed") == "absolute",
    )
