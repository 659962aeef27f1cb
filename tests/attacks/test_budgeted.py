"""The privacy-budget attack (attacks/budgeted.py): its posterior against brute force, and the attack against
noise + privacy_budget at small N."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import attacks
from attacks.budgeted import posterior, rows_per_release


def test_posterior_matches_brute_force_bayes() -> None:
    m, scale, prior, released = 3, 0.02, 0.7, 0.71
    z = np.array(list(itertools.product((0, 1), repeat=m)), dtype=np.int64)
    means = 0.69 + z @ np.array([0.04, 0.02, 0.01])
    weights = []
    for row, mu in zip(z, means, strict=True):
        like = math.exp(-abs(released - mu) / scale) / (2 * scale)
        weights.append(like * math.prod(prior if b else 1 - prior for b in row))
    total = sum(weights)
    expected = [sum(w for w, row in zip(weights, z, strict=True) if row[j]) / total for j in range(m)]
    assert posterior(released, means, scale, prior, z) == pytest.approx(expected, abs=1e-12)


def test_rows_per_release_grows_as_the_noise_shrinks() -> None:
    assert rows_per_release(1000, 1e-2, 1e-15) == 1
    assert rows_per_release(1000, 1e-5, 1e-15) > rows_per_release(1000, 1e-4, 1e-15) > 1


def _chain(scale: float, budget: float) -> list[dict[str, object]]:
    return [{"name": "noise", "kind": "laplace", "scale": scale},
            {"name": "privacy_budget", "epsilon": budget, "composition": "basic"}]


def test_budgeted_reads_many_rows_per_release_when_the_noise_is_small() -> None:
    y = (np.random.default_rng(0).random(120) < 0.6).astype(np.int64)
    # Δ = A/120 = 0.288, scale 1e-4: ε = 2878 per release, a budget of 10^5 allows 34 releases; ten rows a
    # release need 12 of them.
    oracle = attacks.LocalOracle(y, defenses=_chain(1e-4, 1e5))
    result = attacks.run("budgeted", oracle, scale=1e-4, prior=float(y.mean()))
    assert result.details["rows_per_release"] == 10
    assert result.details["releases"] - result.details["rereads"] == 12  # the rest of the budget re-reads rows
    assert result.details["rows_queried"] == 120
    sure = result.fill_confidence() > 0.999
    assert sure.sum() >= 80
    assert result.accuracy(y) >= 0.95
    assert np.array_equal(result.labels[sure], y[sure])


def test_accounts_multiply_the_releases() -> None:
    y = (np.random.default_rng(1).random(200) < 0.6).astype(np.int64)
    one = attacks.run("budgeted", attacks.LocalOracle(y, defenses=_chain(1e-3, 200)), scale=1e-3)
    three = attacks.run("budgeted", attacks.LocalOracle(y, defenses=_chain(1e-3, 200), accounts=3), scale=1e-3)
    assert three.details["releases"] == 3 * one.details["releases"] > 0


def test_budgeted_never_falls_below_the_majority_when_releases_say_little() -> None:
    y = (np.random.default_rng(2).random(300) < 0.65).astype(np.int64)
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
             {"name": "privacy_budget", "epsilon": 5, "composition": "basic"}]
    result = attacks.run("budgeted", attacks.LocalOracle(y, defenses=chain), epsilon=1.0, prior=float(y.mean()))
    assert result.details["releases"] == 5
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
    assert (result.fill_confidence() < 1.0).all()  # nothing is claimed exact under Laplace noise


def test_auto_spends_a_privacy_budget_and_stays_at_or_above_the_majority() -> None:
    y = (np.random.default_rng(5).random(171) < 0.63).astype(np.int64)
    chain = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
             {"name": "privacy_budget", "epsilon": 10, "composition": "basic"}]
    result = attacks.run("auto", attacks.LocalOracle(y, defenses=chain, seed=100, accounts=4), budget=342)
    assert result.details["fallback"] == "budgeted"
    assert result.accuracy(y) >= max(y.mean(), 1 - y.mean())
