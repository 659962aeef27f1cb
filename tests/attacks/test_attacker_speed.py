"""The faster attackers change no query and no label: the fast realization search returns the reference
search's weights, the capacity attack sends the same queries and recovers the same labels as the code as
first written (``reference=True``), and ``prime_batched``'s memoised decode gives the same labels as decoding
every batch afresh. No timing here: ``benchmarks/attacker_speed.py`` measures the speed."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle, run
from attacks.capacity import capacity_attack
from attacks.capacity.search import (
    REFERENCE,
    _Draws,
    reference_code,
    search_realization,
    search_realization_reference,
)


class RecordingOracle(LocalOracle):
    """A :class:`LocalOracle` that keeps a digest of every prediction vector it scores, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.digests: list[str] = []

    def submit_all(self, predictions: Any) -> Any:
        vector = np.ascontiguousarray(np.asarray(predictions, dtype=np.float64))
        self.digests.append(hashlib.sha256(vector.tobytes()).hexdigest())
        return super().submit_all(predictions)


@pytest.mark.parametrize("top", [2, 3, 7, 12, 40, 1000])
def test_draws_are_the_generators_own(top: int) -> None:
    # Three consecutive draws of odd and even sizes: the spare 32-bit half carries over as numpy's does.
    for seed in (0, 1, 2**63 + 5):
        rng = np.random.default_rng(seed)
        draws = _Draws(seed)
        for count in (9 * 401, 7 * 256, 4000):
            ours = draws.draw(top, count)
            assert ours is not None
            assert np.array_equal(ours, rng.integers(0, top, size=count))


def random_candidate_sets(count: int, seed: int) -> list[tuple[bytes, tuple[int, int], int, int]]:
    """Candidate sets like the carried groups: ``n`` distinct 0/1 patterns on ``k`` rows (some of constant
    count), with tight and loose span and weight caps."""
    rng = np.random.default_rng(seed)
    out: list[tuple[bytes, tuple[int, int], int, int]] = []
    while len(out) < count:
        n, k = int(rng.integers(2, 16)), int(rng.integers(2, 13))
        patterns = np.unique(rng.integers(0, 2, size=(n, k)).astype(np.uint8), axis=0)
        if rng.random() < 0.3:  # "c of k": every pattern with the same count
            c = int(rng.integers(1, k))
            patterns = patterns[patterns.sum(axis=1) == c] if (patterns.sum(axis=1) == c).sum() >= 2 else patterns
        if len(patterns) < 2:
            continue
        patterns = np.ascontiguousarray(patterns)
        max_span = int(rng.choice([2, 3, 6, 12, 40, 1 << 20]))
        max_weight = int(rng.choice([1, 3, 8, 1 << 20]))
        out.append((patterns.tobytes(), patterns.shape, max_span, max_weight))
    return out


def test_fast_search_returns_the_reference_weights() -> None:
    cases = random_candidate_sets(160, seed=14)
    found = 0
    for key, shape, max_span, max_weight in cases:
        fast = search_realization.__wrapped__(key, shape, max_span, max_weight)
        assert fast == search_realization_reference.__wrapped__(key, shape, max_span, max_weight), shape
        found += fast is not None
    assert found > 90  # most sets have a realization: the comparison is not between two Nones


@pytest.mark.parametrize(("n", "decimals", "seed"), [(306, 5, 0), (306, 5, 1), (569, 8, 2), (2201, 5, 3)])
def test_capacity_sends_the_same_queries_as_the_reference_code(n: int, decimals: int, seed: int) -> None:
    labels = np.random.default_rng(seed).integers(0, 2, n)
    results = {}
    for reference in (True, False):
        oracle = RecordingOracle(labels, decimals=decimals)
        result = capacity_attack(oracle, check=False, reference=reference)
        results[reference] = (oracle.digests, result.labels.tolist(), result.queries)
    assert results[False] == results[True]
    assert results[False][1] == labels.tolist()


def test_reference_code_is_scoped() -> None:
    assert not REFERENCE.get()
    with reference_code():
        assert REFERENCE.get()
    assert not REFERENCE.get()


@pytest.mark.parametrize("decimals", [None, 5])
def test_prime_batched_memo_changes_no_label(decimals: int | None) -> None:
    labels = np.random.default_rng(7).integers(0, 2, 1372)
    size = 5 if decimals is None else 2
    fresh = run("prime_batched", LocalOracle(labels, decimals=decimals), batch_size=size, memo=False, confirm=False)
    memo = run("prime_batched", LocalOracle(labels, decimals=decimals), batch_size=size, confirm=False)
    assert memo.labels.tolist() == fresh.labels.tolist() == labels.tolist()
    assert memo.queries == fresh.queries
