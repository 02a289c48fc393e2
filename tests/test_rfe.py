"""RFEwNA as a scikit-learn selector, the RFE datasets and the Santander loader."""

import numpy as np
import pytest
import torch
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.suites.rfe.data import generated_classification, santander, symbolic
from pytest_chaosmining.suites.rfe.rfewna import RFEwNA
from pytest_chaosmining.suites.rfe.spec import find_santander


def regression(n=400, features=12, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = 2 * x[:, 3] - 1.5 * x[:, 7] ** 2 + 0.01 * rng.normal(size=n)
    return x, y, {3, 7}


def fast(**kw):
    return RFEwNA(**{"epochs": 150, "lr": 1e-2, **kw})


def test_selects_the_informative_features_and_follows_sklearn_conventions():
    x, y, truth = regression()
    sel = fast(explainer="SA", n_features_to_select=2, step=0.5).fit(x, y)
    assert set(np.flatnonzero(sel.get_support())) == truth
    assert sel.support_.dtype == bool and sel.n_features_ == 2 and sel.n_features_in_ == 12
    assert sel.transform(x).shape == (400, 2)
    np.testing.assert_array_equal(sel.get_support(indices=True), sorted(truth))
    assert (sel.ranking_[sel.support_] == 1).all() and sel.ranking_.max() > 1
    # every round is recorded; the rounds halve the remaining features: 12 -> 6 -> 3 -> 2
    assert [h["n_features"] for h in sel.history_] == [12, 6, 3, 2]
    assert sel.best_support_.sum() == sel.history_[sel.best_index_]["n_features"]
    assert sel.score(x, y) > 0.9


def test_step_as_a_count_and_fraction_to_select():
    x, y, _ = regression(features=10)
    sel = fast(n_features_to_select=0.3, step=3).fit(x, y)
    assert [h["n_features"] for h in sel.history_] == [10, 7, 4, 3]


def test_seed_zero_is_reproducible():
    x, y, _ = regression()
    a = fast(n_features_to_select=3, random_state=0).fit(x, y)
    b = fast(n_features_to_select=3, random_state=0).fit(x, y)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    assert [h["score"] for h in a.history_] == [h["score"] for h in b.history_]


def test_works_in_a_pipeline_and_classifies():
    data = generated_classification(600, 20, 3, seed=0)
    pipe = make_pipeline(StandardScaler(), fast(task="classification", n_features_to_select=3, explainer="IG"))
    pipe.fit(data.x_train, data.y_train)
    assert pipe.score(data.x_test, data.y_test) > 0.75
    assert set(pipe[-1].classes_) == {0, 1}
    picked = set(np.flatnonzero(pipe[-1].support_))
    assert len(picked & set(data.truth)) >= 2


def test_selector_in_front_of_another_estimator():
    x, y, truth = regression()
    pipe = make_pipeline(fast(n_features_to_select=2), LinearRegression()).fit(x, y)
    assert pipe[-1].coef_.shape == (2,)


def test_bad_input_gets_a_clear_error():
    x, y, _ = regression(n=60, features=8)
    with pytest.raises(ValueError, match="larger than the number of features"):
        fast(n_features_to_select=9).fit(x, y)
    with pytest.raises(ValueError, match="step"):
        fast(step=0).fit(x, y)
    with pytest.raises(ValueError, match="task"):
        fast(task="ranking").fit(x, y)
    with pytest.raises(ValueError, match="unknown explainer"):
        fast(explainer="nope").fit(x, y)
    bad = x.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fast().fit(bad, y)


def test_an_explainer_with_the_wrong_shape_is_named():
    from pytest_chaosmining.explainers import ExplainerError

    x, y, _ = regression(n=60, features=8)
    wrong = Explainer("wrong", lambda m, inputs, t: torch.zeros(len(inputs), 2), {}, None, "test")
    with pytest.raises(ExplainerError, match="'wrong' returned shape"):
        fast(explainer=wrong, n_features_to_select=2).fit(x, y)


def test_a_plain_callable_is_an_explainer():
    x, y, truth = regression()

    def grad_abs(model, inputs, target):
        inputs = inputs.clone().requires_grad_(True)
        model(inputs)[:, 0].sum().backward()
        return inputs.grad.abs()

    sel = fast(explainer=grad_abs, n_features_to_select=2).fit(x, y)
    assert set(np.flatnonzero(sel.support_)) == truth


def test_unfitted_selector_refuses_to_transform():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        fast().transform(np.zeros((2, 3)))


def test_sklearn_estimator_checks():
    """The parts of scikit-learn's estimator checks that apply to a selector
    whose fit trains networks (checks that need a fixed number of features
    to select, or that fit on 1-3 samples, are left out)."""
    from sklearn.utils.estimator_checks import (
        check_dont_overwrite_parameters,
        check_estimators_overwrite_params,
        check_fit2d_predict1d,
        check_fit_check_is_fitted,
        check_get_params_invariance,
        check_n_features_in,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    est = RFEwNA(epochs=5)
    for check in (
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_get_params_invariance,
        check_set_params,
        check_estimators_overwrite_params,
        check_dont_overwrite_parameters,
        check_fit_check_is_fitted,
        check_fit2d_predict1d,
        check_n_features_in,
    ):
        check(type(est).__name__, est)


# -- datasets ------------------------------------------------------------------------
def test_symbolic_dataset_keeps_the_truth_at_random_columns():
    data = symbolic(10, 150, 500, 0.01, seed=0)
    assert data.n_features == 155 and len(data.truth) == 5
    assert list(data.truth) != [0, 1, 2, 3, 4]


def test_generated_classification_truth_is_informative():
    data = generated_classification(1000, 40, 4, seed=0)
    assert len(data.truth) == 4 and data.x_train.shape == (800, 40)
    from sklearn.feature_selection import f_classif

    f, _ = f_classif(data.x_train, data.y_train)
    assert set(np.argsort(f)[-2:]) <= set(data.truth)  # the strongest columns are informative ones
    again = generated_classification(1000, 40, 4, seed=0)
    np.testing.assert_array_equal(again.x_train, data.x_train)


def test_santander_loader_on_a_kaggle_shaped_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    header = ["ID", "var3", "var15", "imp_ent_var16_ult1", "saldo_var30", "TARGET"]
    y = (rng.random(n) < 0.1).astype(int)  # imbalanced, as the real data (~4% positives)
    rows = [[i + 1, 2, rng.integers(5, 100), rng.random() * 1000, rng.normal() * 1e4, y[i]] for i in range(n)]
    folder = tmp_path / "santander-customer-satisfaction"
    folder.mkdir()
    (folder / "train.csv").write_text(",".join(header) + "\n" + "\n".join(",".join(map(str, r)) for r in rows) + "\n")
    path = find_santander(tmp_path)
    data = santander(path, seed=0)
    n_pos = int(y.sum())
    assert len(data.y_train) + len(data.y_test) == 2 * n_pos  # majority undersampled to balance
    assert data.y_train.mean() == pytest.approx(0.5, abs=0.15)
    assert data.n_features == 4  # ID and TARGET dropped
    assert data.x_train.min() >= 0 and data.x_train.max() <= 1  # MinMax-scaled
    assert data.truth is None
    assert len(data.y_train) == round(2 * n_pos * 0.8)


def test_missing_santander_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="Santander"):
        find_santander(tmp_path)


def test_generated_columns_share_one_marginal_so_input_magnitude_finds_nothing():
    """make_classification leaves the informative columns with a larger spread;
    after the quantile mapping every training column holds the same values, and
    ranking columns by mean |x| on a validation subset of them finds the
    informative ones at chance only."""
    from pytest_chaosmining.suites.rfe.data import generated_classification

    hits = []
    for seed in range(20):
        d = generated_classification(1000, 100, 5, seed)
        spread = np.abs(d.x_train).mean(axis=0)
        assert np.ptp(spread) < 1e-5
        top = np.argsort(-np.abs(d.x_train[-200:]).mean(axis=0))[:5]
        hits.append(len(set(top) & set(d.truth)) / 5)
    assert np.mean(hits) < 0.15  # chance: 5 / 100
