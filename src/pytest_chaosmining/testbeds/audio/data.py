"""Audio data (ChaosMining §2.1, A.4): one speech channel among noise channels.

Each sample is ``channels`` waveforms of ``rate × duration`` samples.  One
channel carries a spoken word (the label); the others are noise:

- RB: ``clip(N(0, 1) · 0.25, ±1)``, as the paper;
- SB: random segments of rainforest recordings, each divided by its
  99th-percentile amplitude and clipped to ±1, as the paper.

The speech channel is channel 0 (FP, the paper) or a uniformly drawn channel
(RP).  Waveforms are stored as int16 (``value / 32767`` is the signal), so the
paper tier fits in memory (84,843 × 10 × 16,000 × 2 bytes ≈ 27 GB).

Sources, chosen by :class:`AudioSpec.source`:

- ``embedded`` (no download): foregrounds are synthesised word-like signals of
  10 classes named after the Speech Commands core words; each is a sequence of
  voiced segments (a glottal harmonic series shaped by moving formants, with a
  rising, falling or flat pitch contour), nasals, fricatives and plosive
  bursts; each utterance gets its own speaker (pitch 85–255 Hz, vocal-tract
  scale, tempo, loudness, onset).  Structural backgrounds are segments of
  synthesised rainforest recordings: coloured rain noise, insect buzz and bird
  chirps and trills.  Train and validation use disjoint recordings.
- ``files``: Speech Commands as distributed (class folders of 16 kHz WAVs,
  ``validation_list.txt``, ``testing_list.txt``; train = neither list) and the
  Rainforest Connection recordings (``train/`` for train, ``test/`` for
  validation), read with ``soundfile`` and resampled with torchaudio.  Never
  downloaded; see :func:`find_speech_commands` and :func:`find_rainforest`.

Everything is drawn from generators seeded by the spec.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import soundfile as sf
import torch
import torchaudio.functional as AF

from pytest_chaosmining.core.storage.decoding import decode_all
from pytest_chaosmining.testbeds.noise_conditions import (
    CONDITIONS,
    SPLITS,
    check_condition_and_split,
)

SCALE = 32767.0
AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg")


@dataclass(frozen=True)
class AudioSpec:
    """Everything that determines one audio dataset split."""

    condition: str  # RBFP, RBRP, SBFP, SBRP
    channels: int
    rate: int  # samples per second
    duration: float  # seconds
    n: int
    split: str
    seed: int
    source: str = "embedded"
    data_dir: str | None = None

    def __post_init__(self) -> None:
        check_condition_and_split(self.condition, self.split)
        if self.channels < 2:
            raise ValueError("an audio sample needs at least 2 channels (speech + noise)")
        if self.rate < 1000:
            raise ValueError("sample rate must be at least 1000 Hz")

    @property
    def length(self) -> int:
        return int(round(self.rate * self.duration))

    def rng(self, stream: str) -> np.random.Generator:
        parts = [
            CONDITIONS.index(self.condition),
            self.channels,
            self.rate,
            self.length,
            self.n,
            SPLITS.index(self.split),
            self.seed,
        ]
        return np.random.default_rng(np.random.SeedSequence(parts + [sum(map(ord, stream)), len(stream)]))


@dataclass
class AudioData:
    """Waveforms ``(N, C, T)`` int16, labels ``(N,)`` and the speech channel ``(N,)``."""

    waves: np.ndarray
    labels: np.ndarray
    channels: np.ndarray
    classes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.labels)


def to_int16(x: np.ndarray) -> np.ndarray:
    return np.round(np.clip(x, -1.0, 1.0) * SCALE).astype(np.int16)


# -- embedded speech-like foregrounds -------------------------------------------
# A segment: (kind, relative duration, (F1, F2) at start, (F1, F2) at end, pitch at start, pitch at end).
# kinds: v voiced vowel/glide, n nasal, s strong fricative, f weak fricative, p plosive (closure + burst).
_A, _AE, _E, _I, _U, _O, _UH, _AW = (
    (730, 1090),
    (660, 1720),
    (530, 1840),
    (270, 2290),
    (300, 870),
    (570, 840),
    (640, 1190),
    (600, 1000),
)
WORDS: dict[str, list[tuple]] = {
    "yes": [("v", 0.25, _I, _E, 1.0, 1.1), ("v", 0.35, _E, _E, 1.1, 0.95), ("s", 0.4, None, None, 0, 0)],
    "no": [("n", 0.25, (250, 1000), (250, 1000), 1.05, 1.0), ("v", 0.75, _O, _U, 1.0, 0.8)],
    "up": [("v", 0.7, _UH, _UH, 1.15, 1.0), ("p", 0.3, None, None, 0, 0)],
    "down": [
        ("p", 0.15, None, None, 0, 0),
        ("v", 0.6, _A, _U, 1.2, 0.85),
        ("n", 0.25, (250, 1400), (250, 1400), 0.85, 0.8),
    ],
    "left": [
        ("v", 0.2, (360, 1300), _E, 1.0, 1.05),
        ("v", 0.35, _E, _E, 1.05, 1.0),
        ("f", 0.25, None, None, 0, 0),
        ("p", 0.2, None, None, 0, 0),
    ],
    "right": [("v", 0.2, (350, 1100), _A, 0.9, 1.0), ("v", 0.55, _A, _I, 1.0, 1.2), ("p", 0.25, None, None, 0, 0)],
    "on": [("v", 0.6, _O, _O, 0.9, 1.05), ("n", 0.4, (250, 1400), (250, 1400), 1.05, 1.1)],
    "off": [("v", 0.55, _O, _AW, 1.1, 0.9), ("f", 0.45, None, None, 0, 0)],
    "stop": [
        ("s", 0.3, None, None, 0, 0),
        ("p", 0.1, None, None, 0, 0),
        ("v", 0.4, _AW, _O, 1.0, 1.0),
        ("p", 0.2, None, None, 0, 0),
    ],
    "go": [("p", 0.12, None, None, 0, 0), ("v", 0.88, _AE, _U, 0.95, 1.25)],
}
CLASSES = tuple(WORDS)
WORD_FRACTION = 0.55  # nominal share of the clip a word fills, before the speaker's tempo


def _ramp(n: int, rate: int, ms: float = 8.0) -> np.ndarray:
    """A raised-cosine attack and release, so segments do not click."""
    m = max(1, min(n // 2, int(rate * ms / 1000)))
    env = np.ones(n)
    edge = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, m))
    env[:m], env[n - m :] = edge, edge[::-1]
    return env


def _noise_band(rng: np.random.Generator, n: int, rate: int, lo: float, hi: float) -> np.ndarray:
    """White noise band-limited to ``[lo, hi]`` Hz by FFT masking."""
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / rate)
    spec[(f < lo) | (f > hi)] = 0
    out = np.fft.irfft(spec, n)
    return out / (np.abs(out).max() + 1e-9)


def synthesise_word(word: str, rng: np.random.Generator, rate: int, seconds: float) -> np.ndarray:
    """One utterance of ``word`` by a random speaker, about ``seconds`` long
    before the speaker's tempo; peak 1, no padding."""
    f0 = rng.uniform(85, 255)
    vt = rng.uniform(0.88, 1.15)  # vocal-tract scale: formants move together
    tempo = rng.uniform(0.8, 1.25)
    total = seconds * tempo
    nyq = rate / 2
    pieces = []
    for kind, rel, fa, fb, pa, pb in WORDS[word]:
        n = max(8, int(rate * total * rel * rng.uniform(0.85, 1.15)))
        t = np.arange(n) / rate
        if kind in ("v", "n"):
            pitch = f0 * np.linspace(pa, pb, n) * (1 + 0.01 * np.sin(2 * np.pi * rng.uniform(4, 7) * t))
            phase = 2 * np.pi * np.cumsum(pitch) / rate
            f1 = np.linspace(fa[0], fb[0], n) * vt
            f2 = np.linspace(fa[1], fb[1], n) * vt
            f3 = 2500 * vt
            seg = np.zeros(n)
            for h in range(1, int(min(4000, 0.95 * nyq) / (f0 * min(pa, pb))) + 1):
                fh = h * pitch
                gain = (
                    1 / (1 + ((fh - f1) / 90) ** 2)
                    + 0.7 / (1 + ((fh - f2) / 110) ** 2)
                    + 0.3 / (1 + ((fh - f3) / 150) ** 2)
                ) / h**0.5
                seg += np.where(fh < 0.95 * nyq, gain, 0.0) * np.sin(h * phase)
            seg *= 0.35 if kind == "n" else 1.0
        elif kind == "s":
            seg = 0.35 * _noise_band(rng, n, rate, 0.55 * nyq, 0.95 * nyq)
        elif kind == "f":
            seg = 0.15 * _noise_band(rng, n, rate, 0.2 * nyq, 0.95 * nyq)
        else:  # plosive: a closure, then a short broadband burst
            seg = np.zeros(n)
            burst = min(n, int(rate * 0.012))
            seg[n - burst :] = 0.6 * _noise_band(rng, burst, rate, 0.1 * nyq, 0.9 * nyq)
        pieces.append(seg * _ramp(n, rate) / (np.abs(seg).max() + 1e-9) * (np.abs(seg).max() > 0))
    wave = np.concatenate(pieces)
    return wave / (np.abs(wave).max() + 1e-9)


def embedded_speech(spec: AudioSpec) -> tuple[np.ndarray, np.ndarray]:
    """``(N, T)`` float word utterances (zero-padded at a random onset) and labels.
    Train and validation draw different speakers from different streams."""
    rng = spec.rng("speech")
    labels = rng.integers(0, len(CLASSES), spec.n)
    out = np.zeros((spec.n, spec.length))
    for i, label in enumerate(labels):
        word = synthesise_word(CLASSES[label], rng, spec.rate, WORD_FRACTION * spec.duration)[: spec.length]
        onset = rng.integers(0, spec.length - len(word) + 1)
        out[i, onset : onset + len(word)] = word * rng.uniform(0.5, 1.0)
    out += rng.normal(0, 0.005, out.shape)  # a quiet recording floor
    return out, labels.astype(np.int64)


# -- embedded rainforest-like backgrounds -----------------------------------------
def synthesise_rainforest(rng: np.random.Generator, seconds: float, rate: int) -> np.ndarray:
    """A rainforest-like recording: coloured rain noise with slow swells, a few
    insects (amplitude-modulated harmonic buzz that starts and stops) and birds
    (frequency sweeps and trills with a harmonic)."""
    n = int(seconds * rate)
    t = np.arange(n) / rate
    nyq = rate / 2
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / rate)
    spec /= np.maximum(f, 20.0) ** (rng.uniform(0.5, 1.5) / 2)
    rain = np.fft.irfft(spec, n)
    rain /= np.abs(rain).std() + 1e-9
    swell = 1 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.05, 0.3) * t + rng.uniform(0, 6.3))
    out = rng.uniform(0.1, 0.5) * rain * swell
    for _ in range(rng.integers(1, 4)):  # insects
        carrier = rng.uniform(0.25, 0.85) * nyq
        am = 0.5 + 0.5 * np.sign(np.sin(2 * np.pi * rng.uniform(15, 60) * t))
        on = np.sin(2 * np.pi * rng.uniform(0.1, 0.5) * t + rng.uniform(0, 6.3)) > rng.uniform(-0.5, 0.5)
        buzz = np.sin(2 * np.pi * carrier * t) + 0.3 * np.sin(2 * np.pi * min(2 * carrier, 0.95 * nyq) * t)
        out += rng.uniform(0.1, 0.4) * buzz * am * on
    for _ in range(int(rng.poisson(2.5 * seconds))):  # birds
        dur = rng.uniform(0.05, 0.25)
        m = int(dur * rate)
        start = int(rng.integers(0, max(1, n - m)))
        fa, fb = rng.uniform(0.2, 0.8, 2) * nyq
        reps = int(rng.integers(1, 5))  # a trill repeats a short sweep
        tt = np.arange(m) / rate
        sweep = fa + (fb - fa) * ((tt * reps / dur) % 1.0)
        phase = 2 * np.pi * np.cumsum(sweep) / rate
        call = (np.sin(phase) + 0.3 * np.sin(2 * phase) * (2 * sweep.max() < nyq)) * np.hanning(m)
        out[start : start + m] += rng.uniform(0.3, 1.2) * call[: n - start]
    return out


def segments(recordings: list[np.ndarray], count: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random segments of ``length`` samples from ``recordings``, each
    divided by its 99th-percentile amplitude and clipped to ±1 (the paper's rule).
    A recording shorter than ``length`` is zero-padded."""
    out = np.zeros((count, length))
    which = rng.integers(0, len(recordings), count)
    for i, r in enumerate(which):
        rec = recordings[r]
        start = int(rng.integers(0, max(1, len(rec) - length + 1)))
        seg = rec[start : start + length]
        out[i, : len(seg)] = seg
    p99 = np.percentile(np.abs(out), 99, axis=1, keepdims=True)
    return np.clip(out / np.maximum(p99, 1e-9), -1.0, 1.0)


def embedded_recordings(spec: AudioSpec) -> list[np.ndarray]:
    """The synthesised recordings of a split: 8 × 30 s for train, 4 × 30 s for
    validation, from separate seeded streams (no recording is shared)."""
    rng = spec.rng(f"forest-{spec.split}")
    return [synthesise_rainforest(rng, 30.0, spec.rate) for _ in range(8 if spec.split == "train" else 4)]


def random_background(spec: AudioSpec, count: int) -> np.ndarray:
    """``clip(N(0, 1) · 0.25, ±1)``, as the paper."""
    return np.clip(spec.rng("bg").standard_normal((count, spec.length)) * 0.25, -1.0, 1.0)


# -- real sources ------------------------------------------------------------------
def _read(path: Path, rate: int, start: int = 0, frames: int = -1) -> np.ndarray:
    """A mono float waveform read with soundfile (first channel), resampled to ``rate``."""
    data, native = sf.read(str(path), start=start, frames=frames, dtype="float32", always_2d=True)
    wave = data[:, 0]
    if native != rate:
        wave = AF.resample(torch.from_numpy(np.ascontiguousarray(wave)), native, rate).numpy()
    return wave.astype(np.float64)


def _require_dir(spec: AudioSpec) -> Path:
    if not spec.data_dir:
        raise ValueError(f"source {spec.source!r} needs a data directory (--chaosmining-data)")
    return Path(spec.data_dir)


def find_speech_commands(root: str | Path) -> Path:
    """The Speech Commands folder under ``root``: ``root`` itself, or
    ``SpeechCommands/speech_commands_v0.0{2,1}`` (torchaudio's layout),
    ``speech_commands_v0.0{2,1}`` or ``speech_commands``."""
    root = Path(root)
    names = [
        "",
        "SpeechCommands/speech_commands_v0.02",
        "SpeechCommands/speech_commands_v0.01",
        "speech_commands_v0.02",
        "speech_commands_v0.01",
        "speech_commands",
    ]
    for name in names:
        folder = root / name
        if (folder / "validation_list.txt").is_file():
            return folder
    raise FileNotFoundError(
        f"no Speech Commands folder (one with validation_list.txt) in {root} or its subfolders "
        f"{', '.join(n for n in names if n)}; select other suites with --chaosmining-suites"
    )


def speech_commands_files(folder: Path, split: str) -> tuple[list[Path], tuple[str, ...]]:
    """Sorted files of a split and the sorted class names.  ``val`` is
    ``validation_list.txt``; ``train`` is every clip in neither list."""
    classes = tuple(sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("_")))
    listed = {
        name: set((folder / f"{name}_list.txt").read_text().split())
        if (folder / f"{name}_list.txt").is_file()
        else set()
        for name in ("validation", "testing")
    }
    files = []
    for cls in classes:
        for path in sorted((folder / cls).glob("*.wav")):
            rel = f"{cls}/{path.name}"
            in_val, in_test = rel in listed["validation"], rel in listed["testing"]
            if (split == "val" and in_val) or (split == "train" and not in_val and not in_test):
                files.append(path)
    if not files:
        raise FileNotFoundError(f"no {split} clips in {folder}")
    return files, classes


def speech_commands(spec: AudioSpec) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """``spec.n`` clips of the split (all of them, shuffled, if there are fewer or
    as many; repeated if more are asked for), zero-padded or cut to the spec's length."""
    files, classes = speech_commands_files(find_speech_commands(_require_dir(spec)), spec.split)
    rng = spec.rng("speech")
    idx = rng.permutation(len(files)) if spec.n <= len(files) else rng.integers(0, len(files), spec.n)
    chosen = [files[j] for j in idx[: spec.n]]
    waves = decode_all(functools.partial(_read, rate=spec.rate), chosen)
    out = np.zeros((spec.n, spec.length))
    labels = np.empty(spec.n, dtype=np.int64)
    for i, (path, wave) in enumerate(zip(chosen, waves)):
        wave = wave[: spec.length]
        out[i, : len(wave)] = wave
        labels[i] = classes.index(path.parent.name)
    return out, labels, classes


def find_rainforest(root: str | Path) -> Path:
    """The Rainforest Connection folder under ``root`` (Kaggle's
    ``rfcx-species-audio-detection`` or ``rainforest``), holding ``train/`` and ``test/``."""
    root = Path(root)
    for name in ("rfcx-species-audio-detection", "rainforest", ""):
        folder = root / name
        if (folder / "train").is_dir() and (folder / "test").is_dir():
            return folder
    raise FileNotFoundError(
        f"no Rainforest Connection folder (with train/ and test/) in {root}: expected "
        f"{root / 'rfcx-species-audio-detection'} or {root / 'rainforest'}"
    )


def rainforest_recordings(spec: AudioSpec, max_files: int = 256) -> list[np.ndarray]:
    """Up to ``max_files`` recordings of the split (``train/`` for train, ``test/``
    for validation), chosen by the seed, resampled to the spec's rate."""
    folder = find_rainforest(_require_dir(spec)) / ("train" if spec.split == "train" else "test")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in AUDIO_EXTENSIONS)
    if not files:
        raise FileNotFoundError(f"no recordings in {folder}")
    rng = spec.rng("forest-files")
    chosen = sorted(rng.choice(len(files), min(max_files, len(files)), replace=False))
    return decode_all(functools.partial(_read, rate=spec.rate), [files[i] for i in chosen])


# -- composition ---------------------------------------------------------------------
def speech_channels(spec: AudioSpec) -> np.ndarray:
    """The speech channel of each sample: 0 for FP, uniform for RP."""
    if spec.condition.endswith("FP"):
        return np.zeros(spec.n, dtype=np.int64)
    return spec.rng("pos").integers(0, spec.channels, spec.n)


def generate(spec: AudioSpec) -> AudioData:
    """Build one split of one condition."""
    if spec.source == "embedded":
        speech, labels = embedded_speech(spec)
        classes = CLASSES
        recordings = embedded_recordings if spec.condition.startswith("SB") else None
    elif spec.source == "files":
        speech, labels, classes = speech_commands(spec)
        recordings = rainforest_recordings if spec.condition.startswith("SB") else None
    else:
        raise ValueError(f"unknown audio source {spec.source!r}")
    peak = np.abs(speech).max(axis=1, keepdims=True)
    speech = speech / np.maximum(peak, 1e-9)  # every channel spans [-1, 1], as the paper
    count = spec.n * (spec.channels - 1)
    if recordings is None:
        noise = random_background(spec, count)
    else:
        noise = segments(recordings(spec), count, spec.length, spec.rng("bg"))
    noise = noise.reshape(spec.n, spec.channels - 1, spec.length)
    where = speech_channels(spec)
    waves = np.empty((spec.n, spec.channels, spec.length), dtype=np.int16)
    for i, c in enumerate(where):
        waves[i, c] = to_int16(speech[i])
        waves[i, np.arange(spec.channels) != c] = to_int16(noise[i])
    return AudioData(waves, labels, where, tuple(classes))


def load_published(folder: str | Path, limit: int | None = None) -> AudioData:
    """Read a published ChaosMining audio folder (e.g. ``RBFP/``): multi-channel
    WAVs plus ``meta_data.csv`` whose first three columns are audio id, label and
    the speech channel (read by position).  Labels are kept as written: integer
    labels as they are, class names mapped to their index in sorted order."""
    folder = Path(folder)
    meta = pd.read_csv(folder / "meta_data.csv")
    if meta.shape[1] < 3:
        raise ValueError(f"{folder / 'meta_data.csv'}: expected at least 3 columns (id, label, position)")
    if limit is not None:
        meta = meta.iloc[:limit]
    raw_labels = meta.iloc[:, 1].tolist()
    if all(isinstance(v, (int, np.integer)) for v in raw_labels):
        classes = tuple(str(v) for v in sorted(set(raw_labels)))
        labels = np.asarray(raw_labels, dtype=np.int64)
    else:
        classes = tuple(sorted({str(v) for v in raw_labels}))
        labels = np.asarray([classes.index(str(v)) for v in raw_labels], dtype=np.int64)
    waves = []
    for audio_id in meta.iloc[:, 0]:
        data, _ = sf.read(str(_find_audio(folder, str(audio_id))), dtype="float32", always_2d=True)
        waves.append(to_int16(data.T))
    return AudioData(np.stack(waves), labels, meta.iloc[:, 2].to_numpy(dtype=np.int64), classes)


def _find_audio(folder: Path, audio_id: str) -> Path:
    for base in (folder, folder / "audio", folder / "audios"):
        for name in (audio_id, *(audio_id + ext for ext in AUDIO_EXTENSIONS)):
            if (base / name).is_file():
                return base / name
    raise FileNotFoundError(f"audio {audio_id!r} not found in {folder}, {folder / 'audio'} or {folder / 'audios'}")
