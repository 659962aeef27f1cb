"""The ``randomized_response`` attack (fresh flips) and what the exact attacks recover under fixed flips
(issue 10, item 1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.subset.response import estimate_flip, posteriors, settled


def rr_board(labels: np.ndarray, p: float, mode: str = "fresh", seed: int = 3, **kw: object) -> LocalOracle:
    return LocalOracle(labels, decimals=5, defenses=[{"name": "randomized_response", "p": p, "mode": mode}],
                       seed=seed, **kw)  # type: ignore[arg-type]


def seeded_labels(n: int, seed: int, balance: float = 0.4) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < balance).astype(np.int64)


def test_posteriors_follow_the_binary_symmetric_channel() -> None:
    ones, zeros = np.array([3, 0, 2]), np.array([0, 1, 2])
    post = posteriors(ones, zeros, 0.2, 0.5)
    assert post[0] == pytest.approx(1 / (1 + 0.25**3))
    assert post[1] == pytest.approx(0.2)
    assert post[2] == pytest.approx(0.5)


def test_rows_settle_surest_first_within_the_tolerated_wrong_labels() -> None:
    post = np.array([0.5, 0.999, 0.002, 0.9999, 0.99])
    assert settled(post, 0.0035).tolist() == [False, True, True, True, False]  # errors .001 + .002 + .0001
    assert settled(post, 0.003).tolist() == [False, True, False, True, False]
    assert settled(post, 0.0).tolist() == [False] * 5


def test_the_flip_rate_is_estimated_from_repeats_without_the_stopping_bias() -> None:
    rng = np.random.default_rng(0)
    y = rng.random(4000) < 0.3
    n_obs = rng.integers(2, 7, 4000)
    flips = rng.binomial(n_obs, 0.15)
    ones = np.where(y, n_obs - flips, flips)
    p, prior, pairs = estimate_flip(ones, n_obs - ones)
    assert p == pytest.approx(0.15, abs=0.01)
    assert prior == pytest.approx(0.3, abs=0.02)
    assert pairs > 4000


@pytest.mark.parametrize(("p", "same_file"), [(0.05, False), (0.2, True)])
def test_fresh_randomized_response_is_seen_through(p: float, same_file: bool) -> None:
    y = seeded_labels(171, 7)
    result = attacks.run("randomized_response", rr_board(y, p, same_file_same_score=same_file))
    assert (result.labels == y).all()
    confidence = result.fill_confidence()
    assert (confidence < 1.0).all() and float((1 - confidence).sum()) <= 1e-2  # the target: 0.01 wrong labels
    assert result.details["flip_rate"] == pytest.approx(p, abs=0.05)
    assert result.details["bound_queries"] < result.queries


def test_a_disclosed_flip_rate_is_used() -> None:
    y = seeded_labels(100, 8)
    result = attacks.run("randomized_response", rr_board(y, 0.1), p=0.1)
    assert result.details["flip_rate"] == 0.1 and result.details["flip_rate_disclosed"]
    assert (result.labels == y).all()


def test_a_budget_cut_still_returns_posterior_guesses() -> None:
    y = seeded_labels(171, 9)
    result = attacks.run("randomized_response", rr_board(y, 0.2), budget=20)
    seen = result.labels >= 0
    assert result.queries == 20 and seen.any()
    confidence = result.fill_confidence()
    assert np.all(((confidence > 0.5) & (confidence < 1.0))[seen])


@pytest.mark.parametrize("p", [0.05, 0.2])
def test_fixed_randomized_response_caps_the_exact_attack_at_its_flips(p: float) -> None:
    """Fixed flips are what the board scores against: capacity recovers them exactly (a clean board over its
    labels releases the same scores), so the accuracy against the true labels is 1 − (the flip share)."""
    y = seeded_labels(171, 10)
    board = rr_board(y, p, mode="fixed")
    result = attacks.run("capacity", board)
    flipped = result.labels
    clean = LocalOracle(flipped, decimals=5)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(0.01, 0.99, 171)
        assert board.submit(q) == clean.submit(q)
    share = float((flipped != y).mean())
    assert result.accuracy(y) == 1 - share
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / 171)


@pytest.mark.parametrize("p", [0.05, 0.2])
def test_auto_on_fresh_randomized_response_reaches_every_label_and_never_the_majority_floor(p: float) -> None:
    y = seeded_labels(171, 11)
    result = attacks.run("auto", rr_board(y, p), budget=600)
    assert result.details["attack"] == "randomized_response"
    assert result.accuracy(y) == 1.0
    assert result.details["exact"] == 0  # guesses with a posterior, never vouched


@pytest.mark.parametrize("budget", [15, 60])
def test_auto_on_fresh_randomized_response_with_a_small_budget_stays_above_the_majority(budget: int) -> None:
    y = seeded_labels(171, 12)
    result = attacks.run("auto", rr_board(y, 0.2), budget=budget)
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
    assert result.queries <= budget


def test_the_fingerprint_tells_a_flipped_row_from_a_subset() -> None:
    """A row probed twice that moved the mean as label 0, then as label 1 (both with every row scored): fresh
    flips, not subsetting. (Seeded: this board flips the re-probed row.)"""
    from attacks.fingerprint import fingerprint

    report = fingerprint(rr_board(seeded_labels(171, 11), 0.2))
    assert report.fresh_flips and not report.subsetting
    assert any("fresh flips" in line for line in report.describe())
