"""``auto`` never below the majority class where the fingerprint used to misread the class balance, and a
result that answers no row says it failed and why (golden cells kl-k2-ladder_free-…-skew-n40,
binary_logloss-k2-thresholdout_big-…-skew-n60, multiclass_logloss-k3-privacy_quiet-…-bal-n40)."""

from __future__ import annotations

from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from attacks.fingerprint import fingerprint


def _labels(n: int, counts: list[int], seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(len(counts)), counts))


def test_a_constant_probe_that_re_releases_the_leader_is_checked_by_its_mirror() -> None:
    # A parameter-free Ladder re-releases ln 2 (the ½ probe) for the 0.7 constant on a 70/30 board: read as a
    # share, 60 % ones. The mirror constant breaks the pair's sum and gives the true balance.
    labels = _labels(40, [28, 12])
    oracle = LocalOracle(labels, metric="kl", n_classes=2, decimals=5, seed=1,
                         defenses=[{"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 5}])
    report = fingerprint(oracle, budget=8)
    assert report.ladder is True and report.balance is not None
    assert abs(report.balance[1] - 0.3) < 0.01
    result = attacks.run("auto", LocalOracle(labels, metric="kl", n_classes=2, decimals=5, seed=1, defenses=[
        {"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 5}]), budget=40, seed=0)
    assert int((result.labels == labels).sum()) >= 28


def test_a_plain_board_keeps_its_one_constant_probe() -> None:
    labels = _labels(40, [28, 12])
    oracle = LocalOracle(labels, metric="kl", n_classes=2, decimals=5, seed=1)
    report = fingerprint(oracle, budget=8)
    assert not report.ladder and report.balance is not None and abs(report.balance[1] - 0.3) < 0.01


def test_edge_probes_that_break_a_plain_boards_sums_re_read_the_balance() -> None:
    # Thresholdout with a large reference side: the edge probes come back as noisy holdout values (49 % ones on
    # a 30 % board); a 0.7 constant is released from the reference side.
    labels = _labels(60, [42, 18])
    chain = [{"name": "thresholdout", "reference_fraction": 0.8}, {"name": "rounding", "decimals": 5}]
    report = fingerprint(LocalOracle(labels, decimals=5, seed=1, defenses=chain), budget=8, spare=1)
    assert report.balance is not None and report.balance[0] > 0.5
    assert any("edge probes missed" in note for note in report.notes)
    result = attacks.run("auto", LocalOracle(labels, decimals=5, seed=1, defenses=chain), budget=500, seed=0)
    assert int((result.labels == labels).sum()) >= 42


def test_a_board_of_few_releases_spends_them_on_the_balance_first() -> None:
    # Four releases in all (a privacy budget whose noise 3 decimals hide): the K-class fingerprint used to spend
    # them on the ½ and row probes, the constants withheld, and answered no row.
    labels = _labels(40, [14, 13, 13])
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 1e4},
             {"name": "privacy_budget", "epsilon": 4e4, "composition": "basic"}, {"name": "rounding", "decimals": 3}]
    oracle = LocalOracle(labels, metric="multiclass_logloss", n_classes=3, decimals=3, seed=1, defenses=chain)
    result = attacks.run("auto", oracle, budget=500, seed=0)
    assert (result.labels >= 0).all() and "failed" not in result.details
    assert int((result.labels == labels).sum()) == 14


def test_a_result_that_answers_no_row_says_it_failed() -> None:
    result = attacks.run("auto", LocalOracle(_labels(40, [14, 13, 13]), metric="multiclass_logloss", n_classes=3,
                                             decimals=5, seed=1), budget=0)
    assert (result.labels == -1).all()
    assert "nothing was released" in result.details["failed"]
    assert result.details["reasoning"][-1].startswith("result: failed (")


def test_a_hard_label_result_that_answers_no_row_says_it_failed() -> None:
    oracle = LocalOracle(_labels(60, [20, 20, 20]), metric="accuracy", n_classes=3, decimals=5, seed=1,
                         defenses=[{"name": "threshold", "t": 0.5}])
    result = attacks.run("auto", oracle, budget=3)
    assert (result.labels == -1).all()
    assert "failed" in result.details
    assert result.details["reasoning"][-1].startswith("result: failed (")


def test_guesses_the_check_query_scores_below_the_majority_class_go_back_to_it() -> None:
    # A guess (any attack's, any fallback's) that the board's own release scores below the constant guess is not
    # kept: 60/30/10 labels, a guess right on a third of its rows, staked by the check query.
    from attacks.auto import BudgetedView, _check_guesses

    labels = _labels(60, [36, 18, 6])
    oracle = LocalOracle(labels, metric="multiclass_logloss", n_classes=3, decimals=5, seed=1)
    view = BudgetedView(oracle, 50)
    report = fingerprint(view, budget=8)
    assert report.balance is not None and int(np.argmax(report.balance)) == 0
    guess = (labels + np.where(np.arange(60) % 3 == 0, 0, 1)) % 3  # right on every third row
    confidence = np.full(60, 0.8)
    reasoning: list[str] = []
    _check_guesses(view, guess, confidence, report, 0, reasoning)
    assert any(line.startswith("floor: the check scored") for line in reasoning)
    assert (guess == 0).all() and int((guess == labels).sum()) == 36
    assert (confidence < 1.0).all()


def test_guesses_the_check_query_scores_above_the_majority_class_are_kept() -> None:
    from attacks.auto import BudgetedView, _check_guesses

    labels = _labels(60, [36, 18, 6])
    oracle = LocalOracle(labels, metric="multiclass_logloss", n_classes=3, decimals=5, seed=1)
    view = BudgetedView(oracle, 50)
    report = fingerprint(view, budget=8)
    guess = np.where(np.arange(60) % 6 == 0, (labels + 1) % 3, labels)  # right on five rows of six
    confidence = np.full(60, 0.8)
    reasoning: list[str] = []
    _check_guesses(view, guess, confidence, report, 0, reasoning)
    assert not any(line.startswith("floor:") for line in reasoning)
    assert int((guess == labels).sum()) == 50


LADDER_FREE: list[dict[str, Any]] = [{"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 5}]


def test_a_k_class_constant_that_re_releases_the_leader_reads_as_unmeasured() -> None:
    # 60/30/10 behind a parameter-free Ladder: the class-1 constant re-releases the class-0 constant's score (its
    # leader), read as 50/50/0 before; now class 1's share is unmeasured and class 0 stays the majority.
    labels = _labels(40, [24, 12, 4])
    report = fingerprint(LocalOracle(labels, metric="softmax_ce", n_classes=3, decimals=5, seed=1,
                                     defenses=LADDER_FREE), budget=8)
    assert report.balance is not None and int(np.argmax(report.balance)) == 0
    assert abs(report.balance[0] - 0.6) < 0.01
    assert any("released exactly an earlier score" in note for note in report.notes)


def test_k_class_guesses_less_likely_than_the_majority_share_go_back_to_it() -> None:
    from attacks.auto import BudgetedView, _class_floor
    from attacks.seen import Fingerprint

    labels = _labels(40, [24, 12, 4])
    view = BudgetedView(LocalOracle(labels, metric="multiclass_logloss", n_classes=3, decimals=5, seed=1), 10)
    report = Fingerprint(balance=[0.6, 0.3, 0.1])
    guess = np.full(40, 1)
    confidence = np.where(np.arange(40) < 5, 0.9, 0.34)  # five sure rows kept, the rest below the 0.6 share
    reasoning: list[str] = []
    _class_floor(view, guess, confidence, report, reasoning)
    assert (guess[:5] == 1).all() and (guess[5:] == 0).all()
    assert reasoning and reasoning[0].startswith("floor: 35 guessed row(s)")
