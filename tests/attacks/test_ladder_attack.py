"""The Ladder attacks (attacks/ladder): the arithmetic-coding pieces against brute force, each attack against its
defense at small N, and auto's routing."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import attacks
from attacks.ladder.common import bernoulli_cdf, interval_marginals, split_point
from attacks.ladder.free import FreeLadderAttack, labelings

FIXED = [{"name": "ladder", "mode": "fixed"}]
FREE = [{"name": "ladder", "mode": "parameter_free"}]


def _labels(n: int, share: float, seed: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < share).astype(np.int64)


def _brute(k: int, prior: float) -> list[float]:
    """P(V = v) for every v, V the k bits (most significant first) of independent Bernoulli(prior) labels."""
    out = []
    for v in range(1 << k):
        bits = [(v >> (k - 1 - j)) & 1 for j in range(k)]
        out.append(math.prod(prior if b else 1 - prior for b in bits))
    return out


@pytest.mark.parametrize("prior", [0.5, 0.3, 0.85])
def test_bernoulli_cdf_matches_brute_force(prior: float) -> None:
    k = 5
    probs = _brute(k, prior)
    for t in range((1 << k) + 1):
        assert bernoulli_cdf(t, k, prior) == pytest.approx(sum(probs[:t]), abs=1e-12)


def test_interval_marginals_match_brute_force() -> None:
    k, prior = 4, 0.35
    probs = _brute(k, prior)
    for lo, hi in itertools.combinations(range((1 << k) + 1), 2):
        mass = sum(probs[lo:hi])
        expected = [sum(probs[v] for v in range(lo, hi) if (v >> (k - 1 - j)) & 1) / mass for j in range(k)]
        assert interval_marginals(lo, hi, k, prior) == pytest.approx(expected, abs=1e-9)


def test_split_point_puts_the_asked_share_above_it() -> None:
    k, prior = 10, 0.6
    for q in (0.05, 0.2, 0.5):
        t = split_point(3, 1000, k, prior, q)
        assert 3 < t < 1000
        upper = (bernoulli_cdf(1000, k, prior) - bernoulli_cdf(t, k, prior)) / (
            bernoulli_cdf(1000, k, prior) - bernoulli_cdf(3, k, prior))
        assert abs(upper - q) < 0.05


def test_free_acceptance_model_is_the_defense_formula() -> None:
    """The attack's test (Σd, Σd² only) against the defense's paired test on the whole loss vector."""
    rng = np.random.default_rng(0)
    oracle = attacks.LocalOracle(_labels(50, 0.5, 0), defenses=FREE)
    attack = FreeLadderAttack(oracle, budget=None, block=None)
    n = oracle.n_rows
    for _ in range(200):
        d = np.zeros(n)
        rows = rng.choice(n, size=4, replace=False)
        d[rows] = rng.normal(-3, 10, size=4)
        defense = d.mean() < -np.std(d, ddof=1) / math.sqrt(n)
        model = bool(attack.accepted(np.array([d.sum()]), np.array([(d**2).sum()]))[0])
        assert model <= defense  # the model's "accepted" (with a margin) is never wrong
        if abs(d.mean() + np.std(d, ddof=1) / math.sqrt(n)) > 1e-6:
            assert model == defense


def test_labelings_are_every_vector_once() -> None:
    rows = {tuple(r) for r in labelings(4).tolist()}
    assert rows == set(itertools.product((0, 1), repeat=4))


@pytest.mark.parametrize("seed", [0, 1])
def test_ladder_fixed_recovers_every_label_with_enough_height(seed: int) -> None:
    y = _labels(150, 0.6, seed)
    oracle = attacks.LocalOracle(y, defenses=FIXED, accounts=2)
    result = attacks.run("ladder_fixed", oracle, budget=600)
    assert result.exact == 150
    assert np.array_equal(result.labels, y)
    assert result.details["count_of_ones"] == int(y.sum())


def test_ladder_fixed_within_a_small_budget_is_exact_where_it_claims_and_above_the_majority() -> None:
    y = _labels(200, 0.6, 3)
    oracle = attacks.LocalOracle(y, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.05}])
    result = attacks.run("ladder_fixed", oracle, eta=0.05, budget=60)
    sure = result.fill_confidence() >= 1.0
    assert 0 < sure.sum() < 200
    assert np.array_equal(result.labels[sure], y[sure])
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
    assert oracle.queries <= 60


def test_ladder_fixed_refuses_an_unknown_step() -> None:
    oracle = attacks.LocalOracle(_labels(100, 0.6, 4), defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.03}])
    with pytest.raises(attacks.AttackFailed, match="step"):
        attacks.run("ladder_fixed", oracle, budget=50)


def test_ladder_free_recovers_every_label() -> None:
    y = _labels(180, 0.55, 5)
    oracle = attacks.LocalOracle(y, defenses=FREE)
    result = attacks.run("ladder_free", oracle)
    assert np.array_equal(result.labels, y)
    assert result.exact == 180
    assert oracle.queries < 180 / 5  # blocks of about ten rows


@pytest.mark.parametrize(("chain", "mode"), [(FIXED, "fixed"), (FREE, "parameter_free")])
def test_ladder_tells_the_two_apart(chain: list[dict[str, str]], mode: str) -> None:
    y = _labels(160, 0.6, 6)
    oracle = attacks.LocalOracle(y, defenses=chain, accounts=2)
    result = attacks.run("ladder", oracle, budget=500)
    assert result.details["mode"] == mode
    sure = result.fill_confidence() >= 1.0
    assert np.array_equal(result.labels[sure], y[sure])
    assert sure.sum() == 160


def test_auto_plays_ladder_on_a_fresh_account() -> None:
    y = _labels(160, 0.6, 7)
    oracle = attacks.LocalOracle(y, defenses=FIXED, accounts=3)
    result = attacks.run("auto", oracle, budget=500)
    assert result.details["attack"] == "ladder"
    assert result.details["exact"] == 160
    assert np.array_equal(result.labels, y)


def test_auto_with_one_account_and_a_small_budget_stays_exact_where_it_claims_and_above_the_majority() -> None:
    y = _labels(160, 0.6, 8)
    oracle = attacks.LocalOracle(y, defenses=FIXED)
    result = attacks.run("auto", oracle, budget=60)
    assert result.details["attack"] == "ladder"
    sure = result.fill_confidence() >= 1.0
    assert np.array_equal(result.labels[sure], y[sure])
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean()) - 1e-9
    assert oracle.queries <= 60


@pytest.mark.parametrize("share", [0.3, 0.65])
@pytest.mark.parametrize(
    "chain",
    [FIXED, [{"name": "ladder", "mode": "fixed", "eta": 0.01}], FREE],
    ids=["fixed-default", "fixed-0.01", "parameter-free"],
)
def test_auto_with_one_account_recovers_every_label_from_the_fingerprints_leader(
    chain: list[dict[str, object]], share: float
) -> None:
    # The fingerprint's edge probes open the only account at a leader of about min(π, 1 − π)·A (whichever
    # edge scored lower); the Ladder attack continues from it, the step identified when not disclosed.
    y = _labels(150, share, 9)
    oracle = attacks.LocalOracle(y, decimals=5, defenses=chain, seed=3)
    result = attacks.run("auto", oracle, budget=300)
    assert result.details["attack"] == "ladder"
    assert result.details["fingerprint"]["ladder_start"] is not None
    sure = result.fill_confidence() >= 1.0
    assert sure.all(), result.details["reasoning"]
    assert np.array_equal(result.labels, y)
    assert oracle.queries <= 300


def test_resumed_fixed_attack_identifies_an_undisclosed_step() -> None:
    from attacks.fingerprint import fingerprint
    from attacks.ladder.resume import identify, round_steps

    y = _labels(200, 0.35, 10)
    oracle = attacks.LocalOracle(y, decimals=5, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.02}])
    report = fingerprint(oracle)
    assert report.ladder and report.ladder_start is not None
    count, step, _, used, _ = identify(oracle, report.ladder_start, round_steps(5), budget=50)
    assert count == int(y.sum()) and step is not None and float(step) == 0.02
    assert used < 50  # the releases alone may already leave one hypothesis


@pytest.mark.parametrize("chain", [[{"name": "ladder", "mode": "fixed", "eta": 0.01}], FREE], ids=["fixed", "free"])
def test_auto_tells_the_ladders_apart_when_the_first_release_fits_both(chain: list[dict[str, object]]) -> None:
    # 715 ones of 2,201: every row at eps scores 11.220002, which rounds to 11.22000 — a multiple of 0.01 and
    # an exact count at once. One constant below every fitting step's grid settles it.
    y = (np.random.default_rng(0).random(2201) < 711 / 2201).astype(np.int64)
    assert round(int(y.sum()) * -math.log(1e-15) / 2201, 5) == 11.22
    oracle = attacks.LocalOracle(y, decimals=5, defenses=chain, seed=100)
    result = attacks.run("auto", oracle, budget=2 * 2201)
    assert "constant below" in result.details["attack_details"]["told_apart"]
    assert result.details["exact"] == 2201 and np.array_equal(result.labels, y)


def test_auto_claims_nothing_false_on_a_step_it_cannot_identify() -> None:
    y = _labels(171, 0.4, 11)
    oracle = attacks.LocalOracle(y, decimals=5, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.003}])
    result = attacks.run("auto", oracle, budget=342)
    sure = result.fill_confidence() >= 1.0
    assert np.array_equal(result.labels[sure], y[sure])
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean()) - 1e-9


def test_a_step_as_coarse_as_the_releases_is_played_as_a_fixed_ladder() -> None:
    # A fixed η = 0.01 behind a full-precision display: every release is a multiple of 0.01, which the
    # fingerprint reads as 2 decimals, so every constant lands on the step's grid and none tells the two
    # Ladders apart. The fixed step is assumed (the attack checks each answer against it) and every label comes.
    y = _labels(171, 0.63, 12)
    oracle = attacks.LocalOracle(y, decimals=None, defenses=[{"name": "ladder", "mode": "fixed", "eta": 0.01}])
    result = attacks.run("auto", oracle, budget=1000)
    assert "fixed step is assumed" in result.details["attack_details"]["told_apart"]
    assert result.details["exact"] == 171 and np.array_equal(result.labels, y)


def test_a_parameter_free_ladder_rounded_as_coarsely_claims_nothing_false() -> None:
    # The same coarse releases from a parameter-free Ladder rounded to 2 decimals: the fixed-step assumption is
    # wrong there, and whatever auto claims must still be right and never below the majority class.
    y = _labels(171, 0.63, 13)
    chain: list[dict[str, object]] = [{"name": "ladder", "mode": "parameter_free"}, {"name": "rounding", "decimals": 2}]
    oracle = attacks.LocalOracle(y, decimals=None, defenses=chain, seed=4)
    result = attacks.run("auto", oracle, budget=1000)
    sure = result.fill_confidence() >= 1.0
    assert np.array_equal(result.labels[sure], y[sure]), result.details["reasoning"]
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean()) - 1e-9
