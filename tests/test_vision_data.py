import pickle

import numpy as np
import pytest

from pytest_chaosmining.core.metrics.localisation import box_iou, localisation, top_k_box
from pytest_chaosmining.testbeds.digits.data import (
    CONDITIONS,
    VisionDataSpec,
    digit_pool,
    generate,
    load_published,
)


@pytest.mark.parametrize("condition", CONDITIONS)
def test_composition(condition):
    d = generate(VisionDataSpec(condition, fg=8, n=20, split="train", seed=0))
    assert d.images.shape == (20, 3, 56, 56) and d.images.dtype == np.uint8
    assert set(d.labels) <= set(range(10))
    assert (d.boxes[:, 2:] == 8).all()
    if condition.endswith("FP"):
        assert (d.boxes[:, :2] == 24).all()  # 3 x fg: (96, 96) at paper size
    else:
        assert d.boxes[:, :2].min() >= 0 and d.boxes[:, :2].max() <= 48
        assert len({tuple(b) for b in d.boxes[:, :2]}) > 10


def test_deterministic_and_seeded():
    a = generate(VisionDataSpec("SBRP", 8, 10, "train", 0))
    b = generate(VisionDataSpec("SBRP", 8, 10, "train", 0))
    np.testing.assert_array_equal(a.images, b.images)
    c = generate(VisionDataSpec("SBRP", 8, 10, "train", 1))
    assert not np.array_equal(a.images, c.images)


def test_train_and_validation_foregrounds_are_disjoint():
    train, _ = digit_pool("train")
    val, _ = digit_pool("val")
    flat_train = {t.tobytes() for t in train}
    assert not any(v.tobytes() in flat_train for v in val[:200])


def test_foreground_is_where_the_box_says():
    d = generate(VisionDataSpec("RBRP", 8, 5, "val", 0))
    for img, (x, y, w, h) in zip(d.images, d.boxes):
        patch = img[:, y : y + h, x : x + w].astype(float)
        # digit patches are smooth; uniform noise is not
        assert np.abs(np.diff(patch, axis=2)).mean() < np.abs(np.diff(img.astype(float), axis=2)).mean()


def test_bad_spec():
    with pytest.raises(ValueError, match="condition"):
        VisionDataSpec("XXFP", 8, 1, "train", 0)
    with pytest.raises(ValueError, match="data directory"):
        generate(VisionDataSpec("RBFP", 8, 1, "train", 0, source="torchvision"))


# -- IoU -------------------------------------------------------------------------
def test_perfect_hit_scores_exactly_one():
    box = (10, 20, 8, 8)
    smap = np.zeros((56, 56))
    smap[20:28, 10:18] = 1.0
    assert top_k_box(smap, 64, box) == box
    assert box_iou(box, box) == 1.0


def test_flat_map_cannot_land_on_the_truth():
    box = (0, 0, 8, 8)  # top-left: where scan order would put a flat map's top-k
    assert box_iou(top_k_box(np.zeros((56, 56)), 64, box), box) < 0.1


def test_random_maps_score_about_the_area_ratio():
    rng = np.random.default_rng(0)
    attr = rng.random((20, 3, 56, 56))
    boxes = np.tile([24, 24, 8, 8], (20, 1))
    iou, share = localisation(attr, boxes, sigma=6 * 56 / 224)
    assert iou.mean() < 0.1
    assert share.mean() == pytest.approx(1 / 49, abs=0.01)


def test_a_map_on_the_foreground_scores_high():
    attr = np.zeros((1, 3, 56, 56))
    attr[0, :, 30:38, 5:13] = 1.0
    iou, share = localisation(attr, np.array([[5, 30, 8, 8]]), sigma=1.5)
    assert iou[0] > 0.9 and share[0] == 1.0


# -- loaders on files in the real formats -------------------------------------------
def test_cifar10_loader_reads_the_python_batches(tmp_path, monkeypatch):
    from torchvision.datasets import CIFAR10

    base = tmp_path / "cifar-10-batches-py"
    base.mkdir()
    rng = np.random.default_rng(0)
    for name, _ in CIFAR10.train_list + CIFAR10.test_list:
        data = rng.integers(0, 256, (4, 3072), dtype=np.uint8)
        with open(base / name, "wb") as fh:
            pickle.dump({"data": data, "labels": [1, 2, 3, 4]}, fh)
    with open(base / "batches.meta", "wb") as fh:
        pickle.dump({"label_names": [f"c{i}" for i in range(10)]}, fh)
    # our files are not the published ones, so their md5 sums differ
    monkeypatch.setattr("torchvision.datasets.cifar.check_integrity", lambda *a, **k: True)
    d = generate(VisionDataSpec("RBFP", 8, 6, "train", 0, source="torchvision", data_dir=str(tmp_path)))
    assert d.images.shape == (6, 3, 56, 56) and set(d.labels) <= {1, 2, 3, 4}


def test_flowers102_backgrounds(tmp_path, monkeypatch):
    from PIL import Image
    from scipy.io import savemat
    from torchvision.datasets import CIFAR10

    base = tmp_path / "flowers-102"
    (base / "jpg").mkdir(parents=True)
    for i in range(1, 7):
        Image.fromarray(np.full((40, 50, 3), i * 30, dtype=np.uint8)).save(base / "jpg" / f"image_{i:05d}.jpg")
    savemat(base / "imagelabels.mat", {"labels": np.arange(1, 7)})
    savemat(base / "setid.mat", {"trnid": np.array([1, 2, 3]), "valid": np.array([4, 5]), "tstid": np.array([6])})
    monkeypatch.setattr("torchvision.datasets.flowers102.check_integrity", lambda *a, **k: True)
    monkeypatch.setattr("torchvision.datasets.cifar.check_integrity", lambda *a, **k: True)
    cifar = tmp_path / "cifar-10-batches-py"
    cifar.mkdir()
    for name, _ in CIFAR10.train_list + CIFAR10.test_list:
        with open(cifar / name, "wb") as fh:
            pickle.dump({"data": np.zeros((2, 3072), dtype=np.uint8), "labels": [0, 1]}, fh)
    with open(cifar / "batches.meta", "wb") as fh:
        pickle.dump({"label_names": [str(i) for i in range(10)]}, fh)
    d = generate(VisionDataSpec("SBFP", 8, 4, "val", 0, source="torchvision", data_dir=str(tmp_path)))
    outside = d.images[:, :, :8, :8]
    assert {int(v) for v in np.unique(outside)} <= {120, 150}  # validation flowers are images 4 and 5
    monkeypatch.setenv("CHAOSMINING_DECODE_WORKERS", "2")  # decoded by DataLoader workers: the same images
    again = generate(VisionDataSpec("SBFP", 8, 4, "val", 0, source="torchvision", data_dir=str(tmp_path)))
    assert np.array_equal(again.images, d.images)


def test_published_folder_loader(tmp_path, monkeypatch):
    from PIL import Image

    folder = tmp_path / "RBRP"
    folder.mkdir()
    rows = ["image_id,label,x,y"]
    for i in range(3):
        Image.fromarray(np.zeros((224, 224, 3), dtype=np.uint8)).save(folder / f"{i}.png")
        rows.append(f"{i},{i + 2},{10 * i},{5 * i}")
    (folder / "meta_data.csv").write_text("\n".join(rows) + "\n")
    d = load_published(folder)
    assert d.images.shape == (3, 3, 224, 224)
    assert d.labels.tolist() == [2, 3, 4]
    assert d.boxes.tolist() == [[0, 0, 32, 32], [10, 5, 32, 32], [20, 10, 32, 32]]
    monkeypatch.setenv("CHAOSMINING_DECODE_WORKERS", "2")  # decoded by DataLoader workers: the same arrays
    again = load_published(folder)
    assert np.array_equal(again.images, d.images) and again.boxes.tolist() == d.boxes.tolist()
