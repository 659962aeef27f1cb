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
from attacks.capacity.decoder import VectorPool, predictions
from attacks.capacity.design import subset_sum_entropy
from attacks.capacity.search import (
    REFERENCE,
    _Draws,
    _entropy_and_span,
    _entropy_and_span_counted,
    _searched_sets,
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


def test_a_search_under_looser_caps_is_reused_only_where_it_is_the_reference_answer() -> None:
    # The same candidate set searched again under tighter caps (first loose, then tight, both orders): the
    # answer is always the reference's for those caps, whether reused or searched afresh.
    search_realization.cache_clear()
    _searched_sets.cache_clear()
    checked = 0
    for key, shape, max_span, max_weight in random_candidate_sets(60, seed=41):
        caps = [(max_span, max_weight), (max(2, max_span // 2), max_weight), (max_span, max(1, max_weight // 3)),
                (3, 2), (1 << 20, 1 << 20)]
        for span_cap, weight_cap in caps:
            fast = search_realization(key, shape, span_cap, weight_cap)
            assert fast == search_realization_reference.__wrapped__(key, shape, span_cap, weight_cap)
            checked += fast is not None
    assert checked > 100


def test_pooled_vectors_are_the_predictions_and_a_kept_vector_is_never_rewritten() -> None:
    rng = np.random.default_rng(3)
    pool = VectorPool(50)
    kept: list[np.ndarray] = []
    for round_index in range(4):
        for _ in range(3):
            rows = rng.choice(50, size=int(rng.integers(0, 9)), replace=False)
            ks = rng.integers(1, 400, size=len(rows))
            vector = pool.vector(rows, ks, 0.01)
            assert np.array_equal(vector, predictions(50, rows, ks, 0.01))
            if round_index == 1:
                kept.append(vector)  # an oracle that keeps what it was sent
                snapshot = [v.copy() for v in kept]
            del vector
        pool.reclaim()
    assert all(np.array_equal(a, b) for a, b in zip(kept, snapshot, strict=True))
    assert len(pool.free) == 3  # the others came back to the pool


@pytest.mark.parametrize(
    "weights", [(1,), (5, 3, 9, 9), (4055, 4025, 3980, 2119, 2281), tuple(range(1, 15)), (3, 1 << 40, 7, 1 << 50)]
)
def test_subset_sum_entropy_counts_like_a_sort(weights: tuple[int, ...]) -> None:
    sums = np.zeros(1, dtype=np.int64)
    for w in weights:
        sums = np.concatenate([sums, sums + w])
    _, counts = np.unique(sums, return_counts=True)
    probs = counts / len(sums)
    expected = (float(-(probs * np.log2(probs)).sum()), float((counts.astype(np.float64) ** 2).sum() / len(sums)))
    assert subset_sum_entropy(weights) == expected


def test_counted_entropy_is_the_sorted_runs_entropy_bit_for_bit() -> None:
    rng = np.random.default_rng(17)
    for _ in range(200):
        n, k, b = int(rng.integers(2, 40)), int(rng.integers(1, 12)), int(rng.integers(2, 300))
        patterns = rng.integers(0, 2, size=(n, k)).astype(np.uint8)
        weights = rng.integers(0, int(rng.integers(1, 9)), size=(k, b))
        ours, theirs = _entropy_and_span_counted(patterns, weights), _entropy_and_span(patterns, weights)
        assert ours[0].tobytes() == theirs[0].tobytes() and np.array_equal(ours[1], theirs[1])
