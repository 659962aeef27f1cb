"""``auto`` on paper 001's logit boards (``softmax_ce``, ``sigmoid_ce``): the fingerprint's choice is the attack
of the metric's name (through the inverse activation), plain or with the doubling trick under noise, and every
label comes back exact; on a K-class cross-entropy board whose noise ``capacity`` could not carry, the
doubling-trick attacks are next in line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import attacks
from attacks import LocalOracle
from attacks.catalogue import BoardFacts
from attacks.fallbacks import cross_entropy_plans
from attacks.fingerprint import Fingerprint

ROUND5 = {"name": "rounding", "decimals": 5}
LAPLACE = [{"name": "noise", "kind": "laplace", "scale": 1e-4}, ROUND5]


@pytest.mark.parametrize(("metric", "k"), [("softmax_ce", 10), ("softmax_ce", 6), ("softmax_ce", 2),
                                           ("sigmoid_ce", 2)])
@pytest.mark.parametrize("chain", [[], [ROUND5], LAPLACE], ids=["plain", "rounded", "laplace-1e-4"])
def test_auto_recovers_every_label_on_a_logit_board(metric: str, k: int, chain: list[dict[str, Any]]) -> None:
    labels = np.random.default_rng(40 + k).integers(0, k, 120)
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5, defenses=chain, seed=k)
    result = attacks.run("auto", oracle, budget=1500)
    assert result.details["attack"] == metric, result.details["reasoning"]
    assert result.details["plan"]["params"].get("doubling", False) is (chain is LAPLACE)
    assert result.details["exact"] == 120 and np.array_equal(result.labels, labels), result.details["reasoning"]
    assert result.queries <= 1500


def test_a_public_split_on_a_logit_board_is_not_given_to_the_logit_attacks() -> None:
    labels = np.random.default_rng(41).integers(0, 3, 100)
    oracle = LocalOracle(labels, metric="softmax_ce", n_classes=3, decimals=5, public_fraction=0.3, seed=1)
    result = attacks.run("auto", oracle, budget=40)
    assert result.details["attack"] not in ("softmax_ce", "sigmoid_ce")


def test_the_doubling_trick_is_next_when_capacity_fails_on_noisy_multiclass_log_loss() -> None:
    oracle = LocalOracle(np.arange(30) % 6, metric="multiclass_logloss", n_classes=6, decimals=5)
    noisy = Fingerprint(decimals=5, noise=True, noise_spread=1e-3)
    plans = cross_entropy_plans(BoardFacts.of(oracle, noisy))
    assert [p.attack for p in plans] == ["bregman_powers", "ce_robust"]
    assert all(p.params == {"doubling": True} for p in plans)
    assert cross_entropy_plans(BoardFacts.of(oracle, Fingerprint(decimals=5, noise=False))) == []
    assert cross_entropy_plans(BoardFacts.of(LocalOracle(np.arange(30) % 2, decimals=5), noisy)) == []


def test_a_budget_cut_keeps_the_batches_decoded_instead_of_losing_them_to_the_check() -> None:
    """The attack's check query would pass the budget: the decoded batches are kept (cut, not checked)."""
    labels = np.random.default_rng(3).integers(0, 10, 120)
    result = attacks.run("auto", LocalOracle(labels, metric="softmax_ce", n_classes=10, decimals=5), budget=30)
    assert result.details["attack"] == "softmax_ce" and result.details["cut_by_budget"]
    exact = result.fill_confidence() >= 1.0
    assert exact.sum() == result.details["exact"] >= 60 and (result.labels[exact] == labels[exact]).all()
    assert result.queries <= 30
