import numpy as np
import pytest

from pytest_chaosmining.suites.iteroar.masks import (
    apply_masks,
    box_shares,
    leakage_accuracy,
    maps,
    mask_metrics,
    top_fraction_masks,
)


def test_masks_remove_exactly_the_top_fraction():
    rng = np.random.default_rng(0)
    smaps = rng.random((3, 10, 10))
    masks = top_fraction_masks(smaps, 0.05, rng)
    assert masks.reshape(3, -1).sum(axis=1).tolist() == [5, 5, 5]
    for m, s in zip(masks, smaps):
        assert s[m].min() >= s[~m].max()


def test_a_flat_map_masks_random_pixels_not_the_first_ones():
    flat = np.zeros((2, 20, 20))
    a = top_fraction_masks(flat, 0.05, np.random.default_rng(1))
    b = top_fraction_masks(flat, 0.05, np.random.default_rng(2))
    assert a.sum() == b.sum() == 40
    assert not np.array_equal(a, b)
    assert not a[:, 0, :].all()  # not the scan order


def test_fills():
    images = np.arange(2 * 3 * 4 * 4, dtype=np.uint8).reshape(2, 3, 4, 4)
    masks = np.zeros((2, 4, 4), dtype=bool)
    masks[:, 0, :2] = True
    zero = apply_masks(images, masks, "zero")
    assert (zero[:, :, 0, :2] == 0).all() and (zero[:, :, 1:] == images[:, :, 1:]).all()
    mean = apply_masks(images, masks, "mean")
    expected = np.rint(images[:, :, 0, :2].mean(axis=2))
    assert (mean[:, :, 0, 0] == expected).all() and (mean[:, :, 0, 1] == expected).all()
    with pytest.raises(ValueError):
        apply_masks(images, masks, "blur")


def test_overlap_metrics():
    a = np.zeros((1, 4, 4), dtype=bool)
    b, c = a.copy(), a.copy()
    a[0, 0], b[0, 1], c[0, 0, :2] = True, True, True
    disjoint = mask_metrics([a, b])
    assert disjoint["mmo"] == 0 and disjoint["mamo"] == 0 and disjoint["cma"] == 0.5
    same = mask_metrics([a, a])
    assert same["mmo"] == 1 and same["cma"] == 0.25
    # c overlaps b not at all but a by half: MMO (previous only) < MAMO (all earlier)
    m = mask_metrics([a, b, c])
    assert m["mamo"] > m["mmo"]


def test_maps_are_channel_mean_magnitudes():
    attr = np.array([[[[1.0, -2.0]], [[-3.0, 0.0]]]])
    assert maps(attr).tolist() == [[[2.0, 1.0]]]


def test_box_shares():
    masks = np.zeros((1, 10, 10), dtype=bool)
    masks[0, 0:2, 0:4] = True  # 8 pixels, 4 of them in the box
    on_box, covered = box_shares(masks, np.array([[2, 0, 2, 2]]))
    assert on_box[0] == 0.5 and covered[0] == 1.0


def test_leakage_check_finds_masks_that_encode_the_class():
    rng = np.random.default_rng(0)

    def leaky(labels):
        m = np.zeros((len(labels), 20, 20), dtype=bool)
        for i, y in enumerate(labels):
            m[i, 2 * y : 2 * y + 2, :] = True  # the class is the mask's row
        return m

    y, yt = rng.integers(0, 10, 400), rng.integers(0, 10, 200)
    assert leakage_accuracy(leaky(y), y, leaky(yt), yt, seed=0) > 0.9
    assert leakage_accuracy(leaky(y), y, leaky(yt), yt, seed=0, shuffle_labels=True) < 0.3


def test_chain_is_deterministic_and_cached(tmp_path):
    import torch

    from pytest_chaosmining.core.storage.cache import ModelCache
    from pytest_chaosmining.explainers import builtin_explainers
    from pytest_chaosmining.suites.iteroar.evaluation import run_chain
    from pytest_chaosmining.suites.iteroar.spec import IteroarCase
    from pytest_chaosmining.testbeds.digits.cases import VisionCase
    from pytest_chaosmining.testbeds.digits.training import data_split, trained_model

    base = VisionCase(
        condition="SBRP", model="small_cnn", fg=4, n_train=120, n_val=40, epochs=1, batch_size=32, lr=3e-3, seed=0
    )
    case = IteroarCase(base, iterations=2, tau=0.95, fill="zero", n_retrain=80, retrain_epochs=1, n_explain=40)
    cache, device = ModelCache(tmp_path), torch.device("cpu")
    f0, train = trained_model(base, cache, device), data_split(base, "train")
    sa = builtin_explainers()["SA"]
    first = run_chain(case, f0, train, sa, cache, device, 64, stream="SA")
    n_models = len(list((tmp_path / "iteroar").glob("*.pt")))
    second = run_chain(case, f0, train, sa, cache, device, 64, stream="SA")
    assert len(first.accuracy) == 3 and len(first.box_share) == 2
    assert first.accuracy == second.accuracy and first.mamo == second.mamo
    assert n_models == 2 and len(list((tmp_path / "iteroar").glob("*.pt"))) == 2
    assert first.cma == pytest.approx(case.rho, abs=0.05)
    reference = run_chain(case, f0, train, None, cache, device, 64)
    assert reference.box_share[0] < 0.2  # random pixels rarely fall on the box
