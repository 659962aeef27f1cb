"""``noisy_split``: the likelihood decoder with a third state per row ("not scored") on a binary log-loss board
with an undisclosed public split, through noise beyond what ``capacity_split`` carries."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.noisy.decoder import NoiseModel
from attacks.noisy.design import SignDesign
from attacks.noisy.split import STATES, amp_ternary, public_count, refine_ternary


def _board(n: int, scale: float, fraction: float | None, seed: int) -> tuple[LocalOracle, np.ndarray, np.ndarray]:
    labels = np.random.default_rng(seed).integers(0, 2, n)
    oracle = LocalOracle(labels, metric="binary_logloss", decimals=5, public_fraction=fraction, seed=seed,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    public = oracle.spec.hidden.public_mask if fraction is not None else np.ones(n, dtype=bool)
    if fraction is not None:
        oracle.public_fraction = None  # undisclosed: the attack must find the split itself
    return oracle, labels, public


@pytest.mark.parametrize(("n", "scale", "fraction"), [(300, 0.1, 0.3), (300, 0.3, 0.3), (300, 0.1, 0.9),
                                                       (300, 0.1, None)])
def test_it_reads_the_mask_and_every_public_label_through_noise(
    n: int, scale: float, fraction: float | None
) -> None:
    oracle, labels, public = _board(n, scale, fraction, seed=1)
    result = attacks.run("noisy_split", oracle, budget=20 * n, seed=1)
    assert result.details["complete"] and result.details["n_public"] == public.sum()
    assert np.array_equal(result.details["public_mask"], public)
    assert np.array_equal(result.labels[public], labels[public]) and (result.labels[~public] == -1).all()
    assert oracle.queries == result.queries <= 20 * n


def test_the_decoder_finds_the_brute_force_map_on_a_small_board() -> None:
    # Seven rows, three states each: every one of the 3^7 assignments scored under the Laplace likelihood and
    # the prior; AMP then the state moves reach the exact MAP, and their posteriors match the exact marginals
    # of each row given the others.
    rng = np.random.default_rng(4)
    n, m, kappa, scale = 7, 60, 0.5, 0.3
    truth = rng.choice(STATES, size=n).astype(np.int64)
    design = SignDesign(n, 1e-15)
    for _ in range(m):
        signs = rng.integers(0, 2, n) * 2 - 1
        design.add(signs, 0.0)
    s = np.concatenate(design.blocks()).astype(np.float64)
    r = kappa * s @ truth + rng.laplace(0.0, scale, m)
    noise = NoiseModel("laplace", scale)
    log_prior = np.log(np.array([0.3, 0.4, 0.3]))
    states = np.array(list(itertools.product((-1, 0, 1), repeat=n)), dtype=np.int64)
    score = noise.loglik(r[None, :] - kappa * states @ s.T).sum(axis=1) + log_prior[states + 1].sum(axis=1)
    best = states[int(np.argmax(score))]
    probs = amp_ternary(design, r, np.sqrt(2) * scale, kappa=kappa, log_prior=log_prior)
    found, posterior = refine_ternary(design, r, noise, probs.argmax(axis=1) - 1, kappa, log_prior)
    assert np.array_equal(found, best)
    for i in range(n):  # P(row i's state | the others at the MAP), by brute force over its three states
        others = states[np.all(np.delete(states, i, axis=1) == np.delete(best, i), axis=1)]
        exact = np.exp(score[np.all(np.delete(states, i, axis=1) == np.delete(best, i), axis=1)])
        exact /= exact.sum()
        assert posterior[i, others[:, i] + 1] == pytest.approx(exact, abs=1e-9)


def test_the_public_count_is_read_from_the_releases_spread() -> None:
    rng = np.random.default_rng(2)
    n, n_pub, spread, sigma = 400, 120, 34.5, 0.1
    t = np.zeros(n)
    t[rng.choice(n, n_pub, replace=False)] = rng.choice([-1.0, 1.0], n_pub)
    s = rng.choice([-1.0, 1.0], size=(3000, n))
    r = spread / (2 * n_pub) * s @ t + rng.normal(0.0, sigma, 3000)
    assert abs(public_count(r, spread, sigma**2, n) - n_pub) <= 0.05 * n_pub


def test_auto_reads_a_split_board_whose_noise_defeats_the_exact_split_design() -> None:
    # Laplace 0.1 on 300 rows with the default 30 % public split: capacity_split and its retries fail, and auto
    # ended on boosting at the majority rate of the public rows (0.5) after 6,000 queries.
    oracle, labels, public = _board(300, 0.1, 0.3, seed=1)
    oracle.public_fraction = 0.3  # the board says its split, as Kaggle does
    result = attacks.run("auto", oracle, budget=6000, seed=1)
    assert result.details["fallback"] == "noisy_split", result.details["reasoning"]
    assert np.array_equal(result.labels[public], labels[public])
    assert oracle.queries < 600


def test_it_refuses_a_board_it_cannot_model() -> None:
    with pytest.raises(AttackFailed, match="binary log loss"):
        attacks.run("noisy_split", LocalOracle(np.arange(30) % 3, metric="multiclass_logloss"))


def test_the_floor_counts_the_rows_the_guess_found_public() -> None:
    # Laplace 0.3: the fingerprint's estimate of the scored rows is a noisy probe's (3.7 of 90 here), and the
    # floor sent the whole decoded band back to the majority class as "not scored" (0.589 of the public labels).
    # The guess's own mask and count now weigh its check.
    labels = np.random.default_rng(1000).integers(0, 2, 300)
    oracle = LocalOracle(labels, metric="binary_logloss", decimals=5, public_fraction=0.3, seed=0,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 0.3}])
    public = oracle.spec.hidden.public_mask
    result = attacks.run("auto", oracle, budget=6000, seed=0)
    assert result.details["fallback"] == "noisy_split"
    assert any(line.startswith("floor: check of") and line.endswith("kept") for line in result.details["reasoning"])
    assert np.array_equal(result.labels[public], labels[public])


@pytest.mark.parametrize(("metric", "k", "scale"), [("brier", 10, 1e-4), ("multiclass_logloss", 6, 1e-2),
                                                    ("brier", 2, 1e-2)])
def test_balanced_questions_carry_it_to_k_class_and_brier_boards(metric: str, k: int, scale: float) -> None:
    # A question that halves the classes gives its two edge rows the same offset, so the unknown split weighs
    # none: each question is a binary split board, and the three-state posteriors of the questions combine into
    # K + 1 states a row (K labels, not scored).
    labels = np.random.default_rng(0).integers(0, k, 300)
    oracle = LocalOracle(labels, metric=metric, decimals=5, public_fraction=0.3, seed=0,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])
    public = oracle.spec.hidden.public_mask
    oracle.public_fraction = None
    result = attacks.run("one_vs_rest", oracle, attack="noisy_split", budget=6000, seed=0)
    assert np.array_equal(result.details["public_mask"], public)
    assert np.array_equal(result.labels[public], labels[public]) and (result.labels[~public] == -1).all()


def test_an_unbalanced_question_is_refused_before_any_query() -> None:
    oracle = LocalOracle(np.arange(30) % 3, metric="brier", decimals=5, public_fraction=0.3)
    with pytest.raises(AttackFailed, match="halve the classes"):
        attacks.run("one_vs_rest", oracle, attack="noisy_split", budget=1000)
    assert oracle.queries == 0


def test_auto_reads_the_split_ten_class_brier_board_the_multiclass_game_called_safe() -> None:
    # Digits-sized: 540 rows, 10 classes, Brier, 30 % split, Laplace 1e-4. capacity_split cannot pin the public
    # count or carry the noise, and auto guessed the public rows' majority class (0.099 of them right).
    labels = np.random.default_rng(0).integers(0, 10, 540)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-4}, {"name": "rounding", "decimals": 5}]
    oracle = LocalOracle(labels, metric="brier", decimals=None, public_fraction=0.3, seed=0, defenses=chain)
    public = oracle.spec.hidden.public_mask
    result = attacks.run("auto", oracle, budget=2000, seed=0)
    assert result.details["fallback"] == "one_vs_rest", result.details["reasoning"]
    assert np.array_equal(result.labels[public], labels[public]) and oracle.queries <= 2000
