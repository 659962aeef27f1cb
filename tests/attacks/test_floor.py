"""The majority-class floor (attacks.floor): the check pair measures a band's accuracy exactly on a plain board,
bad guesses go back to the majority class, and ``auto`` stays at or above the majority rate on every chain of
issue 10's list (small N, several seeds)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.fingerprint import Fingerprint
from attacks.floor import apply_floor, measure_band

ROUND5 = {"name": "rounding", "decimals": 5}
N = 120
BUDGET = 120
#: Chains of issue 10 (item 2's "anywhere"), with the public split where a board has one.
CHAINS: dict[str, tuple[list[dict[str, Any]], float | None]] = {
    "laplace 1e-3 + public split": ([{"name": "noise", "kind": "laplace", "scale": 1e-3}, ROUND5], 0.3),
    "thresholdout": ([{"name": "thresholdout"}, ROUND5], None),
    "subsetting 0.5": ([{"name": "subsetting", "fraction": 0.5}, ROUND5], None),
    "randomized response 0.2 fresh": ([{"name": "randomized_response", "p": 0.2, "mode": "fresh"}, ROUND5], None),
    "ladder fixed default eta": ([{"name": "ladder", "mode": "fixed"}, ROUND5], None),
    "laplace 1e-2": ([{"name": "noise", "kind": "laplace", "scale": 1e-2}, ROUND5], None),
}
#: Statistical tolerance of the sweep: the floor keeps a band when its measured accuracy clears 1/2 by 2 standard
#: errors, so a band with no real gain survives ~2 % of the time; on a sampled board (a subset, fresh flips) its
#: rows are then right about half the time, which costs at most a few rows in 120 (2.5 % of N), not a trend.
TOLERANCE = 0.025


def _labels(seed: int, share: float = 0.32, n: int = N) -> np.ndarray:
    return (np.random.default_rng(900 + seed).random(n) < share).astype(np.int64)


def test_check_pair_measures_a_bands_accuracy_exactly_on_a_rounded_board() -> None:
    labels = _labels(0, n=300)
    oracle = LocalOracle(labels, decimals=5, defenses=[ROUND5])
    rows = np.arange(40, 100)
    guess = labels[rows].copy()
    guess[:15] = 1 - guess[:15]  # 45 of 60 right
    check = measure_band(oracle, rows, guess, noise=5e-6, sampled=False, n_scored=300)
    assert check.accuracy == pytest.approx(0.75, abs=1e-3)
    assert check.faithful and check.se < 1e-3
    assert oracle.queries == 2


def test_check_pair_on_a_public_split_measures_the_public_rows() -> None:
    labels = _labels(1, n=300)
    oracle = LocalOracle(labels, decimals=5, defenses=[ROUND5], public_fraction=0.5)
    rows = np.arange(300)
    guess = 1 - labels  # every guess wrong: public or private, the measured accuracy is 0
    check = measure_band(oracle, rows[:-1], guess[:-1], noise=5e-6, sampled=True, n_scored=150)
    assert check.accuracy is not None and check.accuracy < 0.01


def test_floor_sends_a_confident_but_wrong_guess_back_to_the_majority_class() -> None:
    labels = _labels(2, n=300)
    oracle = LocalOracle(labels, decimals=5, defenses=[ROUND5])
    guess = np.zeros(300, dtype=np.int64)
    zeros = np.flatnonzero(labels == 0)[:120]
    guess[zeros] = 1  # 120 rows moved to class 1, every one wrong, each claiming 0.99
    confidence = np.full(300, 0.68)
    confidence[zeros] = 0.99
    report = Fingerprint(decimals=5, noise=False)
    outcome = apply_floor(oracle, guess, confidence, report, np.array([0.68, 0.32]), check_budget=6)
    assert outcome.moved_before == 120 and outcome.moved_after == 0
    assert (guess == 0).all() and np.allclose(confidence, 0.68)


def test_floor_keeps_a_good_guess_and_caps_its_confidence_at_the_measured_accuracy() -> None:
    labels = _labels(3, n=300)
    oracle = LocalOracle(labels, decimals=5, defenses=[ROUND5])
    ones = np.flatnonzero(labels == 1)
    moved = np.concatenate([ones[:80], np.flatnonzero(labels == 0)[:20]])  # 80 % of the moved rows right
    guess = np.zeros(300, dtype=np.int64)
    guess[moved] = 1
    confidence = np.full(300, 0.7)
    confidence[moved] = 0.999
    outcome = apply_floor(oracle, guess, confidence, Fingerprint(decimals=5, noise=False),
                          np.array([0.7, 0.3]), check_budget=6)
    assert outcome.moved_after == 100
    assert np.allclose(confidence[moved], 0.8, atol=0.01)


def test_floor_without_check_queries_keeps_only_posteriors_above_one_half() -> None:
    guess = np.array([1, 1, 0, 0], dtype=np.int64)
    confidence = np.array([0.4, 0.999, 0.7, 0.7])
    oracle = LocalOracle(np.array([1, 1, 0, 0]), decimals=5)
    apply_floor(oracle, guess, confidence, Fingerprint(), np.array([0.6, 0.4]), check_budget=0)
    assert guess.tolist() == [0, 1, 0, 0] and oracle.queries == 0


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_auto_stays_at_or_above_the_majority_rate(chain: str) -> None:
    defenses, split = CHAINS[chain]
    for seed in range(3):
        labels = _labels(seed)
        oracle = LocalOracle(labels, decimals=5, defenses=defenses, seed=seed, public_fraction=split)
        result = attacks.run("auto", oracle, budget=BUDGET, seed=seed)
        majority = max(labels.mean(), 1 - labels.mean())
        assert result.queries <= BUDGET
        assert result.accuracy(labels) >= majority - TOLERANCE, (chain, seed, result.details["reasoning"])
