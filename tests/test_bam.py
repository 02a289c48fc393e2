import pickle

import numpy as np
import pytest

from pytest_chaosmining.suites.bam.data import CF_CLASS, GRAY, generate
from pytest_chaosmining.suites.bam.data_spec import BamDataSpec
from pytest_chaosmining.suites.bam.metrics import (
    input_dependence,
    input_independence,
    model_contrast,
    neutral_patch,
    normalised_maps,
    random_regions,
    region_attribution,
)


def test_object_scene_images_and_their_versions():
    d = generate(BamDataSpec("objects", 36, 20, "train", 0))
    assert d.images.shape == d.no_object.shape == d.gray.shape == (20, 3, 36, 36)
    assert set(d.objects) <= set(range(10)) and set(d.scenes) <= set(range(10))
    region = d.regions[:, None].repeat(3, axis=1)
    # the object is only where its region says, the scene is the same elsewhere
    assert (d.images[~region] == d.no_object[~region]).all()
    assert (d.gray[~region] == GRAY).all()
    assert (d.gray[region] == d.images[region]).all()
    for r in d.regions:
        ys, xs = np.nonzero(r)
        side = max(ys.max() - ys.min(), xs.max() - xs.min()) + 1
        assert 36 // 6 <= side <= 36 // 2


def test_deterministic_and_seeded():
    a, b = generate(BamDataSpec("objects", 24, 5, "val", 0)), generate(BamDataSpec("objects", 24, 5, "val", 0))
    c = generate(BamDataSpec("objects", 24, 5, "val", 1))
    assert np.array_equal(a.images, b.images) and not np.array_equal(a.images, c.images)


@pytest.mark.parametrize("k, expected", [(0.1, 1), (0.5, 5), (1.0, 10), (0.0, 0)])
def test_commonality_sets(k, expected):
    d = generate(BamDataSpec("common", 24, 200, "train", 0, k=k))
    assert (d.objects == CF_CLASS).all()
    assert np.array_equal(d.has_object, d.scenes < expected)
    assert (d.images[~d.has_object] == d.no_object[~d.has_object]).all()


def test_bad_specs():
    with pytest.raises(ValueError):
        BamDataSpec("dogs", 32, 1, "train", 0)
    with pytest.raises(ValueError):
        BamDataSpec("common", 32, 1, "train", 0, k=1.5)


def test_normalised_maps():
    attr = np.zeros((2, 3, 8, 8))
    attr[0, :, 2, 2] = 5.0
    attr[0, 0, 3, 3] = -1.0
    m = normalised_maps(attr)
    assert m.min() >= 0 and m.max() <= 1 and m[0, 2, 2] == 1.0
    assert (m[1] == 0).all()  # an all-zero map stays zero


def test_ties_never_count_as_attributed_less():
    g = np.array([0.3, 0.5, 0.2])
    correct = np.ones(3, dtype=bool)
    assert input_dependence(g, g, correct) == 0.0
    assert input_dependence(g - 0.1, g, correct) == 1.0
    # an input-ignoring explainer is perfectly input-independent: IIR is reported, not asserted
    assert input_independence(g, g, correct) == 1.0
    assert input_independence(g, g * 1.5, correct) == 0.0
    assert input_independence(np.zeros(1), np.ones(1), np.ones(1, dtype=bool)) == 0.0


def test_mcs_and_random_regions():
    maps = np.zeros((2, 10, 10))
    regions = np.zeros((2, 10, 10), dtype=bool)
    regions[:, 2:5, 3:5] = True
    maps[:, 2:5, 3:5] = 1.0
    g = region_attribution(maps, regions)
    assert g.tolist() == [1.0, 1.0]
    assert model_contrast(g, np.array([True, True]), g * 0.25, np.array([True, False])) == 0.75
    moved = random_regions(regions, np.random.default_rng(0))
    assert moved.reshape(2, -1).sum(axis=1).tolist() == [6, 6]
    with pytest.raises(ValueError):
        region_attribution(maps, np.zeros_like(regions))


def test_neutral_patch_stays_in_its_region_and_radius():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 4))
    x = torch.rand(2, 3, 8, 8) * 0.5
    region = torch.zeros(2, 1, 8, 8)
    region[:, :, 2:5, 2:5] = 1
    init = (torch.rand(2, 3, 8, 8) * 0.5) * region
    delta = neutral_patch(model, x, init, region, steps=200, lr=0.01)
    assert (delta * (1 - region) == 0).all()
    assert (delta - init).abs().max() <= 0.15 + 1e-6
    assert ((x + delta) >= 0).all() and ((x + delta) <= 1).all()
    before = (model(x + init) - model(x)).norm(dim=1)
    after = (model(x + delta) - model(x)).norm(dim=1)
    assert (after < before).all()


def test_torchvision_source_reads_cifar10_and_flowers102(tmp_path, monkeypatch):
    from PIL import Image
    from scipy.io import savemat
    from torchvision.datasets import CIFAR10

    base = tmp_path / "flowers-102"
    (base / "jpg").mkdir(parents=True)
    labels, ids = [], {"trnid": [], "valid": [], "tstid": []}
    n = 0
    for c in range(12):
        for split in ("trnid", "valid", "tstid"):
            n += 1
            shade = 10 * c + (5 if split == "valid" else 0)
            Image.fromarray(np.full((30, 40, 3), shade, dtype=np.uint8)).save(base / "jpg" / f"image_{n:05d}.jpg")
            labels.append(c + 1)
            ids[split].append(n)
    savemat(base / "imagelabels.mat", {"labels": np.array(labels)})
    savemat(base / "setid.mat", {k: np.array(v) for k, v in ids.items()})
    cifar = tmp_path / "cifar-10-batches-py"
    cifar.mkdir()
    for name, _ in CIFAR10.train_list + CIFAR10.test_list:
        with open(cifar / name, "wb") as fh:
            pickle.dump({"data": np.full((10, 3072), 250, dtype=np.uint8), "labels": list(range(10))}, fh)
    with open(cifar / "batches.meta", "wb") as fh:
        pickle.dump({"label_names": [str(i) for i in range(10)]}, fh)
    monkeypatch.setattr("torchvision.datasets.flowers102.check_integrity", lambda *a, **k: True)
    monkeypatch.setattr("torchvision.datasets.cifar.check_integrity", lambda *a, **k: True)
    d = generate(BamDataSpec("objects", 24, 30, "val", 0, source="torchvision", data_dir=str(tmp_path)))
    region = d.regions[:, None].repeat(3, axis=1)
    assert (d.images[region] == 250).all()  # the CIFAR-10 square is the object
    for scene, img in zip(d.scenes, d.no_object):
        assert abs(float(np.median(img)) - (10 * scene + 5)) <= 2  # validation flowers of that class
    assert set(d.scenes) <= set(range(10))
