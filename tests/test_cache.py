import subprocess
import sys
import textwrap

import pytest
import torch

from pytest_chaosmining.core.storage.cache import ModelCache
from pytest_chaosmining.core.storage.cache_key import cache_key


def _trainer(calls):
    def train():
        calls.append(1)
        return {"w": torch.arange(3.0)}, {"train_seconds": 0.5}

    return train


def test_train_once_then_load(tmp_path):
    cache, calls = ModelCache(tmp_path), []
    state, meta, trained = cache.get_or_train("s", {"a": 1}, _trainer(calls))
    assert trained and meta["train_seconds"] == 0.5
    state2, _, trained2 = cache.get_or_train("s", {"a": 1}, _trainer(calls))
    assert not trained2 and len(calls) == 1
    assert torch.equal(state2["w"], state["w"])
    assert not list((tmp_path / "s").glob("*.tmp"))


def test_key_depends_on_every_config_field_and_on_seed_zero():
    assert cache_key({"a": 1, "seed": 0}) != cache_key({"a": 1, "seed": 1})
    assert cache_key({"a": 1, "seed": 0}) != cache_key({"a": 2, "seed": 0})
    assert cache_key({"a": 1, "b": 2}) == cache_key({"b": 2, "a": 1})


@pytest.mark.parametrize("garbage", [b"", b"not a torch file", b"PK\x03\x04truncated"])
def test_corrupt_entry_is_retrained_not_crashed_on(tmp_path, garbage):
    cache, calls = ModelCache(tmp_path), []
    cache.get_or_train("s", {"a": 1}, _trainer(calls))
    path = cache.path("s", cache_key({"a": 1}))
    path.write_bytes(garbage)
    with pytest.warns(pytest.PytestWarning, match="corrupt"):
        _, _, trained = cache.get_or_train("s", {"a": 1}, _trainer(calls))
    assert trained and len(calls) == 2


def test_entry_that_needs_unpickling_is_refused(tmp_path):
    """weights_only=True: a file carrying arbitrary objects is treated as corrupt."""
    cache, calls = ModelCache(tmp_path), []
    path = cache.path("s", cache_key({"a": 1}))
    path.parent.mkdir(parents=True)
    torch.save({"state_dict": {}, "meta": {"key": cache_key({"a": 1})}, "evil": object()}, path)
    with pytest.warns(pytest.PytestWarning, match="corrupt"):
        _, _, trained = cache.get_or_train("s", {"a": 1}, _trainer(calls))
    assert trained


def test_concurrent_processes_train_once(tmp_path):
    script = textwrap.dedent(
        f"""
        import time, torch
        from pytest_chaosmining.core.storage.cache import ModelCache
        def train():
            with open({str(tmp_path / "calls")!r}, 'a') as fh:
                fh.write('x')
            time.sleep(1.0)
            return {{'w': torch.ones(2)}}, {{}}
        ModelCache({str(tmp_path / "c")!r}).get_or_train('s', {{'a': 1}}, train)
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script]) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert (tmp_path / "calls").read_text() == "x"


def test_get_finds_an_entry_without_training_and_none_where_there_is_none(tmp_path):
    cache = ModelCache(tmp_path)
    assert cache.get("s", {"n": 1}) is None
    cache.get_or_train("s", {"n": 1}, lambda: ({"w": torch.tensor([2.0])}, {"result": 2.0}))
    found = cache.get("s", {"n": 1})
    assert found is not None and found[0]["w"].item() == 2.0 and found[1]["result"] == 2.0
    assert cache.get("s", {"n": 2}) is None
