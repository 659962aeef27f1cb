"""Disclosed chain parameters are read, not measured, and trusted only while the releases agree with them."""

from __future__ import annotations

import numpy as np
import pytest

from attacks import LocalOracle, run
from attacks.catalogue import BoardFacts
from attacks.disclosure import Disclosure
from attacks.fingerprint import fingerprint

ROWS = 300


def labels(seed: int, share: float = 0.66) -> np.ndarray:
    return (np.random.default_rng(seed).random(ROWS) < share).astype(np.int64)


def budget_chain(eps: float, releases: int = 20) -> list[dict[str, object]]:
    return [{"name": "noise", "kind": "laplace", "epsilon": eps},
            {"name": "privacy_budget", "epsilon": releases * eps, "composition": "basic"},
            {"name": "rounding", "decimals": 5}]


def told_budget(eps: float, releases: int = 20) -> dict[str, object]:
    return {"defenses": [{"name": "noise", "kind": "laplace", "epsilon": eps},
                         {"name": "privacy_budget", "epsilon": releases * eps}]}


def majority(y: np.ndarray) -> float:
    return float(max(y.mean(), 1 - y.mean()))


def test_both_shapes_of_a_disclosure_are_read() -> None:
    chain = Disclosure.parse({"defenses": [{"name": "ladder", "mode": "fixed", "eta": 0.01},
                                           {"name": "randomized_response", "p": 0.05, "mode": "fresh"},
                                           {"name": "subsetting", "fraction": 0.5}]})
    assert (chain.ladder_mode, chain.ladder_step, chain.rr_p, chain.subset_fraction) == ("fixed", 0.01, 0.05, 0.5)
    flat = Disclosure.parse({"epsilon": 2.0, "privacy_budget": 30.0, "same_file_same_score": True})
    assert (flat.noise_epsilon, flat.budget_epsilon, flat.releases_per_account()) == (2.0, 30.0, 15)
    as_text = Disclosure.parse({"text": '[{"name": "noise", "kind": "laplace", "scale": 0.001}]'})
    assert as_text.noise_scale == 0.001 and as_text.noise_scale_on(34.5, 100) == 0.001
    assert not Disclosure.parse({"text": "Scores carry a little Laplace noise."}).stated
    assert not Disclosure.parse({"same_file_same_score": False}).stated


def test_a_disclosed_budget_spends_one_probe_and_auto_plays_budgeted_at_once() -> None:
    y = labels(1)
    told = LocalOracle(y, defenses=budget_chain(10.0), seed=2, disclosed=told_budget(10.0))
    report = fingerprint(told, seed=0)
    assert report.probes == 1 and report.noise and report.balance is not None and not report.contradicted
    assert abs(report.balance[1] - y.mean()) < 0.01

    board = LocalOracle(y, defenses=budget_chain(10.0), seed=2, disclosed=told_budget(10.0))
    result = run("auto", board, budget=500)
    assert result.details["attack"] == "budgeted" and result.details["fingerprint_queries"] == 1
    hand = run("budgeted", LocalOracle(y, defenses=budget_chain(10.0), seed=2), epsilon=10.0)
    assert result.accuracy(y) >= hand.accuracy(y) - 1e-9
    assert result.accuracy(y) >= majority(y)
    assert result.exact == 0  # Laplace noise is unbounded: nothing is called exact

    # Without the disclosure the fingerprint spends its probes (each a release of the budget) measuring the board.
    blind = run("auto", LocalOracle(y, defenses=budget_chain(10.0), seed=2), budget=500)
    assert blind.details["fingerprint_queries"] > 1


@pytest.mark.parametrize(("seed", "share"), [(3, 0.66), (4, 0.5)])
def test_more_accounts_read_more_never_less_and_at_least_what_budgeted_reads_by_hand(seed: int, share: float) -> None:
    y = labels(seed, share)
    accuracy = {}
    for k in (1, 10, 30):
        board = LocalOracle(y, defenses=budget_chain(10.0), seed=seed, accounts=k, disclosed=told_budget(10.0))
        result = run("auto", board, budget=2000)
        accuracy[k] = result.accuracy(y)
        details = result.details["attack_details"]
        # Every account is spent while rows are left unsure; an account the settled rows do not need is kept.
        assert details["accounts_used"] == k or (k == 30 and details["accounts_used"] >= 10)
        assert details["scale_check"] == "the releases fit the noise scale"
        assert result.exact == 0
        hand = run("budgeted", LocalOracle(y, defenses=budget_chain(10.0), seed=seed, accounts=k), epsilon=10.0)
        assert accuracy[k] >= hand.accuracy(y) - 1e-9
    assert majority(y) <= accuracy[1] <= accuracy[10] <= accuracy[30]
    assert accuracy[10] > accuracy[1] + 0.2  # 200 releases read 300 rows, re-reading the unsure ones


@pytest.mark.parametrize(("true_eps", "told_eps"), [(1.0, 10.0), (10.0, 1000.0)])
def test_a_budget_disclosure_the_releases_contradict_is_measured_instead(true_eps: float, told_eps: float) -> None:
    y = labels(5)
    board = LocalOracle(y, defenses=budget_chain(true_eps), seed=6, accounts=3, disclosed=told_budget(told_eps))
    result = run("auto", board, budget=500)
    check = result.details["attack_details"]["scale_check"]
    assert "fitted to the releases" in check
    assert result.exact == 0 and result.accuracy(y) >= majority(y) - 0.02


def test_a_disclosed_noise_scale_replaces_the_repeat_probe_while_the_releases_agree() -> None:
    y = labels(7)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    honest = fingerprint(LocalOracle(y, defenses=chain, seed=1, disclosed={"scale": 1e-3}), seed=0)
    assert honest.noise and honest.told and not honest.contradicted
    lying = fingerprint(LocalOracle(y, defenses=chain, seed=1, disclosed={"scale": 1e-9}), seed=0)
    assert lying.contradicted and lying.noise and lying.noise_spread > 1e-6
    assert not BoardFacts.of(LocalOracle(y, defenses=chain, disclosed={"scale": 1e-9}), lying).told.stated
    # Either way auto's exact labels are right: the lie was caught and the noise measured.
    for disclosed in ({"scale": 1e-3}, {"scale": 1e-9}):
        result = run("auto", LocalOracle(y[:80], defenses=chain, seed=1, disclosed=disclosed), budget=400)
        exact = result.fill_confidence() >= 1.0
        assert (result.labels[exact] == y[:80][exact]).all()


@pytest.mark.parametrize("told", [{"eta": 0.01}, {"eta": 0.02}, {"ladder": "parameter_free"}])
def test_a_disclosed_ladder_step_is_checked_against_the_leader(told: dict[str, object]) -> None:
    y = (np.random.default_rng(5).random(120) < 0.6).astype(np.int64)
    board = LocalOracle(y, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}], seed=3, accounts=2,
                        disclosed=told)
    result = run("auto", board, budget=3000)
    exact = result.fill_confidence() >= 1.0
    assert (result.labels[exact] == y[exact]).all()
    assert result.accuracy(y) == 1.0
    if told.get("eta") == 0.02:  # the leader 14.39 is no multiple of 0.02: the disclosure is dropped
        assert any("contradicted" in line for line in result.details["reasoning"])


def test_a_disclosed_subset_size_that_fits_no_release_is_measured() -> None:
    y = (np.random.default_rng(40).random(60) < 0.4).astype(np.int64)
    queries = {}
    for name, told in (("none", None), ("true", {"subset_fraction": 0.5}), ("false", {"subset_fraction": 0.8})):
        board = LocalOracle(y, decimals=5, defenses=[{"name": "subsetting", "fraction": 0.5}], seed=3, disclosed=told)
        result = run("auto", board, budget=500)
        assert result.details["attack"] == "subsetting" and result.accuracy(y) == 1.0
        queries[name] = result.queries
    assert queries["true"] < queries["none"]


def test_a_budget_disclosed_without_its_noise_spends_three_probes_and_refits_the_scale() -> None:
    y = labels(8)
    board = LocalOracle(y, defenses=budget_chain(10.0), seed=9, accounts=3, disclosed={"privacy_budget": 200.0})
    result = run("auto", board, budget=500)
    assert result.details["attack"] == "budgeted" and result.details["fingerprint_queries"] == 3
    details = result.details["attack_details"]
    assert "refitted to the releases" in details["scale_check"]
    true_scale = 34.538776394910684 / ROWS / 10.0
    assert 0.5 * true_scale < details["scale"] < 2 * true_scale
    assert result.exact == 0 and result.accuracy(y) > majority(y)


@pytest.mark.parametrize("chain", [[{"name": "ladder", "mode": "parameter_free"}],
                                   [{"name": "ladder", "mode": "fixed", "eta": 0.01}], []],
                         ids=["ladder-free", "ladder-fixed", "plain"])
def test_a_host_that_discloses_a_budget_it_does_not_run_gets_no_false_word(chain: list[dict[str, object]]) -> None:
    y = (np.random.default_rng(12).random(ROWS) < 0.66).astype(np.int64)
    board = LocalOracle(y, defenses=chain, seed=3, disclosed=told_budget(10.0))
    result = run("auto", board, budget=600)
    details = result.details["attack_details"]
    assert result.exact == 0 and result.accuracy(y) >= majority(y)
    if chain:  # a Ladder re-releases earlier scores: nothing is read, every row the majority class
        assert details["stuck"] and "re-releases earlier scores" in details["scale_check"]
    else:  # no noise at all: the reads sit on the labelings' scores and decode every row
        assert "less noise than assumed" in details["scale_check"] and result.accuracy(y) == 1.0
