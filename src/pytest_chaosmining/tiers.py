"""Tier definitions: how big each suite runs at ``smoke``, ``ci`` and ``paper``.

``paper`` is REFERENCE §1: 10,000 samples, 100 noise features, label noise
0.01, MLP 3×100 GELU, Adam lr 1e-3, 1000 full-batch epochs, 5 seeds.  The
smaller tiers keep the model and the metrics and shrink data and epochs,
raising the learning rate so that the fewer full-batch steps still converge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TIERS = ("smoke", "ci", "paper")

#: ``--chaosmining-seeds``: a count N (seeds 0..N-1) or an explicit range of seeds
Seeds = int | range


def seed_range(tier_seeds: int, seeds: "Seeds | None") -> range:
    """The seeds to run: the tier's count, a count ``N`` (0..N-1) or an explicit range."""
    if seeds is None:
        return range(tier_seeds)
    return range(seeds) if isinstance(seeds, int) else seeds



@dataclass(frozen=True)
class SymbolicTier:
    """Default condition, model and training of the symbolic suite in one tier."""

    n_samples: int
    noise_features: int
    label_noise: float
    width: int
    depth: int
    dropout: float
    optimizer: str
    lr: float
    epochs: int
    seeds: int
    formulas: tuple[int, ...] = tuple(range(1, 16))
    #: one-factor variations of the default condition (ChaosMining Figure 4),
    #: run only when selected with ``--chaosmining-sweep``.
    sweeps: dict[str, tuple] = field(default_factory=dict)


FIGURE4_SWEEPS: dict[str, tuple] = {
    "noise_features": (0, 50, 100, 150, 200),
    "label_noise": (0.0, 0.01, 0.02, 0.04, 0.08, 0.16),
    "n_samples": (2000, 5000, 10000, 20000),
    "optimizer": ("adam", "adamw", "rmsprop", "adagrad", "sgd", "asgd"),
    "lr": (1e-4, 1e-3, 1e-2),
    "width": (50, 100, 200, 400),
    "depth": (1, 2, 3, 4, 5),
    "dropout": (0.0, 0.1, 0.2, 0.3),
}

SYMBOLIC: dict[str, SymbolicTier] = {
    "smoke": SymbolicTier(
        n_samples=2000, noise_features=20, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=1e-2, epochs=150, seeds=1,
        sweeps={"noise_features": (0, 20, 50), "label_noise": (0.01, 0.16)},
    ),
    "ci": SymbolicTier(
        n_samples=6000, noise_features=100, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=3e-3, epochs=400, seeds=2,
        sweeps={"noise_features": (0, 50, 100, 200), "label_noise": (0.01, 0.04, 0.16)},
    ),
    "paper": SymbolicTier(
        n_samples=10000, noise_features=100, label_noise=0.01, width=100, depth=3, dropout=0.0,
        optimizer="adam", lr=1e-3, epochs=1000, seeds=5, sweeps=FIGURE4_SWEEPS,
    ),
}


@dataclass(frozen=True)
class VisionTier:
    """Sizes, models and training of the vision suite in one tier (canvas = 7 × fg)."""

    fg: int
    n_train: int
    n_val: int
    models: tuple[str, ...]
    epochs: int
    batch_size: int
    lr: float
    seeds: int
    n_explain: int
    internal_batch_size: int
    conditions: tuple[str, ...] = ("RBFP", "RBRP", "SBFP", "SBRP")
    n_check: int = 32  # images attributed on the untrained model (model-randomisation check)


PAPER_VISION_MODELS = ("alexnet", "densenet121", "googlenet", "resnet18", "resnet50", "vgg13", "vit_b_16", "vit_l_32")

VISION: dict[str, VisionTier] = {
    "smoke": VisionTier(fg=6, n_train=4000, n_val=200, models=("small_cnn",), epochs=8, batch_size=32, lr=3e-3,
                        seeds=1, n_explain=32, internal_batch_size=320),
    "ci": VisionTier(fg=8, n_train=6000, n_val=500, models=("small_cnn",), epochs=12, batch_size=32, lr=3e-3,
                     seeds=1, n_explain=100, internal_batch_size=500),
    "paper": VisionTier(fg=32, n_train=50000, n_val=10000, models=PAPER_VISION_MODELS, epochs=30, batch_size=128,
                        lr=1e-3, seeds=5, n_explain=1000, internal_batch_size=100),
}


@dataclass(frozen=True)
class AudioTier:
    """Sizes, models and training of the audio suite in one tier.

    ``stride`` is the Conv1d front end's stride (the body sees ``rate ×
    duration / stride`` steps); the Transformer trains at ``transformer_lr``
    (paper: 1e-4 against 1e-3 for the others).
    """

    channels: int
    rate: int
    duration: float
    n_train: int
    n_val: int
    models: tuple[str, ...]
    epochs: int
    batch_size: int
    lr: float
    transformer_lr: float
    stride: int
    seeds: int
    n_explain: int
    internal_batch_size: int
    n_check: int  # clips attributed on the untrained model (model-randomisation check)
    conditions: tuple[str, ...] = ("RBFP", "RBRP", "SBFP", "SBRP")

    def lr_for(self, model: str) -> float:
        return self.transformer_lr if model == "transformer" else self.lr


PAPER_AUDIO_MODELS = ("rnn", "lstm", "tcn", "transformer")

AUDIO: dict[str, AudioTier] = {
    "smoke": AudioTier(channels=4, rate=4000, duration=0.5, n_train=2000, n_val=200, models=("tcn",), epochs=6,
                       batch_size=64, lr=3e-3, transformer_lr=1e-3, stride=32, seeds=1, n_explain=32,
                       internal_batch_size=320, n_check=32),
    "ci": AudioTier(channels=8, rate=4000, duration=0.5, n_train=4000, n_val=400, models=PAPER_AUDIO_MODELS, epochs=8,
                    batch_size=64, lr=3e-3, transformer_lr=1e-3, stride=32, seeds=1, n_explain=64,
                    internal_batch_size=640, n_check=32),
    "paper": AudioTier(channels=10, rate=16000, duration=1.0, n_train=84843, n_val=9981, models=PAPER_AUDIO_MODELS,
                       epochs=30, batch_size=128, lr=1e-3, transformer_lr=1e-4, stride=16, seeds=5, n_explain=1000,
                       internal_batch_size=100, n_check=200),
}


@dataclass(frozen=True)
class RFETier:
    """Datasets and training of the RFEwNA suite in one tier (ChaosMining §4, A.5).

    Regression: formulas with ``noise_features`` noise columns (the reference:
    10–14 with 150).  Classification: a generated set (``clf_*``) and, when its
    CSV is on disk, Santander (balanced rows capped at ``santander_rows``,
    ``santander_select`` features kept).  Every round trains with Adam at ``lr``.
    """

    formulas: tuple[int, ...]
    n_samples: int
    noise_features: int
    epochs: int
    lr: float
    seeds: int
    clf_samples: int
    clf_features: int
    clf_informative: int
    clf_epochs: int
    clf_batch_size: int | None
    santander_rows: int = 6016
    santander_select: int = 23
    step: float = 0.5


RFE_TIERS: dict[str, RFETier] = {
    "smoke": RFETier(formulas=(10, 12), n_samples=1500, noise_features=150, epochs=150, lr=1e-2, seeds=1,
                     clf_samples=1000, clf_features=100, clf_informative=5, clf_epochs=150, clf_batch_size=None,
                     santander_rows=2000),
    "ci": RFETier(formulas=(10, 11, 12, 13, 14), n_samples=3000, noise_features=150, epochs=300, lr=3e-3, seeds=1,
                  clf_samples=2000, clf_features=100, clf_informative=6, clf_epochs=300, clf_batch_size=None,
                  santander_rows=6016),
    "paper": RFETier(formulas=(10, 11, 12, 13, 14), n_samples=10000, noise_features=150, epochs=1000, lr=1e-3,
                     seeds=5, clf_samples=6016, clf_features=369, clf_informative=10, clf_epochs=500,
                     clf_batch_size=1000, santander_rows=6016),
}


@dataclass(frozen=True)
class SaliencyTier:
    """What the saliency guided training suite compares in one tier: a few
    formulas, vision and audio conditions of the same tier's suites, each over
    ``seeds`` seeds (at least 2: the report gives the spread of paired
    differences).  ``vision_sizes`` / ``audio_sizes`` override fields of that
    tier's vision / audio settings (guided training costs about 3× standard);
    where they are empty, the standard models are shared with those suites
    through the cache."""

    seeds: int
    formulas: tuple[int, ...]
    vision_conditions: tuple[str, ...]
    vision_model: str
    audio_conditions: tuple[str, ...]
    audio_model: str
    vision_sizes: dict = field(default_factory=dict)
    audio_sizes: dict = field(default_factory=dict)


SALIENCY: dict[str, SaliencyTier] = {
    # smoke leaves vision out: two seeds of a guided small_cnn alone take ~3 min on 2 cores
    "smoke": SaliencyTier(seeds=2, formulas=(2, 6), vision_conditions=(), vision_model="small_cnn",
                          audio_conditions=("SBFP",), audio_model="tcn"),
    "ci": SaliencyTier(seeds=2, formulas=(1, 6, 9), vision_conditions=("SBFP",), vision_model="small_cnn",
                       audio_conditions=("SBFP",), audio_model="tcn"),
    "paper": SaliencyTier(seeds=5, formulas=tuple(range(1, 16)), vision_conditions=("RBFP", "SBFP"),
                          vision_model="resnet18", audio_conditions=("RBFP", "SBFP"), audio_model="tcn"),
}


@dataclass(frozen=True)
class IteroarTier:
    """What the IteROAR suite runs in one tier: chains on ``conditions`` of the
    same tier's vision data and ``model`` (``vision_sizes`` overrides that tier's
    sizes; where it is empty f_0 is the vision suite's cached model).  Each mask
    removes ``1 − tau`` of the canvas, ``iterations`` times (ρ = iterations ×
    (1 − τ); IteROAR: τ = 0.95, ρ = 0.5, so 10 iterations).  Retraining is
    ``retrain_epochs`` epochs warm-started on the first ``n_retrain`` training
    images, or from scratch on all of them where ``retrain_epochs`` is None."""

    conditions: tuple[str, ...]
    model: str
    iterations: int
    tau: float
    fills: tuple[str, ...]
    n_retrain: int
    retrain_epochs: int | None
    n_explain: int
    seeds: int
    vision_sizes: dict = field(default_factory=dict)


ITEROAR: dict[str, IteroarTier] = {
    # smoke: the fixed position, where the smoke vision model learns on every seed (SBRP reached the
    # f_0 gate on 2 of 8 calibration seeds); a centre prior that ignores the model would remove the
    # foreground too, and fails the model-randomisation check (training_gain) instead
    "smoke": IteroarTier(conditions=("SBFP",), model="small_cnn", iterations=1, tau=0.95, fills=("zero",),
                         n_retrain=1000, retrain_epochs=3, n_explain=200, seeds=1),
    "ci": IteroarTier(conditions=("SBRP",), model="small_cnn", iterations=3, tau=0.95, fills=("zero", "mean"),
                      n_retrain=2000, retrain_epochs=3, n_explain=300, seeds=1,
                      vision_sizes={"fg": 6, "n_train": 4000, "n_val": 300, "epochs": 8}),
    "paper": IteroarTier(conditions=("RBRP", "SBRP"), model="resnet50", iterations=10, tau=0.95,
                         fills=("zero", "mean"), n_retrain=50000, retrain_epochs=None, n_explain=1000, seeds=3),
}


@dataclass(frozen=True)
class BamTier:
    """Sizes and training of the BAM suite in one tier: f_o, f_s and one scene
    model per commonality in ``ks`` (the last, normally 1.0, is the reference of
    MCS_k), on a ``canvas``-px canvas; ``delta_steps`` gradient steps find IIR's δ."""

    canvas: int
    n_train: int
    n_val: int
    model: str
    epochs: int
    batch_size: int
    lr: float
    seeds: int
    ks: tuple[float, ...]
    n_explain: int
    internal_batch_size: int
    delta_steps: int


BAM: dict[str, BamTier] = {
    "smoke": BamTier(canvas=32, n_train=3000, n_val=300, model="small_cnn", epochs=8, batch_size=32, lr=3e-3,
                     seeds=1, ks=(0.1, 1.0), n_explain=150, internal_batch_size=300, delta_steps=100),
    "ci": BamTier(canvas=40, n_train=5000, n_val=500, model="small_cnn", epochs=10, batch_size=32, lr=3e-3,
                  seeds=1, ks=(0.1, 0.3, 0.5, 0.7, 1.0), n_explain=300, internal_batch_size=300, delta_steps=100),
    "paper": BamTier(canvas=224, n_train=90000, n_val=10000, model="resnet50", epochs=30, batch_size=128, lr=1e-3,
                     seeds=3, ks=tuple(round(0.1 * i, 1) for i in range(1, 11)), n_explain=1000,
                     internal_batch_size=100, delta_steps=200),
}
