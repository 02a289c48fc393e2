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
    """A fingerprint keeps each feature's |attribution| mass and signed sum (a mask groups
    values into features) of every explained sample, compactly (float16 per row's scale:
    results.json holds text, not lists); the agreement of its masses with a baseline's, per
    sample, ignores rescaling and sign and falls when mass moves between features; a
    baseline that kept fewer samples (an older results.json's list of 32) is compared on those."""
    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.metrics.fingerprints import Fingerprint, fingerprint_of

    rng = np.random.default_rng(0)
    attr = rng.normal(size=(35, 3, 4, 4))
    mask = np.repeat(np.arange(4), 4).reshape(1, 4, 4)  # four features: one row each, all channels

    def kept(a: np.ndarray) -> dict:
        return fingerprint_of(a, mask).stored()

    maps = kept(attr)
    assert isinstance(maps["mass"], str) and isinstance(maps["signed"], str)
    back = Fingerprint.read(maps)
    assert back.mass.shape == (35, 4) and back.signed is not None
    exact = np.abs(attr[0, :, 0, :]).sum()
    assert back.mass[0, 0] == pytest.approx(exact, rel=1e-3)
    assert back.signed[0, 0] == pytest.approx(attr[0, :, 0, :].sum(), rel=1e-3, abs=1e-3 * exact)
    assert kept(attr) == maps  # the same maps store the same text
    assert map_agreement(kept(-1000 * attr), maps).least == pytest.approx(1.0, abs=1e-6)
    moved = attr.copy()
    moved[2, :, 0, :] *= 3
    found = map_agreement(kept(moved), maps)
    assert found.worst == 2 and found.least < 0.95 and found.lost(0.95) == [2]
    assert found.mean == pytest.approx((34 + found.least) / 35)
    assert map_agreement(kept(np.zeros_like(attr)), maps).mean == 0.0
    older = back.mass[:4].tolist()  # an older run kept the masses of fewer samples, as lists
    assert map_agreement(older, maps).cosines == pytest.approx([1.0] * 4, abs=1e-9)
    assert map_agreement(older, maps).signs is None  # it kept no signs
    assert map_agreement(fingerprint_of(attr[:, :, :3, :]).stored(), maps).mean == 0.0  # other features


def test_signs_kept_sees_a_flipped_sign_and_a_map_turned_unsigned_that_no_cosine_of_masses_sees():
    """Of the baseline's clearly signed feature sums, the share that kept its sign: 1 for
    the same maps (rescaled too), 0 for a flipped sign, the positive share for |maps|;
    the cosine of the masses stays 1 for all three.  A sample whose features are mixed
    (no clear sign) counts in neither."""
    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of

    rng = np.random.default_rng(3)
    attr = rng.normal(size=(40, 12))
    attr[:, :4] = np.abs(attr[:, :4]) + 1.0  # clearly positive
    attr[:, 4:6] = -np.abs(attr[:, 4:6]) - 1.0  # clearly negative
    then = fingerprint_of(attr).stored()
    same = map_agreement(fingerprint_of(3 * attr).stored(), then)
    flipped = map_agreement(fingerprint_of(-attr).stored(), then)
    unsigned = map_agreement(fingerprint_of(np.abs(attr)).stored(), then)
    assert same.signs == pytest.approx(1.0) and flipped.signs == 0.0
    assert min(flipped.cosines) == pytest.approx(1.0, abs=1e-6)
    assert min(unsigned.cosines) == pytest.approx(1.0, abs=1e-6)
    assert unsigned.signs == 0.0  # every clearly negative feature lost its sign
    assert flipped.signs_lost(0.5) == list(range(40)) and same.signs_lost(0.5) == []
    assert max(flipped.signed) == pytest.approx(-1.0, abs=1e-6)  # the signed sums point the other way
    patches = np.ones((2, 2, 2))
    patches[:, 0, 1] = -1.0  # each feature (a pair of values of opposite signs) sums to 0: no clear sign
    mixed = fingerprint_of(patches, np.array([[0, 0], [1, 1]])).stored()
    assert map_agreement(fingerprint_of(-patches, np.array([[0, 0], [1, 1]])).stored(), mixed).signs is not None


def test_a_class_moved_as_a_whole_is_found_and_a_spread_change_or_one_sample_is_not():
    """The samples of one class each moved at least 0.01 (1 - cosine) and four times as far
    as any other: found, named with its samples; the same move spread over every class, or
    on one sample of the class, or on one class of one sample, is none."""
    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of
    from pytest_chaosmining.verdict.class_moves import class_moved

    rng = np.random.default_rng(4)
    labels = [i % 10 for i in range(32)]
    attr = rng.normal(size=(32, 20))
    then = fingerprint_of(attr).stored()
    noisy = attr + 1e-4 * rng.normal(size=attr.shape)  # every sample moves a little
    assert class_moved(map_agreement(fingerprint_of(noisy).stored(), then), labels) is None
    wrong = noisy.copy()
    five = [i for i, c in enumerate(labels) if c == 5]
    wrong[five] = attr[five] + 0.3 * rng.normal(size=(len(five), 20))  # class 5's maps moved
    found = class_moved(map_agreement(fingerprint_of(wrong).stored(), then), labels)
    assert found is not None and found.label == 5 and found.samples == tuple(five) and found.least >= 0.01
    spread = attr + 0.3 * rng.normal(size=attr.shape)
    assert class_moved(map_agreement(fingerprint_of(spread).stored(), then), labels) is None
    one = noisy.copy()
    one[five[0]] = attr[five[0]] + 0.3 * rng.normal(size=20)
    assert class_moved(map_agreement(fingerprint_of(one).stored(), then), labels) is None
    alone = [0] * 31 + [1]  # class 1 has one sample: no class's change
    moved_one = noisy.copy()
    moved_one[31] = -attr[31]
    assert class_moved(map_agreement(fingerprint_of(moved_one).stored(), then), alone) is None


def test_the_size_of_maps_against_the_baseline_sees_a_rescaling_the_cosines_do_not():
    """Each sample's total mass against the baseline's: 1 for the same maps (and for a
    sign flip), exp(-ln 2) = 0.5 for every map doubled or halved, 0 for a map emptied."""
    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of

    def fingerprint(a: np.ndarray) -> dict:
        return fingerprint_of(a).stored()

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
    from pytest_chaosmining.core.metrics.drift import map_agreement
    from pytest_chaosmining.core.metrics.fingerprints import fingerprint_of
    from pytest_chaosmining.verdict.baseline import SampleDrift

    def fingerprint(a: np.ndarray) -> dict:
        return fingerprint_of(a).stored()

    attr = np.random.default_rng(1).normal(size=(32, 10))
    broken = attr.copy()
    broken[[4, 14, 24]] = 0.0
    found = map_agreement(fingerprint(broken), fingerprint(attr))
    assert found.mean == pytest.approx(29 / 32) and found.lost(0.5) == [4, 14, 24]
    assert SampleDrift(0.5, 2).kept(found) == 0.0 and SampleDrift(0.5, 3).kept(found) == pytest.approx(1.0)
