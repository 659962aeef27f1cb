"""The ``noisy`` attack: its decoders against brute force, and the attack against each noise defense."""

from __future__ import annotations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.noisy.attack import default_probes
from attacks.noisy.decoder import NoiseModel, amp, amp_signs, brute_force, refine, refine_signs, sign_gains
from attacks.noisy.design import SignDesign


def _channel(n: int, m: int, sigma: float, kind: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    w = rng.choice([-1.0, 1.0], size=(m, n)) * rng.uniform(0.5, 1.5, size=(m, n))
    noise = rng.laplace(0, sigma, m) if kind == "laplace" else rng.normal(0, sigma, m)
    return w, w @ y + noise, y


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("seed", range(6))
def test_refine_matches_brute_force_map_and_posterior(kind: str, seed: int) -> None:
    w, r, _ = _channel(8, 12, 0.3, kind, seed)
    model = NoiseModel(kind, 0.3)
    best, marginals = brute_force(w, r, model)
    labels, confidence = refine(w, r, model, best)  # the MAP is a fixed point of the flips
    assert np.array_equal(labels, best)
    # Started from the AMP guess, the flips reach the MAP on these small instances.
    start = (amp(w, r, 0.3 * (np.sqrt(2) if kind == "laplace" else 1)) > 0.5).astype(np.int64)
    refined, _ = refine(w, r, model, start)
    assert model.loglik(r - w @ refined).sum() >= model.loglik(r - w @ best).sum() - 1e-9 or np.array_equal(
        refined, best
    )
    # The conditional posterior of each MAP label bounds the exact marginal from above (conditioning on the
    # MAP of the others), and they agree where the rest is nearly certain.
    exact = np.where(best == 1, marginals, 1 - marginals)
    assert np.all(confidence >= exact - 1e-9) or np.allclose(confidence, exact, atol=0.2)


def test_amp_decodes_a_dense_design_with_fewer_queries_than_labels() -> None:
    rng = np.random.default_rng(0)
    n, m = 300, 210
    y = rng.integers(0, 2, n)
    w = rng.choice([-1.0, 1.0], size=(m, n))
    r = w @ y + rng.laplace(0, 0.3, m)
    assert np.array_equal((amp(w, r, 0.3 * np.sqrt(2)) > 0.5).astype(int), y)


def _sign_channel(n: int, m: int, sigma: float, kind: str, seed: int) -> tuple[SignDesign, np.ndarray]:
    """A design of ``m`` random-sign queries on ``n`` rows through the channel, as the attack stores it."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    design = SignDesign(n, 1e-15)
    for _ in range(m):
        signs = rng.integers(0, 2, n) * 2 - 1
        noise = rng.laplace(0, sigma) if kind == "laplace" else rng.normal(0, sigma)
        design.add(signs, 0.0)
        design.releases[-1] = design.offsets[-1] + design.unit * float(signs @ y) + noise
    return design, y


def test_sign_design_offsets_match_the_scored_loss() -> None:
    """The stored offset and weights reproduce binary log loss for the file they describe."""
    from scoring.metrics import binary_logloss_rows

    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 40)
    design = SignDesign(40, 1e-15)
    for _ in range(3):
        signs = rng.integers(0, 2, 40) * 2 - 1
        design.add(signs, float(binary_logloss_rows(design.predictions(signs), y, 1e-15).mean()))
    assert np.allclose(design.observed(), design.unit * design.matvec(y.astype(float)), atol=1e-12)


@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
@pytest.mark.parametrize("seed", range(4))
def test_sign_refinement_matches_brute_force_and_the_dense_refinement(kind: str, seed: int) -> None:
    design, _ = _sign_channel(8, 10, 0.3 * 34.54 / 8, kind, seed)
    w, r = design.dense(), design.observed()
    model = NoiseModel(kind, 0.3 * design.unit)
    best, _ = brute_force(w, r, model, prior=0.4)
    labels, confidence = refine_signs(design, r, model, best, prior=0.4)
    assert np.array_equal(labels, best)  # the MAP is a fixed point
    _, dense_confidence = refine(w, r, model, best, prior=0.4)
    assert np.allclose(confidence, dense_confidence, atol=1e-9)
    # Every single flip's gain equals the change of the log-posterior computed directly.
    gains = sign_gains(design, r - w @ best, model, best, 0.4)
    for i in range(8):
        flipped = best.copy()
        flipped[i] ^= 1
        direct = (model.loglik(r - w @ flipped).sum() - model.loglik(r - w @ best).sum()
                  + (flipped.sum() - best.sum()) * np.log(0.4 / 0.6))
        assert gains[i] == pytest.approx(direct, rel=1e-6)  # float32 products


def test_amp_on_stored_signs_equals_the_dense_amp() -> None:
    design, y = _sign_channel(300, 210, 0.05, "laplace", 1)
    dense = amp(design.dense(), design.observed(), 0.05 * np.sqrt(2), prior=0.5)
    blocked = amp_signs(design, design.observed(), 0.05 * np.sqrt(2), prior=0.5)
    assert np.allclose(dense, blocked, atol=1e-4)
    assert np.array_equal((blocked > 0.5).astype(int), y)


def test_default_probes_shrink_on_small_boards() -> None:
    assert default_probes(171) == 17 and default_probes(60) == 12 and default_probes(25_000) == 24


CHAINS = {
    "laplace_1e-3": [{"name": "noise", "kind": "laplace", "scale": 1e-3}],
    "laplace_1e-2": [{"name": "noise", "kind": "laplace", "scale": 1e-2}],
    "gaussian_1e-2": [{"name": "noise", "kind": "gaussian", "scale": 1e-2}],
    "multiplicative_1e-3": [{"name": "noise", "kind": "multiplicative", "alpha": 1e-3}],
    "rounding_only": [],
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_noisy_attack_recovers_every_label_against_its_defense(chain: str) -> None:
    y = (np.random.default_rng(7).random(60) < 0.4).astype(int)
    oracle = LocalOracle(y, decimals=5, defenses=CHAINS[chain], same_file_same_score=True, seed=11)
    result = attacks.run("noisy", oracle)
    assert result.accuracy(y) == 1.0
    assert result.details["complete"]
    assert result.details["confidence"].min() > 0.99
    assert result.queries == oracle.queries
    assert result.details["bound_queries"] < result.queries  # never claims to beat the information bound


def test_noisy_identifies_the_noise_kind() -> None:
    y = (np.random.default_rng(3).random(50) < 0.5).astype(int)
    for chain, kind in [("laplace_1e-2", "laplace"), ("gaussian_1e-2", "gaussian"),
                        ("multiplicative_1e-3", "multiplicative")]:
        oracle = LocalOracle(y, decimals=5, defenses=CHAINS[chain], seed=2)
        assert attacks.run("noisy", oracle, probes=60).details["noise"]["kind"] == kind


def test_noisy_respects_the_budget_and_refuses_other_metrics() -> None:
    y = np.random.default_rng(1).integers(0, 2, 80)
    oracle = LocalOracle(y, decimals=5, defenses=CHAINS["laplace_1e-2"])
    for groups in ("auto", "never"):  # 80 rows in 30 queries: the group design (~4 rows a query) can, AMP cannot
        result = attacks.run("noisy", LocalOracle(y, decimals=5, defenses=CHAINS["laplace_1e-2"]), budget=30,
                             groups=groups)
        assert result.queries <= 30
        assert result.details["complete"] == (groups == "auto")
    result = attacks.run("noisy", oracle, budget=16)
    assert result.queries <= 16 and not result.details["complete"]
    with pytest.raises(AttackFailed):
        attacks.run("noisy", LocalOracle([0, 1, 2, 1], metric="multiclass_logloss"))


def test_group_design_where_a_row_towers_over_the_noise_and_signs_elsewhere() -> None:
    """Laplace 1e-3 on 60 rows (one row weighs 0.57, 400 noise stds) goes to binary-weighted groups, with fewer
    submissions than the random-sign design needs on the same board; both recover every label."""
    y = (np.random.default_rng(4).random(60) < 0.4).astype(int)
    chain = CHAINS["laplace_1e-3"]
    grouped = attacks.run("noisy", LocalOracle(y, decimals=5, defenses=chain, same_file_same_score=True, seed=3))
    signs = attacks.run("noisy", LocalOracle(y, decimals=5, defenses=chain, same_file_same_score=True, seed=3),
                        groups="never")
    assert grouped.details["design"] == "groups" and signs.details["design"] == "signs"
    assert grouped.accuracy(y) == 1.0 and signs.accuracy(y) == 1.0
    assert grouped.queries < signs.queries


def test_group_design_gives_way_when_the_noise_is_not_what_the_probes_showed() -> None:
    """Probes that suggest a tiny noise (here: forced by too few of them on a Laplace board read as rounding)
    must not leave wrong labels behind: the residuals abandon the groups or the labels stay right."""
    y = (np.random.default_rng(9).random(60) < 0.4).astype(int)
    oracle = LocalOracle(y, decimals=5, defenses=CHAINS["laplace_1e-2"], same_file_same_score=True, seed=5)
    result = attacks.run("noisy", oracle, groups="always")
    assert result.accuracy(y) == 1.0 or not result.details["complete"]
