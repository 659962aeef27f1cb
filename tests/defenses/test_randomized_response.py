"""Randomized response: flip rates, K-ary uniformity, fixed vs fresh draws, ε, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from defenses import DefenseChain, DefenseConfigError
from defenses.randomized_response import RandomizedResponse, epsilon_of, flip_probability
from defenses.subsetting import Subsetting
from tests.defenses.support import context, scripted_metric, view

N = 20000


def _noisy_labels(defense: RandomizedResponse, labels: np.ndarray, key: str, k: int = 2) -> np.ndarray:
    v = view(np.zeros(len(labels)), labels, scripted_metric(), n_classes=k)
    return defense.before_metric(v, context(key, name=defense.name)).labels


def _within_5_sigma(count: int, n: int, p: float) -> bool:
    return abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize(("params", "message"), [
    ({"p": 1.0}, "'p' must be in [0, 1)"),
    ({"p": 0.1, "epsilon": 1.0}, "either 'p' or 'epsilon'"),
    ({"epsilon": -1}, "'epsilon' must be a positive number"),
    ({"mode": "once"}, "'mode' must be one of fixed, fresh"),
])
def test_it_rejects_bad_parameters(params: dict, message: str) -> None:
    with pytest.raises(DefenseConfigError) as info:
        DefenseChain.from_json([{"name": "randomized_response", **params}])
    assert message in str(info.value)


def test_flip_probability_from_epsilon_is_warners_rule() -> None:
    assert flip_probability(1.0, 2) == pytest.approx(1 / (1 + math.e))
    assert flip_probability(1.0, 5) == pytest.approx(4 / (math.e + 4))
    for k in (2, 3, 10):
        assert epsilon_of(flip_probability(0.7, k), k) == pytest.approx(0.7)


@pytest.mark.parametrize("mode", ["fixed", "fresh"])
def test_binary_flip_rate_is_p(mode: str) -> None:
    labels = np.random.default_rng(1).integers(0, 2, N)
    noisy = _noisy_labels(RandomizedResponse(p=0.1, mode=mode), labels, "submission:1")
    assert _within_5_sigma(int((noisy != labels).sum()), N, 0.1)


def test_k_ary_keeps_with_1_minus_p_and_moves_uniformly_to_the_other_classes() -> None:
    k, p = 4, 0.3
    labels = np.random.default_rng(2).integers(0, k, N)
    noisy = _noisy_labels(RandomizedResponse(p=p), labels, "submission:1", k)
    moved = noisy != labels
    assert _within_5_sigma(int(moved.sum()), N, p)
    shift = (noisy[moved] - labels[moved]) % k
    for s in range(1, k):  # each other class gets a third of the moves
        assert _within_5_sigma(int((shift == s).sum()), int(moved.sum()), 1 / (k - 1))


def test_fixed_flips_are_the_same_for_every_submission_fresh_ones_are_not() -> None:
    labels = np.zeros(500, dtype=np.int64)
    fixed, fresh = RandomizedResponse(p=0.2, mode="fixed"), RandomizedResponse(p=0.2, mode="fresh")
    assert np.array_equal(_noisy_labels(fixed, labels, "submission:1"), _noisy_labels(fixed, labels, "submission:2"))
    assert not np.array_equal(
        _noisy_labels(fresh, labels, "submission:1"), _noisy_labels(fresh, labels, "submission:2")
    )
    assert np.array_equal(_noisy_labels(fresh, labels, "submission:1"), _noisy_labels(fresh, labels, "submission:1"))


def test_a_fixed_flip_stays_with_its_row_after_subsetting() -> None:
    n = 400
    labels = np.zeros(n, dtype=np.int64)
    rr = RandomizedResponse(p=0.3)
    full = _noisy_labels(rr, labels, "submission:1")
    for key in ("submission:1", "submission:2"):
        subset = Subsetting(fraction=0.5).before_metric(view(np.zeros(n), labels, scripted_metric()), context(key))
        noisy = rr.before_metric(subset, context(key, name=rr.name)).labels
        assert np.array_equal(noisy, full[subset.rows_in_split])


def test_it_records_its_epsilon_once_when_fixed() -> None:
    chain = DefenseChain.from_json([{"name": "randomized_response", "epsilon": 2.0}])
    v = view(np.full(50, 0.5), np.zeros(50))
    outcome = chain.release(v, states=None, secret=1, submission_key="a")
    [entry] = outcome.ledger["privacy"]
    assert entry["epsilon"] == pytest.approx(2.0) and entry["once"].startswith("randomized_response:")


def test_a_huge_epsilon_flips_nothing_instead_of_overflowing() -> None:
    # e^ε overflowed for ε = 1e300, and every submission failed; such an ε means no flips at all.
    assert flip_probability(1e300, 2) == 0.0 and flip_probability(800.0, 5) == 0.0
    labels = np.random.default_rng(3).integers(0, 2, 100)
    assert (_noisy_labels(RandomizedResponse(epsilon=1e300), labels, "s") == labels).all()
