"""``auto`` never below the majority class where the fingerprint used to misread the class balance, and a
result that answers no row says it failed and why (golden cells kl-k2-ladder_free-…-skew-n40,
binary_logloss-k2-thresholdout_big-…-skew-n60, multiclass_logloss-k3-privacy_quiet-…-bal-n40)."""

from __future__ import annotations

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
    assert result.details["failed"].startswith("nothing was released")
    assert result.details["reasoning"][-1].startswith("result: failed (")
