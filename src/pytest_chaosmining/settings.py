"""Command-line and ini options, resolved into one :class:`Settings`.

Every option can be given on the command line or as an ini / pyproject key of
the same name with ``-`` replaced by ``_`` (``chaosmining_tier = "paper"``).
The command line wins.  Relative paths from ini files are taken relative to the
ini file's directory.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_chaosmining.core.storage.pack_location import SHIPPED
from pytest_chaosmining.core.tiers import TIERS
from pytest_chaosmining.core.training.modes import PRECISIONS, TRAINING_MODES, SaliencyGuided

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
        "saliency guided training: fraction of inputs masked per sample (default 0.1)",
    ),
    (
        "sg-lambda",
        {"metavar": "X", "type": float},
        "saliency guided training: weight of the consistency term (default 1.0)",
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
        "call-timeout",
        {"metavar": "SECONDS", "type": float},
        "longest an explainer call may take before it is stopped and its test fails (default 600)",
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
        "memory over the baseline's, as a factor (default 2.0; plus 20 ms / 16 MiB of slack)",
    ),
]


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
    call_timeout_s: float = 600.0
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
    max_slowdown: float = 2.0
    shard: tuple[int, int] | None = None
    ensemble: str = "auto"
    precision: str = "fp32"
    trainings: tuple[str, ...] = ("standard",)
    sg_k: float = 0.1
    sg_lambda: float = 1.0
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
        raise ValueError(f"chaosmining_seeds must be a count N >= 1 or a range A-B with A <= B, got {text!r}") from None
    return seeds


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` (the I-th of N shards, 1 <= I <= N), as ``--chaosmining-shard`` takes it."""
    index, sep, count = text.strip().partition("/")
    try:
        shard = (int(index), int(count))
        if not sep or not 1 <= shard[0] <= shard[1]:
            raise ValueError
    except ValueError:
        raise ValueError(f"chaosmining_shard must be I/N with 1 <= I <= N, got {text!r}") from None
    return shard


def _pack(value: tuple[Any, Path]) -> Path | None:
    """``--chaosmining-pack``: the shipped pack by default, ``none`` for no pack, else a folder."""
    text, base = value
    if text is None:
        return SHIPPED
    return None if str(text).lower() == "none" else base / Path(str(text)).expanduser()


def resolve(config: pytest.Config, suite_names: Sequence[str]) -> Settings:
    """Read options (command line first, then ini) into :class:`Settings`
    (``suite_names``: the registered suites, in report order)."""
    ini_dir = Path(config.inipath).parent if config.inipath else Path(config.invocation_params.dir)
    cwd = Path(config.invocation_params.dir)

    def get(name: str) -> tuple[Any, Path]:
        cli = config.getoption(f"chaosmining_{name}")
        if cli is not None:
            return cli, cwd
        ini = config.getini(f"chaosmining_{name}")
        choices = _CHOICES.get(name)
        if ini != "" and choices is not None and ini not in choices:  # the command line checks its own
            raise pytest.UsageError(f"chaosmining_{name} = {ini!r} in the ini file: choose from {', '.join(choices)}")
        return (ini if ini != "" else None), ini_dir

    def path(name: str) -> Path | None:
        value, base = get(name)
        return (base / Path(value).expanduser()) if value else None

    flag = config.getoption("chaosmining")
    enabled = bool(flag) if flag is not None else bool(config.getini("chaosmining"))
    tier = get("tier")[0] or "smoke"
    if tier not in TIERS:
        raise ValueError(f"chaosmining_tier must be one of {TIERS}, got {tier!r}")
    suites = _split(get("suites")[0]) or tuple(suite_names)
    unknown = [s for s in suites if s not in suite_names]
    if unknown:
        raise ValueError(f"unknown suite(s) {unknown}; available: {list(suite_names)}")
    seeds = get("seeds")[0]
    max_drop = get("max_drop")[0]
    max_slowdown = float(get("max_slowdown")[0] or 2.0)
    if max_slowdown < 1.0:
        raise ValueError(f"chaosmining_max_slowdown must be a factor >= 1, got {max_slowdown}")
    trainings = _split(get("training")[0]) or ("standard",)
    unknown = [t for t in trainings if t not in TRAINING_MODES]
    if unknown:
        raise ValueError(f"unknown training mode(s) {unknown}; available: {list(TRAINING_MODES)}")
    gradient = get("sg_gradient")[0] or "signed"
    if gradient not in ("signed", "absolute"):
        raise ValueError(f"chaosmining_sg_gradient must be 'signed' or 'absolute', got {gradient!r}")
    sg_k, sg_lambda = get("sg_k")[0], get("sg_lambda")[0]
    settings = Settings(
        enabled=enabled,
        tier=tier,
        report_dir=path("report"),
        cache_dir=path("cache"),
        pack=_pack(get("pack")),
        reuse_builtin_results=(get("builtin_results")[0] or "reuse") == "reuse",
        call_timeout_s=float(get("call_timeout")[0] or 600.0),
        device=get("device")[0],
        explainers=_split(get("explainers")[0]),
        suites=suites,
        seeds=parse_seeds(str(seeds)) if seeds is not None else None,
        data_dir=path("data"),
        sweeps=_split(get("sweep")[0]),
        thresholds_file=path("thresholds"),
        baseline_file=path("baseline"),
        max_drop=float(max_drop) if max_drop is not None else None,
        max_slowdown=max_slowdown,
        ensemble=get("ensemble")[0] or "auto",
        precision=get("precision")[0] or "fp32",
        shard=parse_shard(str(get("shard")[0])) if get("shard")[0] else None,
        trainings=tuple(dict.fromkeys(trainings)),
        sg_k=float(sg_k) if sg_k is not None else 0.1,
        sg_lambda=float(sg_lambda) if sg_lambda is not None else 1.0,
        sg_absolute=gradient == "absolute",
    )
    settings.guide()  # raises ValueError on k outside (0, 1) or a negative lambda
    return settings
