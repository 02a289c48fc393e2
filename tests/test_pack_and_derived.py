"""The shipped model pack and the cache of built-in explainers' results."""

from __future__ import annotations

import functools
import itertools
import json
import shutil
from pathlib import Path

import pytest
import torch
from conftest import load_results

from pytest_chaosmining.core import cross_cpu
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


def test_values_of_two_cpu_kinds_agree_as_stated():
    """One computation's floats within 1e-6; a value a model trained in the run decides over
    n samples within 5 % of its decisions more (at least one), never more; NaN only with NaN."""
    assert cross_cpu.agree(0.5, 0.5 + 1e-8) and not cross_cpu.agree(0.5, 0.5 + 1e-5)
    assert cross_cpu.agree(0.355, 0.35, decisions=200) and not cross_cpu.agree(0.355, 0.35)
    assert cross_cpu.agree(0.385, 0.355, decisions=200)  # measured: IG's leakage, Intel Xeon against AMD EPYC
    assert cross_cpu.agree(0.4, 0.35, decisions=200) and not cross_cpu.agree(0.405, 0.35, decisions=200)
    assert cross_cpu.decisions_moved(20) == 1 and cross_cpu.agree(0.5, 0.45, decisions=20)
    assert cross_cpu.agree(float("nan"), float("nan")) and not cross_cpu.agree(float("nan"), 0.0, decisions=1)
    assert cross_cpu.agree("SA", "SA") and not cross_cpu.agree(1, 2)


def test_shipped_models_give_the_results_of_trained_ones(pytester, run_suite, tmp_path):
    """A run from an empty cache with the shipped pack trains nothing and scores what
    a run that trains every model scores.  The pack was trained on another machine:
    float results differ between CPU kinds (AVX-512 or AVX2) at about 1e-8, so the
    comparison has the project's tolerance (:mod:`~pytest_chaosmining.core.cross_cpu`); a rank
    metric (FPrec) can step where two attributions nearly tie, so a few values may move by
    more, never by more than its rank step."""
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
    moved = {k: (v, shipped_values[k]) for k, v in trained_values.items() if not cross_cpu.agree(v, shipped_values[k])}
    assert all(abs(a - b) <= cross_cpu.RANK_STEP for a, b in moved.values()), moved
    assert len(moved) <= cross_cpu.RANK_MOVED * len(trained_values), moved


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
    from pytest_chaosmining.suites.bam.spec import model_config
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
    """Entries the code marks shippable go into the pack under their config and code; a
    fresh cache takes them without training, a changed config misses."""
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
    cuda = DerivedCache(tmp_path / "a", device_type="cuda")
    cuda.get_or_compute("s", {"case": 2, "device": "cuda"}, functools.partial(compute, 2))
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


def _another_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process as another torch and numpy release (the same numerics, other version strings)."""
    from pytest_chaosmining.core.storage import derived, shipped_check

    other = {"torch": "9.9.9", "numpy": "9.9.9"}
    monkeypatch.setattr(derived, "stack_versions", lambda: other)
    monkeypatch.setattr(shipped_check, "stack_versions", lambda: other)


def _packed(tmp_path: Path, n: int) -> list[str]:
    """A pack of ``n`` shipped results ``{"score": case / 100, "cost": ...}``; their shipped keys."""
    from pytest_chaosmining.core.storage.derived import source_fingerprint

    made = DerivedCache(tmp_path / "a")
    for case in range(n):
        made.get_or_compute("s", {"case": case, "device": "cpu"}, lambda case=case: _scored(case), (Cost,))
    assert build_pack(tmp_path / "a", tmp_path / "pack") == {"derived": n}
    assert (tmp_path / "pack" / "derived" / "stack.json").is_file()
    return [DerivedCache.shipped_key("s", {"case": case}, source_fingerprint()) for case in range(n)]


def _cases_with_a_sample(least: int = 48) -> int:
    """How many cases a test packs: at least ``least``, and enough that one of their shipped
    keys is in the recomputed sample with three cases after it (the keys follow the package's
    source: 48 cases held no sampled key for about one code state in 20)."""
    from pytest_chaosmining.core.storage.derived import source_fingerprint
    from pytest_chaosmining.core.storage.shipped_check import ShippedCheck

    code = source_fingerprint()
    first = next(c for c in itertools.count() if ShippedCheck.sampled(DerivedCache.shipped_key("s", {"case": c}, code)))
    return max(least, first + 4)


def _scored(case: int, shift: float = 0.0) -> dict[str, object]:
    return {"score": case / 100 + shift, "cost": Cost(10.0 + shift * 1e6, 1.0, 10.0)}


def test_shipped_results_hold_on_another_stack_where_the_probe_and_a_stated_sample_agree(tmp_path, monkeypatch):
    """Keyed by the code alone, the shipped results serve another torch and numpy release:
    its stack probe agrees, the first result of each suite × explainer group a process
    asks for and one in SAMPLE_EVERY (by key, the same every run) are recomputed and
    compared (their cost aside), and the rest are used as shipped."""
    from pytest_chaosmining.core.storage.shipped_check import SAMPLE_EVERY, ShippedCheck

    n = _cases_with_a_sample()
    keys = _packed(tmp_path, n)
    _another_stack(monkeypatch)
    fresh, computed = DerivedCache(tmp_path / "b", tmp_path / "pack"), []

    def compute(case: int) -> dict[str, object]:
        computed.append(case)
        return _scored(case, 1e-9)  # another stack: the same values within 1e-8, another cost

    results = [
        fresh.get_or_compute("s", {"case": c, "device": "cpu"}, functools.partial(compute, c), (Cost,))
        for c in range(n)
    ]
    sampled = sorted({0} | {c for c, key in enumerate(keys) if ShippedCheck.sampled(key)})  # 0: the group's first
    assert computed == sampled and 1 < len(sampled) <= n // SAMPLE_EVERY + 4
    assert [r["score"] for r in results] == pytest.approx([c / 100 for c in range(n)], abs=1e-8)
    kept = sorted((tmp_path / "b" / "derived" / "s").glob("*.json"))
    assert len(kept) == len(sampled)  # only what this stack computed enters the user's cache
    assert not list((tmp_path / "b" / "derived" / "s").glob("refused-*"))


def test_a_shipped_result_that_differs_on_this_stack_is_recomputed_and_its_suite_with_it(tmp_path, monkeypatch):
    """A checked result beyond the tolerance is replaced by this stack's, with a warning
    naming it, and the suite's later shipped results are recomputed too; the first result
    of a group is checked before any other of it is used."""
    from pytest_chaosmining import ChaosminingWarning
    from pytest_chaosmining.core.storage.shipped_check import ShippedCheck

    keys = _packed(tmp_path, _cases_with_a_sample())
    _another_stack(monkeypatch)
    first = next(c for c, key in enumerate(keys) if ShippedCheck.sampled(key))
    fresh, computed = DerivedCache(tmp_path / "b", tmp_path / "pack"), []

    def compute(case: int) -> dict[str, object]:
        computed.append(case)
        return _scored(case, 0.01 if case >= first else 0.0)  # this stack computes the sampled one otherwise

    with pytest.warns(ChaosminingWarning, match="differs on this stack"):
        for case in range(first + 3):
            got = fresh.get_or_compute("s", {"case": case, "device": "cpu"}, functools.partial(compute, case), (Cost,))
    checked = [0] if first else []  # the group's first result, checked and agreeing
    assert computed == [*checked, first, first + 1, first + 2]
    assert got["score"] == pytest.approx((first + 2) / 100 + 0.01)
    assert len(list((tmp_path / "b" / "derived" / "s").glob("refused-*"))) == 1
    unsampled = next(c for c in range(first + 3, len(keys)) if not ShippedCheck.sampled(keys[c]))
    later = DerivedCache(tmp_path / "b", tmp_path / "pack")  # another worker, a later run: the refusal holds
    later.get_or_compute("s", {"case": unsampled, "device": "cpu"}, functools.partial(compute, unsampled), (Cost,))
    assert computed[-1] == unsampled


def test_no_shipped_result_is_used_where_the_stack_probe_differs(tmp_path, monkeypatch):
    """Where this stack's generators draw otherwise or a network's values move beyond the
    probe's tolerance, every shipped result is recomputed (one warning says what differed),
    whatever the version strings say: a patched or differently built torch of the pack's
    own version gets no shipped result unprobed."""
    from pytest_chaosmining import ChaosminingWarning

    _packed(tmp_path, 8)
    stack_file = tmp_path / "pack" / "derived" / "stack.json"
    payload = json.loads(stack_file.read_text())
    payload["probe"]["numpy_normal"][0] += 1e-9  # another numpy draws otherwise
    stack_file.write_text(json.dumps(payload))
    same, again = DerivedCache(tmp_path / "same", tmp_path / "pack"), []
    with pytest.warns(ChaosminingWarning, match="numpy_normal differs"):
        got = same.get_or_compute("s", {"case": 3, "device": "cpu"}, lambda: again.append(3) or {"score": 0.5}, (Cost,))
    assert again == [3] and got == {"score": 0.5}  # the same version strings, recomputed
    _another_stack(monkeypatch)
    fresh, computed = DerivedCache(tmp_path / "b", tmp_path / "pack"), []
    with pytest.warns(ChaosminingWarning, match="numpy_normal differs"):
        for case in range(8):
            fresh.get_or_compute("s", {"case": case, "device": "cpu"}, lambda c=case: computed.append(c) or {}, (Cost,))
    assert computed == list(range(8))


def test_the_stack_probe_tells_draws_and_numerics_apart():
    """The probe's draws compare exactly, the network's values within its tolerance, and
    the probe leaves the global generators as they were."""
    from pytest_chaosmining.core.storage.probe_values import probe
    from pytest_chaosmining.core.storage.stack_probe import TOLERANCE, differences

    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    then = probe("cpu")
    assert torch.equal(torch.rand(3), expected)
    assert differences(then, probe("cpu")) == []
    moved = {k: list(v) for k, v in then.items()}
    moved["network_output"][0] += TOLERANCE / 10
    assert differences(then, moved) == []
    moved["network_output"][0] += TOLERANCE * 10
    moved["torch_randn"][0] += 1e-9
    assert [d.split()[0] for d in differences(then, moved)] == ["torch_randn", "network_output"]
    assert differences({}, then) == ["no probe to compare"]
    hooked = {k: list(v) for k, v in then.items()}  # a torch whose module backward hooks act otherwise
    assert any(v < 0 for v in hooked["network_hooked_gradient"])  # the hook's rule shapes it, it is not a ReLU mask
    hooked["network_hooked_gradient"][0] *= 2.0
    assert [d.split()[0] for d in differences(then, hooked)] == ["network_hooked_gradient"]


def test_a_shipped_entry_serves_another_torch_where_the_stack_probe_agrees(tmp_path, monkeypatch):
    """RFE's shipped networks and selections are keyed by config and code, not the torch
    version: another torch release takes them without training where the stack probe
    agrees, and trains where it does not."""
    calls = []

    def train(value: float) -> tuple[dict[str, torch.Tensor], dict[str, object]]:
        calls.append(value)
        return {"w": torch.tensor([value])}, {"result": value}

    ModelCache(tmp_path / "a").get_or_train(
        "s", {"n": 1, "device": "cpu"}, functools.partial(train, 1.0), shippable=True
    )
    DerivedCache(tmp_path / "a").get_or_compute("d", {"case": 0, "device": "cpu"}, lambda: {"score": 1})
    assert build_pack(tmp_path / "a", tmp_path / "pack") == {"s/entries": 1, "derived": 1}
    monkeypatch.setattr(torch, "__version__", "9.9.9")
    fresh = ModelCache(tmp_path / "b", ModelPack(tmp_path / "pack"))
    state, meta, trained = fresh.get_or_train("s", {"n": 1, "device": "cpu"}, functools.partial(train, 9.0))
    assert not trained and meta["shipped"] and state["w"].item() == 1.0 and calls == [1.0]
    stack_file = tmp_path / "pack" / "derived" / "stack.json"
    payload = json.loads(stack_file.read_text())
    payload["probe"]["network_output"] = [v + 1 for v in payload["probe"]["network_output"]]
    stack_file.write_text(json.dumps(payload))
    other = ModelCache(tmp_path / "c", ModelPack(tmp_path / "pack"))
    with pytest.warns(match="network_output differs"):
        _, _, trained = other.get_or_train("s", {"n": 1, "device": "cpu"}, functools.partial(train, 9.0))
    assert trained and calls == [1.0, 9.0]


def _another_release(tmp_path: Path) -> Path:
    """A PYTHONPATH folder that makes a fresh interpreter see torch and numpy 99.0.0: their
    version strings in the installed metadata and ``torch.__version__``, the same numerics."""
    site = tmp_path / "site"
    for name in ("torch", "numpy"):
        info = site / f"{name}-99.0.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 99.0.0\n")
    (site / "sitecustomize.py").write_text("import torch\ntorch.__version__ = '99.0.0'\n")
    return site


def test_another_torch_and_numpy_release_judges_with_the_shipped_results(pytester, run_suite, tmp_path, monkeypatch):
    """A library's CI installs the newest torch: keyed by the code and validated by the
    stack probe, each group's first result and a stated sample, the shipped results serve
    it (costs replayed from the pack: nothing recomputed but those checked), with the
    verdicts of the pack's own stack."""
    run_suite = functools.partial(run_suite, subprocess=True, fresh=False, k="f02 or f03 or f05")
    args = ("--chaosmining-explainers", "IG,SA,DL", "--chaosmining-suites", "symbolic")
    matched = run_suite(*args, cache=tmp_path / "matched", report="matched")
    monkeypatch.setenv("PYTHONPATH", str(_another_release(tmp_path)))
    other = run_suite(*args, cache=tmp_path / "other", report="other")
    assert other.ret == matched.ret == 0 and "computes otherwise" not in other.stdout.str()
    versions = load_results(pytester, "other")["meta"]["versions"]
    assert versions["torch"] == versions["numpy"] == "99.0.0"

    def records(report: str) -> dict[tuple[str, ...], float]:
        return {
            (r["explainer"], json.dumps(r["case"], sort_keys=True), r["metric"]): r["value"]
            for r in load_results(pytester, report)["records"]
            if r["explainer"] in ("IG", "SA", "DL")
        }

    then, now = records("matched"), records("other")
    assert then.keys() == now.keys() and len(then) > 20
    judged = [k for k in then if k[2] not in ("cpu_ms", "time_ms", "peak_mem_mb")]
    assert all(now[k] == pytest.approx(then[k], abs=1e-6) for k in judged)
    costs = [k for k in then if k[2] == "cpu_ms"]
    replayed = [k for k in costs if now[k] == then[k]]
    sampled = list((tmp_path / "other" / "derived" / "symbolic").glob("*.json"))  # what it computed
    groups = 3 + 1  # the first result of each explainer's group and of the plugin's own is checked
    assert len(replayed) >= len(costs) - len(sampled) and len(sampled) <= groups + 2, "shipped results recomputed"
