"""attacks.run confirms an exact attack's claims with one query: correct claims pass at the cost of one query,
and a server that misleads the attack (a Ladder re-releasing an old score) makes it fail loudly instead of
returning a wrong labeling as a success (found by the standard game: ~50 % accuracy claimed as success)."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.confirm import confirmation_predictions


def _labels(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, n)


@pytest.mark.parametrize("name", ["prime_batched", "binary_representation", "twin_primes"])
def test_correct_claims_pass_for_one_extra_query(name: str) -> None:
    labels = _labels(60, 1)
    plain = attacks.run(name, LocalOracle(labels, decimals=5), confirm=False)
    confirmed = attacks.run(name, LocalOracle(labels, decimals=5))
    assert confirmed.labels.tolist() == labels.tolist()
    assert confirmed.queries == plain.queries + 1
    assert confirmed.details["confirmed"] == "passed"


@pytest.mark.parametrize("name", ["prime_batched", "twin_primes", "binary_representation"])
def test_a_ladder_that_hides_improvements_makes_the_attack_fail_not_lie(name: str) -> None:
    labels = _labels(300, 2)
    oracle = LocalOracle(labels, decimals=5, defenses=[{"name": "ladder", "mode": "parameter_free"}])
    unconfirmed = attacks.run(name, oracle, confirm=False)
    assert (unconfirmed.labels != labels).any(), "the Ladder should mislead the unconfirmed decode"
    with pytest.raises(AttackFailed, match="confirmation failed"):
        attacks.run(name, LocalOracle(labels, decimals=5, defenses=[{"name": "ladder", "mode": "parameter_free"}]))


def test_split_aware_claims_are_checked_on_the_scored_rows_only() -> None:
    labels = _labels(120, 3)
    oracle = LocalOracle(labels, decimals=5, public_fraction=0.3, seed=4)
    result = attacks.run("capacity_split", oracle)
    mask = result.details["public_mask"]
    assert result.details["confirmed"] == "passed"
    assert (result.labels[mask] == labels[mask]).all() and (result.labels[~mask] == -1).all()


def test_best_guess_attacks_are_not_confirmed() -> None:
    result = attacks.run("boosting", LocalOracle(_labels(200, 5), metric="accuracy"), k=20, seed=1)
    assert "confirmed" not in result.details


def test_confirmation_predictions_are_confident_where_claimed_and_neutral_elsewhere() -> None:
    binary = confirmation_predictions(np.array([1, 0, -1]), 2, 1e-15)
    assert binary.tolist() == [1 - 1e-15, 1e-15, 0.5]
    multi = confirmation_predictions(np.array([2, -1]), 3, 1e-15)
    assert multi[0].argmax() == 2 and np.allclose(multi.sum(axis=1), 1.0)
    assert np.allclose(multi[1], 1 / 3)
