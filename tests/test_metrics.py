import numpy as np
import pytest

from pytest_chaosmining.core.metrics.attribution import attribution_uscore, fprec, fprec_per_sample, uscore


def test_uscore_perfect_and_opposite():
    y = np.array([0.5, -1.0, 2.0])
    assert uscore(y, y) == pytest.approx(1.0)
    assert uscore(-y, y) == pytest.approx(0.0, abs=1e-6)


def test_fprec_counts_truth_in_top_k():
    attr = np.array([[0.9, 0.1, 0.8, 0.2], [0.1, 0.9, 0.8, 0.2]])
    assert fprec_per_sample(attr, [0, 2]).tolist() == [1.0, 0.5]


def test_fprec_ranks_by_magnitude():
    attr = np.array([[-5.0, 0.1, 0.2]])
    assert fprec(attr, [0]) == 1.0


@pytest.mark.parametrize("value", [0.0, 1.0, -3.0])
def test_constant_attribution_scores_zero_whatever_the_truth_position(value):
    """Ties go to noise features: a constant map cannot ride on truth sitting first."""
    attr = np.full((4, 10), value)
    assert fprec(attr, [0, 1, 2]) == 0.0


def test_partial_ties_are_resolved_against_the_explainer():
    # truth {0,1}; feature 0 clearly top, 1 tied with two noise features at the k-th value
    attr = np.array([[3.0, 1.0, 1.0, 1.0, 0.0]])
    assert fprec(attr, [0, 1]) == 0.5
    # if every tied slot can only go to truth, truth gets it
    attr = np.array([[3.0, 1.0, 0.5, 0.5, 0.0]])
    assert fprec(attr, [0, 1]) == 1.0


def test_random_attribution_scores_near_chance():
    rng = np.random.default_rng(0)
    attr = rng.random((5000, 101))
    assert fprec(attr, [7]) == pytest.approx(1 / 101, abs=0.01)


def test_fprec_rejects_nan_and_bad_k():
    with pytest.raises(ValueError, match="NaN"):
        fprec(np.array([[np.nan, 1.0]]), [0])
    with pytest.raises(ValueError, match="k"):
        fprec(np.ones((1, 2)), [0, 1, 1])


def test_attribution_uscore_is_scale_free():
    truth = np.array([[1.0, 0.0, -2.0]])
    assert attribution_uscore(truth * 7.0, truth) == pytest.approx(1.0, abs=1e-6)
    assert attribution_uscore(-truth, truth) < 0.5


def test_sign_agreement_judges_the_sign_of_the_sums_over_rising_and_falling_outputs():
    """A complete explainer's sums carry the sign of f(x) - f(0): 1.  A flipped sign
    scores 0; a positive rescaling (x1000, or per sample) keeps 1; a map that ignores
    the sample (a constant, positive noise such as the random control's, another
    sample's map) scores about 0.5 however many outputs rose; outputs of one sign
    cannot tell those apart, so there is no judgement (None)."""
    from pytest_chaosmining.core.metrics.axioms import sign_agreement

    rng = np.random.default_rng(0)
    change = np.concatenate([rng.uniform(0.5, 2, 300), -rng.uniform(0.5, 2, 60)])
    sums = change + rng.normal(0, 0.05, change.shape)
    assert sign_agreement(sums, change) == 1.0
    assert sign_agreement(-sums, change) == 0.0
    assert sign_agreement(1000 * sums * rng.uniform(0.1, 1, change.shape), change) == 1.0
    assert sign_agreement(np.ones_like(change), change) == 0.5
    assert sign_agreement(rng.uniform(0, 1, change.shape), change) == 0.5
    assert abs(sign_agreement(rng.permutation(sums), change) - 0.5) < 0.1
    assert sign_agreement(sums[:300], change[:300]) is None  # every output rose
    tiny = np.where(np.arange(360) < 350, 1e-6, change)  # only 10 changes clear the floor
    assert sign_agreement(tiny, tiny) is None


def test_map_fingerprints_agree_under_rescaling_and_sign_and_not_when_mass_moves():
    """A fingerprint keeps each feature's |attribution| mass (a mask groups values
    into features) of every explained sample up to FINGERPRINT_SAMPLES; its agreement
    with a baseline's, per sample, ignores rescaling and sign and falls when mass
    moves between features; a baseline that kept fewer samples is compared on those."""
    from pytest_chaosmining.core.metrics.drift import FINGERPRINT_SAMPLES, fingerprint, map_agreement

    rng = np.random.default_rng(0)
    attr = rng.normal(size=(FINGERPRINT_SAMPLES + 3, 3, 4, 4))
    mask = np.repeat(np.arange(4), 4).reshape(1, 4, 4)  # four features: one row each, all channels
    maps = fingerprint(attr, mask)
    assert len(maps) == FINGERPRINT_SAMPLES and len(maps[0]) == 4
    assert maps[0][0] == float(f"{np.abs(attr[0, :, 0, :]).sum():.5g}")
    assert map_agreement(fingerprint(-1000 * attr, mask), maps).least == pytest.approx(1.0, abs=1e-9)
    moved = attr.copy()
    moved[2, :, 0, :] *= 3
    found = map_agreement(fingerprint(moved, mask), maps)
    assert found.worst == 2 and found.least < 0.95 and found.lost(0.95) == [2]
    assert found.mean == pytest.approx((FINGERPRINT_SAMPLES - 1 + found.least) / FINGERPRINT_SAMPLES)
    assert map_agreement(fingerprint(np.zeros_like(attr), mask), maps).mean == 0.0
    assert map_agreement(maps[:4], maps).cosines == pytest.approx([1.0] * 4)  # a baseline that kept 4
    assert map_agreement([row[:3] for row in maps], maps).mean == 0.0  # other features agree with nothing


def test_the_size_of_maps_against_the_baseline_sees_a_rescaling_the_cosines_do_not():
    """Each sample's total mass against the baseline's: 1 for the same maps (and for a
    sign flip), exp(-ln 2) = 0.5 for every map doubled or halved, 0 for a map emptied."""
    from pytest_chaosmining.core.metrics.drift import fingerprint, map_agreement

    attr = np.random.default_rng(2).normal(size=(8, 6))
    maps = fingerprint(attr)
    assert map_agreement(fingerprint(-attr), maps).size == pytest.approx(1.0, abs=1e-9)
    assert map_agreement(fingerprint(2 * attr), maps).size == pytest.approx(0.5, abs=1e-4)
    halved = map_agreement(fingerprint(attr / 2), maps)
    assert halved.size == pytest.approx(0.5, abs=1e-4) and halved.mean == pytest.approx(1.0, abs=1e-9)
    emptied = attr.copy()
    emptied[3] = 0.0
    assert map_agreement(fingerprint(emptied), maps).size == 0.0
    assert map_agreement(fingerprint(np.zeros_like(attr)), fingerprint(np.zeros_like(attr))).size == 1.0


def test_one_class_lost_moves_the_mean_little_and_the_samples_entirely():
    """Zero maps on 3 of 32 samples (one class in ten): the mean agreement falls by
    3/32, those three samples agree 0 and the per-sample rule names them."""
    from pytest_chaosmining.core.metrics.drift import fingerprint, map_agreement
    from pytest_chaosmining.verdict.baseline import SampleDrift

    attr = np.random.default_rng(1).normal(size=(32, 10))
    broken = attr.copy()
    broken[[4, 14, 24]] = 0.0
    found = map_agreement(fingerprint(broken), fingerprint(attr))
    assert found.mean == pytest.approx(29 / 32) and found.lost(0.5) == [4, 14, 24]
    assert SampleDrift(0.5, 2).kept(found) == 0.0 and SampleDrift(0.5, 3).kept(found) == pytest.approx(1.0)
