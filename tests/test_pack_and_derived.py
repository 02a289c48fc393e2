"""The shipped model pack and the cache of built-in explainers' results."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import load_results

from pytest_chaosmining.core.metrics.cost import Cost
from pytest_chaosmining.core.storage.cache import ModelCache
from pytest_chaosmining.core.storage.derived import DerivedCache, decode, encode
from pytest_chaosmining.core.storage.pack import ModelPack, build_pack
from pytest_chaosmining.core.storage.pack_location import SHIPPED


def _fit(model: torch.nn.Module) -> float:
    with torch.no_grad():
        model.weight.fill_(0.5)
    return 0.0


def _never(model: torch.nn.Module) -> float:
    raise AssertionError("trained although the pack has the model")


def _check(model: torch.nn.Module) -> float:
    return float(model.weight.detach().sum())


def _build() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Linear(3, 1)


def test_pack_round_trip_skips_training(tmp_path):
    config = {"suite": "s", "seed": 0, "device": "cpu"}
    trained, meta = ModelCache(tmp_path / "a").model("s", config, _build, _fit, torch.device("cpu"), check=_check)
    assert meta["check"] == pytest.approx(1.5)
    assert build_pack(tmp_path / "a", tmp_path / "pack") == {"s": 1}
    cache = ModelCache(tmp_path / "b", ModelPack(tmp_path / "pack"))
    shipped, meta = cache.model("s", config, _build, _never, torch.device("cpu"), check=_check)
    assert meta["shipped"] and torch.equal(shipped.weight, trained.weight)
    again, meta = ModelCache(tmp_path / "b").model("s", config, _build, _never, torch.device("cpu"), check=_check)
    assert meta["shipped"]  # written into the user's cache: the pack is read once


def test_a_shipped_model_that_does_not_reproduce_its_score_is_retrained(tmp_path):
    config = {"suite": "s", "seed": 0, "device": "cpu"}
    ModelCache(tmp_path / "a").model("s", config, _build, _fit, torch.device("cpu"), check=_check)
    build_pack(tmp_path / "a", tmp_path / "pack")
    calls = []

    def fit(model: torch.nn.Module) -> float:
        calls.append(1)
        return _fit(model)

    cache = ModelCache(tmp_path / "b", ModelPack(tmp_path / "pack"))
    with pytest.warns(pytest.PytestWarning, match="scores 2.5000 on the data generated here against 1.5000"):
        _, meta = cache.model("s", config, _build, fit, torch.device("cpu"), check=lambda m: _check(m) + 1.0)
    assert calls == [1] and "shipped" not in meta


def test_the_shipped_pack_holds_the_smoke_models():
    entries = list(SHIPPED.glob("*/*.pt"))
    suites = {p.parent.name for p in entries}
    assert {"symbolic", "vision", "audio", "bam", "iteroar"} <= suites
    size = sum(p.stat().st_size for p in entries)
    assert size < 50 * 2**20  # tens of MB at most
    meta = torch.load(entries[0], map_location="cpu", weights_only=True)["meta"]
    assert {"config", "check"} <= set(meta) and json.loads(meta["config"])["device"] == "cpu"


#: float agreement between machines of different CPU kinds (measured: 1e-8)
CROSS_MACHINE_TOL = 1e-6
#: the largest move of a value past that tolerance (a rank step on a near tie)
CROSS_MACHINE_STEP = 0.05
#: the share of values that may move past the tolerance (measured on the default run: 53 of 1,699)
CROSS_MACHINE_MOVED = 0.05


def test_shipped_models_give_the_results_of_trained_ones(pytester, run_suite, tmp_path):
    """A run from an empty cache with the shipped pack trains nothing and scores what
    a run that trains every model scores.  The pack was trained on another machine:
    float results differ between CPU kinds (AVX-512 or AVX2) at about 1e-8, so the
    comparison has a tolerance (:data:`CROSS_MACHINE_TOL`); a rank metric (FPrec)
    can step where two attributions nearly tie, so a few values may move by more,
    never by more than :data:`CROSS_MACHINE_STEP`."""
    args = ("--chaosmining-explainers", "SA,random", "--chaosmining-suites", "symbolic")
    trained = run_suite(*args, cache=tmp_path / "trained", report="trained", k="f02 or f11")
    trained.stdout.fnmatch_lines(["*chaosmining: training symbolic f02-*"])
    shipped = run_suite(*args, cache=tmp_path / "shipped", report="shipped", k="f02 or f11", fresh=False)
    shipped.stdout.no_fnmatch_line("*chaosmining: training*")

    def values(report: str) -> dict[tuple[str, ...], float]:
        return {
            (r["model"], r["explainer"], r["metric"], str(r["case"])): r["value"]
            for r in load_results(pytester, report)["records"]
            if r["metric"] not in ("time_ms", "cpu_ms", "peak_mem_mb", "train_seconds")
        }

    trained_values, shipped_values = values("trained"), values("shipped")
    assert trained_values and trained_values.keys() == shipped_values.keys()
    moved = {
        k: (v, shipped_values[k])
        for k, v in trained_values.items()
        if abs(v - shipped_values[k]) > CROSS_MACHINE_TOL * max(1.0, abs(v))
    }
    assert all(abs(a - b) <= CROSS_MACHINE_STEP for a, b in moved.values()), moved
    assert len(moved) <= CROSS_MACHINE_MOVED * len(trained_values), moved


def test_builtin_results_are_reused_and_a_users_are_recomputed(pytester, run_suite, tmp_path):
    pytester.makeconftest("""
from pathlib import Path

def saliency(model, inputs, target):
    with open(Path(__file__).with_name("calls.txt"), "a") as fh:
        fh.write("call\\n")
    inputs = inputs.clone().requires_grad_(True)
    model(inputs).sum().backward()
    return inputs.grad.abs()

def pytest_chaosmining_explainers(config):
    return {"mine": saliency}
""")
    args = ("--chaosmining-explainers", "SA,mine", "--chaosmining-suites", "symbolic")
    first = run_suite(*args, cache=tmp_path / "c", report="first", k="f02", fresh=False)
    first.assert_outcomes(passed=3)
    calls = (pytester.path / "calls.txt").read_text().count("call")
    derived = list((tmp_path / "c" / "derived" / "symbolic").glob("*.json"))
    assert len(derived) == 1 and json.loads(derived[0].read_text())["parts"]["explainer"] == "SA"
    second = run_suite(*args, cache=tmp_path / "c", report="second", k="f02", fresh=False)
    second.assert_outcomes(passed=3)
    assert (pytester.path / "calls.txt").read_text().count("call") == 2 * calls  # the user's explainer ran again

    def judged(report: str) -> list[tuple[str, str, float]]:
        return sorted(
            (r["explainer"], r["metric"], r["value"])
            for r in load_results(pytester, report)["records"]
            if r["threshold"] is not None
        )

    assert judged("first") == judged("second")


def test_derived_results_round_trip_through_json(tmp_path):
    value = {"cost": Cost(1.5, 2.0), "mcs_k": {0.1: 0.2, 0.5: -0.1}, "n": 3, "curve": [(1, 0.5)]}
    assert decode(json.loads(json.dumps(encode(value))), {"Cost": Cost}) == {**value, "curve": [[1, 0.5]]}
    cache, calls = DerivedCache(tmp_path), []
    for _ in range(2):
        result = cache.get_or_compute("s", {"case": 1}, lambda: calls.append(1) or value, (Cost,))
        assert result["cost"] == Cost(1.5, 2.0) and result["mcs_k"] == {0.1: 0.2, 0.5: -0.1}
    assert calls == [1]


def test_a_changed_captum_file_recomputes_builtin_results(pytester, run_suite, tmp_path, monkeypatch):
    """Cached built-in results are keyed by captum's source, not its version: in a
    library's own CI the version stays while a pull request edits a method, and the
    restored cache must not stand in for the edited code."""
    import captum

    site = tmp_path / "site"
    shutil.copytree(Path(captum.__file__).parent, site / "captum", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PYTHONPATH", str(site))
    args = ("--chaosmining-explainers", "IG", "--chaosmining-suites", "symbolic")
    cache = tmp_path / "c"
    run_suite = functools.partial(run_suite, subprocess=True)  # captum from PYTHONPATH: a fresh interpreter

    def entries() -> set[str]:
        return {p.name for p in (cache / "derived" / "symbolic").glob("*.json")}

    run_suite(*args, cache=cache, report="first", k="f02", fresh=False).assert_outcomes(passed=2)
    first = entries()
    assert len(first) == 1
    run_suite(*args, cache=cache, report="again", k="f02", fresh=False).assert_outcomes(passed=2)
    assert entries() == first  # unchanged captum: reused
    ig = site / "captum" / "attr" / "_core" / "integrated_gradients.py"
    ig.write_text(ig.read_text() + "\n# a pull request's edit: same version string\n")
    run_suite(*args, cache=cache, report="edited", k="f02", fresh=False).assert_outcomes(passed=2)
    assert len(entries()) == 2, "the edited captum's result was read from the cache of the unedited one"


def _default_run_models(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    """``{"<cache folder>/<model id>": config}`` of every model the default run
    (smoke tier, seed 0 and the seeds it runs, embedded data) loads by its training
    config: the symbolic, vision and audio models, the saliency suite's standard
    and guided pairs, BAM's f_o, f_s and f_k, and IteROAR's f_0.  (IteROAR's retrained
    models are keyed by the masked data, which the explainers' maps decide.)"""
    from pytest_chaosmining.run.session import ChaosminingSession
    from pytest_chaosmining.settings import resolve
    from pytest_chaosmining.suites.bam.suite import model_config
    from pytest_chaosmining.suites.registry import get_suite, registered_suites

    config = pytester.parseconfig("--chaosmining")
    session = ChaosminingSession(config, resolve(config, tuple(registered_suites())))
    assert session.plan.tier == "smoke"
    models: dict[str, dict[str, object]] = {}

    def add(model_id: str, training: dict[str, object]) -> None:
        models[f"{training['suite']}/{model_id}"] = training

    for name in ("symbolic", "vision", "audio"):
        for case in get_suite(name).plan(session):
            add(case.id, case.training_config("cpu"))
    for comparison in get_suite("saliency").plan(session):
        for pair in comparison.pairs():
            for case in pair:
                add(case.id, case.training_config("cpu"))
    for case in get_suite("bam").plan(session):
        for role in ("object", "scene", *(f"k{k:g}" for k in case.ks)):
            add(f"{case.id}-{role}", model_config(case, role, "cpu"))
    for chain in get_suite("iteroar").plan(session):
        add(chain.base.id, chain.base.training_config("cpu"))
    return models


def test_the_default_run_trains_no_model_the_pack_could_ship(pytester):
    """Every model the default run loads by its training config is in the shipped pack.
    A change to anything in a config (a guided model's loss source, a tier's sizes)
    moves its key: the pack must be rebuilt (``chaosmining-pack``), or every user's
    first run trains it (the cost suite's snapshot models are not shipped)."""
    models = _default_run_models(pytester)
    assert len(models) >= 30 and any("guide" in c for c in models.values())
    pack = ModelPack()
    missing = [name for name, config in models.items() if not pack.path(str(config["suite"]), config).is_file()]
    assert not missing, f"not in the shipped pack (rebuild it: chaosmining-pack): {missing}"


def test_a_shippable_entry_is_shipped_under_its_key_and_used_only_there(tmp_path):
    """Entries the code marks shippable go into the pack under their cache keys (config,
    code, torch version); a fresh cache takes them without training, a changed config misses."""
    calls = []

    def train(value: float) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
        calls.append(value)
        return {"w": torch.tensor([value])}, {"result": value}

    first = ModelCache(tmp_path / "a")
    first.get_or_train("s", {"n": 1, "device": "cpu"}, functools.partial(train, 1.0), shippable=True)
    first.get_or_train(
        "s", {"n": 2, "device": "cpu"}, functools.partial(train, 2.0)
    )  # not shippable: stays out of the pack
    assert build_pack(tmp_path / "a", tmp_path / "pack") == {"s/entries": 1}
    fresh = ModelCache(tmp_path / "b", ModelPack(tmp_path / "pack"))
    assert fresh.has("s", {"n": 1, "device": "cpu"}) and not fresh.has("s", {"n": 2, "device": "cpu"})
    state, meta, trained = fresh.get_or_train("s", {"n": 1, "device": "cpu"}, functools.partial(train, 9.0))
    assert not trained and meta["shipped"] and meta["result"] == 1.0 and state["w"].item() == 1.0
    fresh.get_or_train("s", {"n": 1, "device": "cpu", "changed": True}, functools.partial(train, 3.0))
    assert calls == [1.0, 2.0, 3.0]


def test_shipped_derived_results_stand_in_under_the_same_key_only(tmp_path):
    computed = []

    def compute(value: int) -> dict[str, int]:
        computed.append(value)
        return {"score": value}

    DerivedCache(tmp_path / "a").get_or_compute("s", {"case": 1, "device": "cpu"}, functools.partial(compute, 1))
    DerivedCache(tmp_path / "a").get_or_compute("s", {"case": 2, "device": "cuda"}, functools.partial(compute, 2))
    assert build_pack(tmp_path / "a", tmp_path / "pack") == {"derived": 1}  # CPU results only
    fresh = DerivedCache(tmp_path / "b", tmp_path / "pack")
    assert fresh.get_or_compute("s", {"case": 1, "device": "cpu"}, functools.partial(compute, 7)) == {"score": 1}
    assert fresh.get_or_compute("s", {"case": 3, "device": "cpu"}, functools.partial(compute, 3)) == {"score": 3}
    assert computed == [1, 2, 3]
    assert (tmp_path / "b" / "derived" / "s").is_dir()  # copied into the user's cache: the pack is read once


def test_keep_models_keeps_what_the_pack_ships_and_replaces_the_results(tmp_path):
    config = {"suite": "s", "seed": 0, "device": "cpu"}
    ModelCache(tmp_path / "a").model("s", config, _build, _fit, torch.device("cpu"), check=_check)
    build_pack(tmp_path / "a", tmp_path / "pack")
    (elsewhere,) = (tmp_path / "pack" / "s").glob("*.pt")
    other = elsewhere.with_name("another-machines-model.pt")
    shutil.copyfile(elsewhere, other)
    DerivedCache(tmp_path / "b").get_or_compute("s", {"case": 1, "device": "cpu"}, lambda: {"score": 1})
    assert build_pack(tmp_path / "b", tmp_path / "pack", keep_models=True) == {"derived": 1}
    assert other.is_file() and elsewhere.is_file()
    assert build_pack(tmp_path / "b", tmp_path / "pack") == {"derived": 1}
    assert not (tmp_path / "pack" / "s").exists()  # without keep_models the pack is what the cache holds
