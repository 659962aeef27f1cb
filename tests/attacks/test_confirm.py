"""attacks.run confirms an exact attack's claims with one query: correct claims pass at the cost of one query,
and a server that misleads the attack (a Ladder re-releasing an old score) makes it fail loudly instead of
returning a wrong labeling as a success (found by the standard game: ~50 % accuracy claimed as success)."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.confirm import check_claims, confident_predictions


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
    result = attacks.run("boosting", LocalOracle(_labels(200, 5), metric="accuracy"), budget=20, seed=1)
    assert "confirmed" not in result.details


def test_confirmation_predictions_are_confident_where_claimed_and_neutral_elsewhere() -> None:
    binary = confident_predictions(np.array([1, 0, -1]), 2, eps=1e-15)
    assert binary.tolist() == [1 - 1e-15, 1e-15, 0.5]
    multi = confident_predictions(np.array([2, -1]), 3, eps=1e-15)
    assert multi[0].argmax() == 2 and np.allclose(multi.sum(axis=1), 1.0)
    assert np.allclose(multi[1], 1 / 3)


# --- check_claims: the one path every re-check of claimed labels goes through --------------------------------


def test_the_right_labels_pass_for_one_query_and_one_wrong_label_fails() -> None:
    labels = _labels(500, 6)
    oracle = LocalOracle(labels, decimals=5)
    assert check_claims(oracle, labels) == "passed"
    assert oracle.queries == 1
    wrong = labels.copy()
    wrong[123] ^= 1
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(oracle, wrong)


def test_the_check_tolerates_noise_within_the_stated_bound_only() -> None:
    labels = _labels(300, 7)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    # 20 Laplace scales: exceeded with probability e^-20.
    assert check_claims(LocalOracle(labels, decimals=5, defenses=chain, seed=1), labels, slack=2e-2) == "passed"
    # A seed whose draw is positive: the confirmation's log loss is ≈ 0, and a negative draw is clamped to the
    # metric's range (0), which is the exact score.
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(LocalOracle(labels, decimals=5, defenses=chain, seed=2), labels)


def test_a_tolerance_wider_than_one_label_is_reported_as_uninformative() -> None:
    labels = _labels(100, 8)  # one wrong label moves the score by ln((1-eps)/eps)/100 ≈ 0.35
    assert check_claims(LocalOracle(labels, decimals=5), labels, slack=0.2).startswith("uninformative")


def test_only_the_scored_rows_enter_the_expected_score() -> None:
    labels = _labels(200, 9)
    oracle = LocalOracle(labels, decimals=5, public_fraction=0.4, seed=2)
    mask = oracle.spec.hidden.public_mask
    claimed = np.where(mask, labels, -1)
    assert check_claims(oracle, claimed, scored=mask) == "passed"
    wrong = claimed.copy()
    wrong[np.flatnonzero(mask)[0]] ^= 1
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(oracle, wrong, scored=mask)


def test_a_tiny_clipping_eps_still_makes_a_wrong_label_cost_a_finite_loss() -> None:
    labels = _labels(50, 10)
    oracle = LocalOracle(labels, decimals=None, eps=1e-300)
    assert check_claims(oracle, labels) == "passed"
    wrong = labels.copy()
    wrong[7] ^= 1
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(oracle, wrong)


def test_multiclass_claims_are_checked() -> None:
    labels = np.random.default_rng(11).integers(0, 4, 80)
    oracle = LocalOracle(labels, metric="multiclass_logloss", n_classes=4, decimals=5)
    assert check_claims(oracle, labels) == "passed"
    wrong = labels.copy()
    wrong[0] = (wrong[0] + 1) % 4
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(oracle, wrong)


def test_other_metrics_are_not_checked_and_cost_no_query() -> None:
    oracle = LocalOracle(_labels(40, 12), metric="accuracy")
    assert check_claims(oracle, _labels(40, 12)).startswith("not checked")
    assert oracle.queries == 0


def test_the_default_stake_is_eps_on_every_other_class() -> None:
    multi = confident_predictions(np.array([0, 2]), 3)
    assert multi.tolist() == [[1 - 2e-15, 1e-15, 1e-15], [1e-15, 1e-15, 1 - 2e-15]]


@pytest.mark.parametrize(
    ("metric", "k"),
    [("kl", 3), ("brier", 2), ("brier", 6), ("norm_like", 3), ("norm_like:2.5", 2), ("itakura_saito", 2),
     ("itakura_saito", 4), ("softmax_ce", 3), ("sigmoid_ce", 2)],
)
def test_claims_are_checked_on_every_metric_the_exact_attacks_run_on(metric: str, k: int) -> None:
    labels = np.random.default_rng(k).integers(0, k, 50)
    claimed = labels.copy()
    claimed[::7] = -1  # unclaimed rows are neutral
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5)
    assert check_claims(oracle, claimed) == "passed"
    assert oracle.queries == 1
    wrong = claimed.copy()
    wrong[3] = (labels[3] + 1) % k  # one wrong label anywhere fails loudly
    with pytest.raises(AttackFailed, match="confirmation failed"):
        check_claims(LocalOracle(labels, metric=metric, n_classes=k, decimals=5), wrong)


def test_split_claims_on_a_bregman_board_count_the_public_rows_only() -> None:
    labels = np.random.default_rng(9).integers(0, 3, 80)
    oracle = LocalOracle(labels, metric="brier", n_classes=3, decimals=5, public_fraction=0.5, seed=2)
    mask = oracle.spec.hidden.public_mask
    claimed = np.where(mask, labels, -1)
    assert check_claims(oracle, claimed, scored=mask) == "passed"
    claimed[np.flatnonzero(mask)[0]] = (labels[np.flatnonzero(mask)[0]] + 1) % 3
    with pytest.raises(AttackFailed):
        check_claims(LocalOracle(labels, metric="brier", n_classes=3, decimals=5, public_fraction=0.5, seed=2),
                     claimed, scored=mask)


def test_metrics_without_a_row_formula_spend_nothing() -> None:
    oracle = LocalOracle(_labels(40, 1), metric="auc", decimals=5)
    assert check_claims(oracle, _labels(40, 1)).startswith("not checked")
    assert oracle.queries == 0
