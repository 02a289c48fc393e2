"""RFEwNA runs side by side: each distinct round network trained once (bit for bit
what each run trains alone), or as batched ensembles (to float tolerance); a
failing run stops alone; every run gets a private network."""

import numpy as np
import pytest
import torch

from pytest_chaosmining.core.results_file import read_results
from pytest_chaosmining.explainers import Explainer
from pytest_chaosmining.suites.rfe.data import generated_classification
from pytest_chaosmining.suites.rfe.rfewna import RFEwNA, fit_side_by_side
from pytest_chaosmining.suites.rfe.rounds import RoundNetworks, RoundRequest, RoundTraining, train_network


def regression(n=400, features=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, features)).astype(np.float32)
    y = 2 * x[:, 3] - 1.5 * x[:, 7] ** 2 + x[:, 11] * x[:, 2] + 0.01 * rng.normal(size=n)
    return x, y


def selectors(names, **kw):
    return [RFEwNA(**{"explainer": name, "epochs": 60, "lr": 1e-2, "n_features_to_select": 2, **kw}) for name in names]


def history(sel):
    return [
        (h["n_features"], tuple(np.flatnonzero(h["support"])), h["score"], h["importances"].tolist())
        for h in sel.history_
    ]


def test_side_by_side_runs_equal_runs_alone_bit_for_bit_and_train_each_network_once():
    x, y = regression()
    names = ["SA", "IG", "IxG", "random"]
    alone = [s.fit(x, y) for s in selectors(names)]
    together = selectors(names)
    networks = RoundNetworks()
    assert fit_side_by_side(together, x, y, networks) == [None] * 4
    for a, b in zip(alone, together):
        assert history(a) == history(b)  # same supports, scores and importances, exactly
        np.testing.assert_array_equal(a.support_, b.support_)
    rounds = sum(len(s.history_) for s in together)
    distinct = len({(h["n_features"], tuple(np.flatnonzero(h["support"]))) for s in together for h in s.history_})
    assert networks.trained_count == distinct < rounds  # the first round (all features) at least is shared
    first = [s.history_[0]["seconds"] for s in together]
    assert min(first) > 0  # a reused network is charged the seconds its training took


def test_a_run_fitted_later_with_the_same_networks_reuses_them_and_matches_alone():
    x, y = regression()
    networks = RoundNetworks()
    fit_side_by_side(selectors(["SA", "IG"]), x, y, networks)
    trained = networks.trained_count
    late = selectors(["SA"])[0].fit(x, y, networks)
    assert networks.trained_count == trained  # every round of SA was trained already
    assert history(late) == history(selectors(["SA"])[0].fit(x, y))


def test_a_failing_run_fails_in_its_place_and_the_others_go_on():
    x, y = regression()

    def breaks_late(model, inputs, target):
        if inputs.shape[1] < 16:
            raise RuntimeError("broken on fewer features")
        return inputs.abs()

    broken = Explainer("breaks_late", breaks_late, {}, None, "test")
    runs = selectors(["SA", broken, "IG"])
    errors = fit_side_by_side(runs, x, y, RoundNetworks())
    assert errors[0] is None and errors[2] is None
    assert "breaks_late" in str(errors[1]) and "broken on fewer features" in str(errors[1])
    assert history(runs[0]) == history(selectors(["SA"])[0].fit(x, y))
    with pytest.raises(Exception, match="broken on fewer features"):
        selectors([broken])[0].fit(x, y, RoundNetworks())


def test_each_run_gets_a_private_network():
    x, y = regression()
    y = y.astype(np.float32)
    training = RoundTraining("regression", 1, 20, 1e-2, None, 0, "cpu")
    request = RoundRequest(training, x, y, np.arange(8))
    networks = RoundNetworks()
    (first,) = networks.train([request])
    with torch.no_grad():
        for p in first.network.parameters():
            p.add_(1.0)  # a run that spoils its copy
    (second,) = networks.train([request])
    alone = train_network(training, x[:, :8], y)
    for a, b in zip(alone.parameters(), second.network.parameters()):
        assert torch.equal(a, b)
    assert networks.trained_count == 1


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_ensemble_trained_rounds_match_single_training(task):
    """Networks of one round (as many features, other columns) trained as one
    ensemble match each trained alone; classification with mini-batches (the
    members share one batch order, as each alone draws it from the same seed)."""
    if task == "regression":
        x, y = regression()
        y = y.astype(np.float32)
        training = RoundTraining(task, 1, 40, 1e-2, None, 3, "cpu")
    else:
        data = generated_classification(600, 16, 3, seed=0)
        x, y = data.x_train, data.y_train.astype(np.int64)
        training = RoundTraining(task, 2, 15, 1e-2, 64, 3, "cpu")
    columns = [np.arange(0, 8), np.arange(8, 16), np.array([1, 3, 5, 7, 9, 11, 13, 15])]
    networks = RoundNetworks(ensemble=True)
    together = networks.train([RoundRequest(training, x, y, c) for c in columns])
    assert networks.trained_count == 3
    for cols, trained in zip(columns, together):
        alone = train_network(training, x[:, cols], y)
        for a, b in zip(alone.parameters(), trained.network.parameters()):
            assert torch.allclose(a, b, atol=5e-5), (a - b).abs().max()


def test_ensemble_side_by_side_selections_match_alone():
    x, y = regression()
    names = ["SA", "IG", "random"]
    alone = [s.fit(x, y) for s in selectors(names)]
    together = selectors(names)
    assert fit_side_by_side(together, x, y, RoundNetworks(ensemble=True)) == [None] * 3
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a.support_, b.support_)
        assert [h["score"] for h in a.history_] == pytest.approx([h["score"] for h in b.history_], abs=1e-4)


def test_the_suite_runs_a_cases_builtins_side_by_side_with_the_results_of_runs_alone(pytester, run_suite):
    """The rfe suite, formula 10 at smoke, SA and the control: the default run
    (built-in results cached) runs them side by side before the first test and
    caches each selection; a run that recomputes every result (each explainer in
    its own test) records the same values."""
    import json

    args = ("--chaosmining-suites", "rfe", "--chaosmining-explainers", "SA,random", "--chaosmining-pack", "none")
    run_suite(*args, cache=pytester.path / "c1", report="together", k="f10 and not generated", fresh=False)
    run_suite(
        *args,
        "--chaosmining-builtin-results",
        "recompute",
        cache=pytester.path / "c2",
        report="alone",
        k="f10 and not generated",
        fresh=False,
    )
    selections = [torch.load(e, weights_only=True)["meta"] for e in (pytester.path / "c1" / "rfe").glob("*.pt")]
    assert sum("curve" in m and "support" in m for m in selections) >= 2  # the two RFEwNA selections (and RFE-*)

    def values(report):
        records = read_results(pytester.path / report / "results.json", samples=True)["records"]
        return {
            (r["model"], r["explainer"], r["metric"], json.dumps(r["case"], sort_keys=True)): r["value"]
            for r in records
            if "seconds" not in r["metric"]
        }

    together, alone = values("together"), values("alone")
    assert together and together == alone
