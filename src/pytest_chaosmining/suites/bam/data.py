"""BAM-style data (Yang & Kim, ``papers/bam.txt`` §3): an object pasted into a
scene, each image carrying an object label and a scene label.

An object is rescaled to a side between 1/3 and 1/2 of the canvas and pasted at
a uniformly random position; only its pixels are pasted (a digit's strokes, or
the whole square of a CIFAR-10 image, which has no segmentation).  Every image
comes with three versions built from the same draws:

- ``images``: object on scene (X_{o,s});
- ``no_object``: the same scene without the object (X_{∅,s});
- ``gray``: the same object on a gray canvas (X_{o,g}).

``kind="common"`` builds the commonality sets X^k_{o,s}: scene labels only,
and the common feature (CF: objects of class ``CF_CLASS``) pasted into every
image of the first ``round(10·k)`` scene classes; other images carry no object.
``regions`` is where the object is (or, without one, where it would have been).

Sources: ``embedded`` (no download): scikit-learn's bundled digits as objects,
ten procedural scene classes (gratings of five orientations × two frequency
bands, random palettes, blobs and noise).  ``torchvision``: CIFAR-10 images as
objects and the first ten Flowers102 classes as scenes, read from
``data_dir`` (never downloaded); Flowers102 scenes train on its train and test
splits and validate on its val split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_chaosmining.suites.bam.data_spec import BamDataSpec
from pytest_chaosmining.testbeds.digits.data import cifar10, digit_pool, flowers102, require_dir, resize

N_CLASSES = 10
CF_CLASS = 0
GRAY = 128


@dataclass
class BamData:
    """Images ``(N, 3, S, S)`` uint8 in three versions, labels and object regions ``(N, S, S)`` bool."""

    images: np.ndarray
    no_object: np.ndarray
    gray: np.ndarray
    objects: np.ndarray
    scenes: np.ndarray
    regions: np.ndarray
    has_object: np.ndarray

    def __len__(self) -> int:
        return len(self.scenes)


# -- scenes --------------------------------------------------------------------
def embedded_scenes(spec: BamDataSpec, classes: np.ndarray) -> np.ndarray:
    """Procedural scenes ``(N, S, S, 3)`` uint8 of the given classes: a grating
    whose orientation (class mod 5) and frequency band (class // 5) name the
    class, in a random palette, with blobs and pixel noise."""
    rng = spec.rng("scene")
    size = spec.canvas
    yy, xx = np.mgrid[0:size, 0:size] / size
    out = np.empty((len(classes), size, size, 3))
    for i, c in enumerate(classes):
        theta = (int(c) % 5) * np.pi / 5 + rng.uniform(-0.1, 0.1)
        freq = rng.uniform(1.5, 2.5) if c < 5 else rng.uniform(4.5, 6.0)
        grating = np.sin(2 * np.pi * freq * (xx * np.cos(theta) + yy * np.sin(theta)) + rng.uniform(0, 2 * np.pi))
        blobs = np.zeros_like(xx)
        for _ in range(rng.integers(1, 4)):
            cx, cy, r = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1, 0.3)
            blobs += np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r**2))
        mix = 0.5 + 0.35 * grating + 0.15 * (blobs / max(blobs.max(), 1e-6) - 0.5)
        c0, c1 = rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
        out[i] = c0 + mix[..., None] * (c1 - c0) + rng.normal(0, 0.04, (size, size, 3))
    return (np.clip(out, 0, 1) * 255).astype(np.uint8)


def flowers_scenes(spec: BamDataSpec, classes: np.ndarray) -> np.ndarray:
    """Flowers102 images of classes 0-9 from ``data_dir`` (train + test splits for
    training, val for validation), random square crops resized to the canvas."""
    root = require_dir(spec)
    splits = ("train", "test") if spec.split == "train" else ("val",)
    pool: dict[int, list[tuple[Any, int]]] = {c: [] for c in range(N_CLASSES)}
    for split in splits:
        ds = flowers102(root, split)
        for idx, label in enumerate(ds._labels):
            if label < N_CLASSES:
                pool[int(label)].append((ds, idx))
    missing = [c for c, items in pool.items() if not items]
    if missing:
        raise ValueError(f"Flowers102 in {root} has no {spec.split} images of scene class(es) {missing}")
    rng = spec.rng("scene")
    out = np.empty((len(classes), spec.canvas, spec.canvas, 3), dtype=np.uint8)
    for i, c in enumerate(classes):
        ds, idx = pool[int(c)][int(rng.integers(0, len(pool[int(c)])))]
        img = np.asarray(ds[idx][0].convert("RGB"))
        h, w = img.shape[:2]
        side = int(rng.integers(min(h, w) * 2 // 3, min(h, w) + 1))
        y0, x0 = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
        crop = img[y0 : y0 + side, x0 : x0 + side]
        out[i] = resize(crop[None], spec.canvas)[0]
        if rng.random() < 0.5:
            out[i] = out[i, :, ::-1]
    return out


# -- objects -------------------------------------------------------------------
def _sides(spec: BamDataSpec, n: int) -> np.ndarray:
    return spec.rng("side").integers(-(-spec.canvas // 3), spec.canvas // 2 + 1, n)


def embedded_objects(spec: BamDataSpec, labels: np.ndarray, sides: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per image: a digit of the given label rendered at its side, as (RGB patch
    ``(s, s, 3)`` uint8, alpha ``(s, s)`` bool: the strokes)."""
    pool, targets = digit_pool(spec.split)
    rng = spec.rng("object")
    out = []
    for label, side in zip(labels, sides):
        choices = np.flatnonzero(targets == label)
        glyph = pool[choices[rng.integers(0, len(choices))]]
        big = resize((glyph[..., None].repeat(3, axis=2)[None] * 255).astype(np.uint8), int(side))[0, ..., 0] / 255
        colour = rng.uniform(0, 1, 3)
        colour[rng.integers(0, 3)] = rng.choice([0.05, 0.95])  # saturated, so it stands out of most palettes
        patch = np.broadcast_to((colour * 255).astype(np.uint8), (int(side), int(side), 3)).copy()
        out.append((patch, big > 0.35))
    return out


def cifar_objects(spec: BamDataSpec, labels: np.ndarray, sides: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per image: a CIFAR-10 image of the given label (train split for train, test
    for val) resized to its side; the whole square is the object."""
    ds = cifar10(require_dir(spec), train=spec.split == "train")
    targets = np.asarray(ds.targets)
    rng = spec.rng("object")
    out = []
    for label, side in zip(labels, sides):
        choices = np.flatnonzero(targets == label)
        if not len(choices):
            raise ValueError(f"CIFAR-10 in {spec.data_dir} has no {spec.split} images of class {label}")
        img = np.asarray(ds.data)[choices[rng.integers(0, len(choices))]]
        out.append((resize(img[None], int(side))[0], np.ones((int(side), int(side)), dtype=bool)))
    return out


# -- composition -----------------------------------------------------------------
def generate(spec: BamDataSpec) -> BamData:
    """Build one split (see the module docstring)."""
    rng = spec.rng("labels")
    n, size = spec.n, spec.canvas
    scenes = (np.full(n, spec.scene_class) if spec.scene_class is not None else rng.integers(0, N_CLASSES, n)).astype(
        np.int64
    )
    if spec.kind == "objects":
        objects = rng.integers(0, N_CLASSES, n).astype(np.int64)
        has_object = np.ones(n, dtype=bool)
    else:
        objects = np.full(n, CF_CLASS, dtype=np.int64)
        has_object = scenes < int(round(N_CLASSES * spec.k))
    if spec.source == "embedded":
        backgrounds = embedded_scenes(spec, scenes)
        make_objects = embedded_objects
    elif spec.source == "torchvision":
        backgrounds = flowers_scenes(spec, scenes)
        make_objects = cifar_objects
    else:
        raise ValueError(f"unknown BAM source {spec.source!r}")
    sides = _sides(spec, n)
    pasted = make_objects(spec, objects, sides)
    corners = spec.rng("position").integers(0, size - sides[:, None] + 1, (n, 2))
    images, gray = backgrounds.copy(), np.full_like(backgrounds, GRAY)
    regions = np.zeros((n, size, size), dtype=bool)
    for i, ((patch, alpha), (x, y)) in enumerate(zip(pasted, corners)):
        s = len(alpha)
        regions[i, y : y + s, x : x + s] = alpha
        gray[i][regions[i]] = patch[alpha]
        if has_object[i]:
            images[i][regions[i]] = patch[alpha]

    def chw(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a.transpose(0, 3, 1, 2))

    return BamData(chw(images), chw(backgrounds), chw(gray), objects, scenes, regions, has_object)
