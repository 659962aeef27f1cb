"""Never a false word: ``auto`` calls a label exact only when its decode is guaranteed at its noise bound or a query
confirmed it; a guess is a posterior, and a check query keeps the surest guesses from claiming more than the board
shows."""

from __future__ import annotations

from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from attacks.confirm import count_wrong


def _laplace(scale: float) -> list[dict[str, object]]:
    return [{"name": "noise", "kind": "laplace", "scale": scale}, {"name": "rounding", "decimals": 5}]


def test_ten_class_brier_under_noise_cut_short_vouches_for_no_label() -> None:
    """The likelihood decoder reads the K classes through binary questions; cut short by the budget, some labels
    are wrong, and none of them — no label at all — is called exact."""
    truth = np.random.default_rng(5).integers(0, 10, 300)
    oracle = LocalOracle(truth, metric="brier", n_classes=10, decimals=5, seed=5, defenses=_laplace(1e-3))
    result = attacks.run("auto", oracle, budget=700, seed=0)
    confidence = result.fill_confidence()
    assert result.details["fallback"] == "one_vs_rest"
    assert (result.labels != truth).sum() > 0, "the board should be cut short (else it tests nothing)"
    assert result.exact == 0 and float(confidence.max()) < 1.0


def test_subsetting_labels_on_a_board_misread_as_subsetting_are_not_vouched_for() -> None:
    """Exactly balanced labels at full precision hide a fixed Ladder from the fingerprint; subsetting's decode of
    its releases then held wrong labels, and the confirmation query refuses them."""
    truth = np.random.default_rng(4).permutation(np.repeat([0, 1], 20)).astype(np.int64)
    oracle = LocalOracle(truth, decimals=None, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}], seed=4)
    result = attacks.run("auto", oracle, budget=500, seed=0)
    exact = result.fill_confidence() >= 1.0
    assert not (exact & (result.labels != truth)).any()


def test_subsetting_labels_are_confirmed_and_kept_on_a_subsetting_board() -> None:
    truth = (np.random.default_rng(2).random(60) < 0.5).astype(np.int64)
    defenses = [{"name": "subsetting", "fraction": 0.9}, {"name": "rounding", "decimals": 5}]
    result = attacks.run("auto", LocalOracle(truth, decimals=5, defenses=defenses, seed=2), budget=500, seed=0)
    assert result.details["attack"] == "subsetting"
    assert result.exact == 60 and bool((result.labels == truth).all())
    assert any(line == "confirmation query: passed" for line in result.details["reasoning"])


def test_guesses_behind_an_unseen_ladder_claim_no_more_than_their_class_share() -> None:
    """Behind a parameter-free Ladder the likelihood decoder's questions were read as noiseless and called every
    row sure (right 37 % of the time); the check query sees a re-released score and withdraws the claim."""
    truth = np.random.default_rng(1).integers(0, 3, 40).astype(np.int64)
    defenses: list[dict[str, Any]] = [{"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 5}]
    oracle = LocalOracle(truth, metric="softmax_ce", n_classes=3, decimals=5, defenses=defenses, seed=1)
    result = attacks.run("auto", oracle, budget=300, seed=0)
    confidence = result.fill_confidence()
    right = float((result.labels == truth).mean())
    assert result.exact == 0
    assert float(confidence.mean()) <= right + 0.1, (float(confidence.mean()), right)


def test_count_wrong_reads_the_wrong_labels_through_noise_and_refuses_a_re_released_score() -> None:
    truth = np.random.default_rng(3).integers(0, 4, 200)
    claimed = truth.copy()
    claimed[:7] = (claimed[:7] + 1) % 4
    board = LocalOracle(truth, metric="brier", n_classes=4, decimals=5, seed=3, defenses=_laplace(1e-4))
    staked = np.ones(200, dtype=bool)
    wrong = count_wrong(board, claimed, staked, earlier=[])
    assert wrong is not None and abs(wrong - 7) < 0.5
    first = board.submit(np.full((200, 4), 0.25))
    assert first is not None
    assert count_wrong(board, claimed, staked, earlier=[float(first)]) is not None  # a fresh score is read
    ladder = LocalOracle(truth, metric="brier", n_classes=4, decimals=5, seed=3,
                         defenses=[{"name": "ladder", "mode": "parameter_free"}])
    best = ladder.submit(np.eye(4)[truth] * 0.9 + 0.025)
    assert best is not None
    assert count_wrong(ladder, claimed, staked, earlier=[float(best)]) is None


def test_a_likelihood_decoder_that_forgets_its_posteriors_vouches_for_nothing() -> None:
    """``attacks.run`` reads an unset confidence as vouching only for exact-stage attacks."""
    from attacks.catalogue import Stage
    from attacks.registry import ATTACKS, CATALOGUE, register

    def forgetful(oracle: object, **params: object) -> np.ndarray:
        return np.zeros(4, dtype=np.int64)

    try:
        register("forgetful_decoder", exact=False, stage=Stage.LIKELIHOOD)(forgetful)
        result = attacks.run("forgetful_decoder", LocalOracle([0, 1, 0, 1], decimals=5))
        assert result.exact == 0 and float(result.fill_confidence().max()) < 1.0
    finally:
        ATTACKS.pop("forgetful_decoder", None)
        CATALOGUE.pop("forgetful_decoder", None)
