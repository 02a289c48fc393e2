import numpy as np
import pytest

from pytest_chaosmining.testbeds.formulas.data import SymbolicDataSpec, generate


def spec(**kw):
    base = dict(formula=8, noise_features=20, label_noise=0.01, n_samples=200, seed=0)
    return SymbolicDataSpec(**{**base, **kw})


def test_deterministic_and_seed_zero_is_a_seed():
    a, b = generate(spec(seed=0)), generate(spec(seed=0))
    np.testing.assert_array_equal(a.x_train, b.x_train)
    np.testing.assert_array_equal(a.y_test, b.y_test)
    c = generate(spec(seed=1))
    assert not np.array_equal(a.x_train, c.x_train)


def test_independent_of_what_was_generated_before():
    first = generate(spec(formula=3))
    generate(spec(formula=9))
    np.testing.assert_array_equal(first.x_train, generate(spec(formula=3)).x_train)


def test_shapes_split_and_range():
    d = generate(spec())
    assert d.x_train.shape == (160, 23) and d.x_test.shape == (40, 23)
    assert np.abs(d.x_train).max() <= 1.0
    assert 0.25 < d.x_train.std() < 0.36


def test_truth_columns_are_the_ones_the_target_is_computed_from():
    d = generate(spec(label_noise=0.0))
    np.testing.assert_allclose(d.formula(d.x_test[:, d.truth].astype(np.float64)), d.y_test_clean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d.y_test, d.y_test_clean, atol=1e-6)


def test_truth_is_not_always_in_the_first_columns():
    positions = {tuple(generate(spec(seed=s)).truth) for s in range(5)}
    assert len(positions) > 1
    assert any(set(p) != {0, 1, 2} for p in positions)


def test_ground_truth_is_zero_on_noise_features():
    d = generate(spec())
    gt = d.ground_truth("gradient", d.x_test)
    noise = np.setdiff1d(np.arange(d.n_features), d.truth)
    assert np.all(gt[:, noise] == 0)
    assert np.abs(gt[:, d.truth]).sum() > 0
    with pytest.raises(ValueError):
        d.ground_truth("shap", d.x_test)


def test_bad_spec():
    with pytest.raises(ValueError):
        generate(spec(n_samples=3))
