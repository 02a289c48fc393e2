"""The cache of generated datasets: round trip, keys, unreadable entries."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from pytest_chaosmining.core.storage.arrays import ArrayCache
from pytest_chaosmining.testbeds import noise_conditions


@dataclass(frozen=True)
class Spec:
    n: int
    seed: int


@dataclass
class Data:
    x: np.ndarray
    labels: np.ndarray
    classes: tuple[str, ...]


def _make(spec: Spec, made: list[Spec]) -> Data:
    made.append(spec)
    rng = np.random.default_rng(spec.seed)
    return Data(rng.normal(size=(spec.n, 3)).astype(np.float32), np.arange(spec.n), ("a", "b"))


def test_a_dataset_is_made_once_and_read_back_equal(tmp_path):
    made: list[Spec] = []
    cache = ArrayCache(tmp_path)
    first = cache.get_or_make("k", Spec(4, 0), lambda: _make(Spec(4, 0), made), Data, (noise_conditions.__name__,))
    again = ArrayCache(tmp_path).get_or_make(
        "k", Spec(4, 0), lambda: _make(Spec(4, 0), made), Data, (noise_conditions.__name__,)
    )
    assert made == [Spec(4, 0)]
    assert np.array_equal(first.x, again.x) and again.x.dtype == np.float32 and again.classes == ("a", "b")
    cache.get_or_make("k", Spec(4, 1), lambda: _make(Spec(4, 1), made), Data, (noise_conditions.__name__,))
    assert made == [Spec(4, 0), Spec(4, 1)]  # another spec, another entry


def test_an_unreadable_entry_is_made_again_with_a_warning(tmp_path):
    made: list[Spec] = []
    cache = ArrayCache(tmp_path)
    cache.get_or_make("k", Spec(2, 0), lambda: _make(Spec(2, 0), made), Data, (noise_conditions.__name__,))
    (entry,) = (tmp_path / "data" / "k").glob("*.npz")
    entry.write_bytes(b"garbage")
    with pytest.warns(pytest.PytestWarning, match="unreadable cached data"):
        data = cache.get_or_make("k", Spec(2, 0), lambda: _make(Spec(2, 0), made), Data, (noise_conditions.__name__,))
    assert len(made) == 2 and data.x.shape == (2, 3)
