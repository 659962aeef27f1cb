"""The K-ary capacity attack's faster weight search changes no query and no label: the pruned search returns the
weights of the search as first written (``reference=True``), bit for bit, and the whole attack sends
byte-identical query vectors and recovers the same labels. No timing here: ``benchmarks/capacity_kary_speed.py``
measures the speed."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest

from attacks import LocalOracle
from attacks.capacity import capacity_attack, kary
from attacks.capacity.search import reference_code


class RecordingOracle(LocalOracle):
    """A :class:`LocalOracle` that keeps a digest of every prediction vector it scores, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.digests: list[str] = []

    def submit_all(self, predictions: Any) -> Any:
        vector = np.ascontiguousarray(np.asarray(predictions, dtype=np.float64))
        self.digests.append(hashlib.sha256(vector.tobytes()).hexdigest())
        return super().submit_all(predictions)


def _candidate_sets(count: int, seed: int) -> list[tuple[np.ndarray, int, int]]:
    """Random candidate sets like the carried groups (distinct labelings of ``k`` rows in K classes) with tight and
    loose span caps."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        k = int(rng.integers(1, 5))
        classes = int(rng.choice([2, 3, 6, 10]))
        total = classes**k
        n = int(rng.integers(2, min(total, 300) + 1))
        index = rng.choice(total, size=n, replace=False)
        patterns = ((index[:, None] // classes ** np.arange(k)) % classes).astype(np.uint8)
        max_span = int(rng.choice([max(2, n // 2), n, 2 * n, 4 * n, 10 * n, 1 << 20]))
        out.append((patterns, classes, max_span))
    return out


def test_the_pruned_search_returns_the_reference_searchs_weights() -> None:
    for patterns, classes, max_span in _candidate_sets(400, 3):
        key = patterns.tobytes()
        kary._search.cache_clear()
        fast = kary._search(key, patterns.shape, classes, max_span)
        kary._search.cache_clear()
        with reference_code():
            reference = kary._search(key, patterns.shape, classes, max_span)
        assert fast == reference, (patterns.shape, classes, max_span)
    kary._search.cache_clear()


def test_entropy_and_values_are_the_reference_floats() -> None:
    rng = np.random.default_rng(4)
    for _ in range(200):
        n, k, classes, b = (int(rng.integers(2, 300)), int(rng.integers(1, 6)), int(rng.integers(2, 11)),
                            int(rng.integers(2, 300)))
        patterns = rng.integers(0, classes, size=(n, k)).astype(np.uint8)
        weights = rng.integers(0, int(rng.integers(2, 80)), size=(k, classes, b))
        values = kary._values(patterns, weights)
        assert np.array_equal(values, kary._values_reference(patterns, weights))
        entropy, span = kary._entropy_span(values)
        ref_entropy, ref_span = kary._entropy_span_reference(values)
        assert np.array_equal(span, ref_span) and entropy.tobytes() == ref_entropy.tobytes()


@pytest.mark.parametrize(("metric", "k", "n"), [("brier", 10, 160), ("brier", 3, 200), ("multiclass_logloss", 10, 160),
                                                ("norm_like:2.5", 6, 160)])
def test_the_attack_sends_the_reference_queries_and_recovers_the_same_labels(metric: str, k: int, n: int) -> None:
    labels = np.random.default_rng(n + k).integers(0, k, n)
    runs = []
    for reference in (False, True):
        kary._search.cache_clear()
        oracle = RecordingOracle(labels, metric=metric, n_classes=k, decimals=5)
        result = capacity_attack(oracle, check=False, reference=reference)
        runs.append((oracle.digests, result.labels.tolist()))
    assert runs[0] == runs[1]
    assert runs[0][1] == labels.tolist()
