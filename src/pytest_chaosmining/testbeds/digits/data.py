"""Vision data (ChaosMining §2.1, A.3): a small foreground pasted into a canvas.

The canvas side is always 7 × the foreground side (paper: 32 px into 224 px),
so the 7×7 feature-ablation patch grid and the area ratio hold at every size.
Conditions: random background (RB, uniform integers 0–255 as the reference)
or structural background (SB); fixed position (FP, the centre: 3 × fg, i.e.
(96, 96) at paper size) or random position (RP, uniform in [0, 6 × fg]).

Sources, chosen by :class:`VisionDataSpec.source`:

- ``embedded`` (no download): foregrounds are scikit-learn's bundled 8×8
  digits (10 classes), rendered in colour at foreground size; structural
  backgrounds are crops of scikit-learn's bundled photographs (flipped,
  colour-jittered) mixed with procedural textures.
- ``torchvision``: CIFAR-10 foregrounds and Flowers102 backgrounds read with
  torchvision's dataset classes from ``data_dir`` (never downloaded).

Train and validation sets come from disjoint source splits: digits by index,
photographs by region (left 60% train, right 40% validation), CIFAR-10
train/test, Flowers102 train/val.  Everything is drawn from generators seeded
by the spec, so the same spec always gives the same images.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F

from pytest_chaosmining.core.storage.decoding import decode_all
from pytest_chaosmining.testbeds.noise_conditions import (
    CONDITIONS,
    SPLITS,
    check_condition_and_split,
)


@dataclass(frozen=True)
class VisionDataSpec:
    """Everything that determines one vision dataset split."""

    condition: str  # RBFP, RBRP, SBFP, SBRP
    fg: int  # foreground side in pixels; canvas = 7 * fg
    n: int
    split: str
    seed: int
    source: str = "embedded"
    data_dir: str | None = None

    def __post_init__(self) -> None:
        check_condition_and_split(self.condition, self.split)
        if self.fg < 4:
            raise ValueError("foreground side must be at least 4 px")

    @property
    def canvas(self) -> int:
        return 7 * self.fg

    def rng(self, stream: str) -> np.random.Generator:
        parts = [CONDITIONS.index(self.condition), self.fg, self.n, SPLITS.index(self.split), self.seed]
        return np.random.default_rng(np.random.SeedSequence(parts + [sum(map(ord, stream))]))


@dataclass
class VisionData:
    """Images ``(N, 3, S, S)`` uint8, labels ``(N,)`` and boxes ``(N, 4)`` as
    ``(x, y, w, h)`` of the foreground in pixels (inclusive extent x..x+w-1)."""

    images: np.ndarray
    labels: np.ndarray
    boxes: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def resize(images: np.ndarray, size: int) -> np.ndarray:
    """Resize ``(N, H, W, 3)`` uint8 images to ``size``×``size`` (bilinear, antialiased)."""
    if images.shape[1] == size and images.shape[2] == size:
        return images
    t = torch.from_numpy(np.array(images)).permute(0, 3, 1, 2).float()
    out = F.interpolate(t, size=(size, size), mode="bilinear", antialias=True, align_corners=False)
    return out.round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).numpy()


# -- foregrounds -------------------------------------------------------------
def digit_pool(split: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    cut = int(len(digits.target) * 0.6)
    sl = slice(0, cut) if split == "train" else slice(cut, None)
    return digits.images[sl] / 16.0, digits.target[sl].astype(np.int64)


def embedded_foregrounds(spec: VisionDataSpec) -> tuple[np.ndarray, np.ndarray]:
    """Colour renderings of scikit-learn digits: random stroke and ground colours,
    slight noise, at ``spec.fg`` px.  Returns ``(N, fg, fg, 3)`` uint8 and labels."""
    pool, targets = digit_pool(spec.split)
    rng = spec.rng("fg")
    idx = rng.integers(0, len(pool), spec.n)
    glyph = resize((pool[idx][..., None].repeat(3, axis=3) * 255).astype(np.uint8), spec.fg) / 255.0
    stroke = rng.uniform(0.55, 1.0, (spec.n, 1, 1, 3))
    ground = rng.uniform(0.0, 0.35, (spec.n, 1, 1, 3))
    img = ground + glyph * (stroke - ground) + rng.normal(0, 0.03, glyph.shape)
    return (np.clip(img, 0, 1) * 255).astype(np.uint8), targets[idx]


def cifar_foregrounds(spec: VisionDataSpec) -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-10 images from ``data_dir`` (train split for train, test split for val)."""
    ds = cifar10(require_dir(spec), train=spec.split == "train")
    idx = spec.rng("fg").integers(0, len(ds.targets), spec.n)
    return resize(np.asarray(ds.data)[idx], spec.fg), np.asarray(ds.targets, dtype=np.int64)[idx]


# -- backgrounds -------------------------------------------------------------
def random_backgrounds(spec: VisionDataSpec) -> np.ndarray:
    """Uniform integer noise 0–255, as the reference generator."""
    return spec.rng("bg").integers(0, 256, (spec.n, spec.canvas, spec.canvas, 3), dtype=np.uint8)


def _textures(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """Procedural structure: oriented gratings plus smooth blobs, random colours."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    out = np.empty((n, size, size, 3))
    for i in range(n):
        theta, freq, phase = rng.uniform(0, np.pi), rng.uniform(2, 10), rng.uniform(0, 2 * np.pi)
        grating = np.sin(2 * np.pi * freq * (xx * np.cos(theta) + yy * np.sin(theta)) + phase)
        blobs = np.zeros_like(xx)
        for _ in range(rng.integers(2, 6)):
            cx, cy, r = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.05, 0.3)
            blobs += np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r**2))
        mix = 0.5 + 0.25 * grating * rng.uniform(0.3, 1) + 0.25 * (blobs / max(blobs.max(), 1e-6) - 0.5)
        c0, c1 = rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
        out[i] = c0 + mix[..., None] * (c1 - c0)
    return (np.clip(out, 0, 1) * 255).astype(np.uint8)


def embedded_backgrounds(spec: VisionDataSpec) -> np.ndarray:
    """Crops of scikit-learn's sample photographs (region-split by train/val),
    flipped and colour-jittered, half of them blended with procedural textures."""
    from sklearn.datasets import load_sample_images

    rng = spec.rng("bg")
    photos = load_sample_images().images
    out = np.empty((spec.n, spec.canvas, spec.canvas, 3), dtype=np.uint8)
    crops = []
    for _ in range(spec.n):
        photo = photos[rng.integers(0, len(photos))]
        h, w = photo.shape[:2]
        lo, hi = (0, int(w * 0.6)) if spec.split == "train" else (int(w * 0.6), w)
        side = int(rng.integers(min(h, hi - lo) // 4, min(h, hi - lo)))
        x0 = int(rng.integers(lo, hi - side + 1))
        y0 = int(rng.integers(0, h - side + 1))
        crop = photo[y0 : y0 + side, x0 : x0 + side]
        crops.append(resize(crop[None], spec.canvas)[0])
    out[:] = np.stack(crops)
    flip = rng.random(spec.n) < 0.5
    out[flip] = out[flip, :, ::-1]
    gain = rng.uniform(0.6, 1.4, (spec.n, 1, 1, 3))
    out = np.clip(out * gain, 0, 255)
    textures = _textures(rng, spec.n, spec.canvas)
    blend = (rng.random(spec.n) < 0.5)[:, None, None, None] * rng.uniform(0.4, 0.8, (spec.n, 1, 1, 1))
    return (out * (1 - blend) + textures * blend).astype(np.uint8)


def flowers_backgrounds(spec: VisionDataSpec) -> np.ndarray:
    """Flowers102 images from ``data_dir`` resized to the canvas (train split for train, val for val)."""
    ds = flowers102(require_dir(spec), spec.split)
    idx = spec.rng("bg").integers(0, len(ds), spec.n)
    return np.stack(decode_all(functools.partial(_flower, ds, spec.canvas), [int(i) for i in idx]))


def _flower(ds: Any, canvas: int, i: int) -> np.ndarray:
    """Flowers102 image ``i`` of ``ds`` as RGB uint8, resized to ``canvas``."""
    return resize(np.asarray(ds[i][0].convert("RGB"))[None], canvas)[0]


class OnDisk(Protocol):
    """A data spec that may name a directory on disk."""

    @property
    def source(self) -> str: ...

    @property
    def data_dir(self) -> str | None: ...


def require_dir(spec: OnDisk) -> str:
    """The spec's data directory; ValueError where a disk source has none."""
    if not spec.data_dir:
        raise ValueError(f"source {spec.source!r} needs a data directory (--chaosmining-data)")
    return spec.data_dir


def cifar10(root: str, train: bool) -> Any:
    """The CIFAR-10 train or test split in ``root``, read by torchvision (never downloaded;
    torchvision's datasets load only where published images are read)."""
    from torchvision.datasets import CIFAR10

    return CIFAR10(root, train=train, download=False)


def flowers102(root: str, split: str) -> Any:
    """The Flowers102 ``split`` (train, val, test) in ``root``, read by torchvision (never downloaded)."""
    from torchvision.datasets import Flowers102

    return Flowers102(root, split=split, download=False)


# -- composition ---------------------------------------------------------------
def positions(spec: VisionDataSpec) -> np.ndarray:
    """Top-left corners ``(N, 2)`` as (x, y): the centre for FP, uniform for RP."""
    if spec.condition.endswith("FP"):
        return np.full((spec.n, 2), 3 * spec.fg, dtype=np.int64)
    return spec.rng("pos").integers(0, spec.canvas - spec.fg + 1, (spec.n, 2))


def compose(backgrounds: np.ndarray, foregrounds: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Paste each foreground at its corner; returns ``(N, 3, S, S)`` uint8."""
    out = backgrounds.copy()
    fg = foregrounds.shape[1]
    for img, patch, (x, y) in zip(out, foregrounds, corners):
        img[y : y + fg, x : x + fg] = patch
    return np.ascontiguousarray(out.transpose(0, 3, 1, 2))


def generate(spec: VisionDataSpec) -> VisionData:
    """Build one split of one condition."""
    if spec.source == "embedded":
        fgs, labels = embedded_foregrounds(spec)
        bgs = random_backgrounds(spec) if spec.condition.startswith("RB") else embedded_backgrounds(spec)
    elif spec.source == "torchvision":
        fgs, labels = cifar_foregrounds(spec)
        bgs = random_backgrounds(spec) if spec.condition.startswith("RB") else flowers_backgrounds(spec)
    else:
        raise ValueError(f"unknown vision source {spec.source!r}")
    corners = positions(spec)
    boxes = np.concatenate([corners, np.full((spec.n, 2), spec.fg)], axis=1)
    return VisionData(compose(bgs, fgs, corners), labels, boxes)


def load_published(folder: str | Path, limit: int | None = None) -> VisionData:
    """Read a published ChaosMining vision folder (e.g. ``RBFP/``): images plus
    ``meta_data.csv`` whose first four columns are image id, foreground label,
    x and y of the foreground (read by position: the reference's headers differ
    between its generator and its loader).  The foreground side is taken as
    canvas / 7."""
    import pandas as pd

    folder = Path(folder)
    meta = pd.read_csv(folder / "meta_data.csv")
    if meta.shape[1] < 4:
        raise ValueError(f"{folder / 'meta_data.csv'}: expected at least 4 columns (id, label, x, y)")
    if limit is not None:
        meta = meta.iloc[:limit]
    rows = list(meta.iloc[:, :4].itertuples(index=False))
    images = decode_all(_rgb_chw, [_find_image(folder, str(row[0])) for row in rows])
    labels, boxes = [], []
    for img, (_, label, x, y) in zip(images, rows):
        fg = img.shape[1] // 7
        labels.append(int(label))
        boxes.append((int(x), int(y), fg, fg))
    return VisionData(np.stack(images), np.asarray(labels, dtype=np.int64), np.asarray(boxes, dtype=np.int64))


def _rgb_chw(path: Path) -> np.ndarray:
    """The image at ``path`` as RGB uint8 ``(3, H, W)``."""
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).transpose(2, 0, 1)


def _find_image(folder: Path, image_id: str) -> Path:
    for base in (folder, folder / "images"):
        for name in (image_id, f"{image_id}.png", f"{image_id}.jpg", f"{image_id}.jpeg"):
            if (base / name).is_file():
                return base / name
    raise FileNotFoundError(f"image {image_id!r} not found in {folder} or {folder / 'images'}")
