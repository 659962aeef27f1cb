"""Paper 001's Bregman attacks (bregman_powers, bregman_primes): exact recovery wherever the constructions'
certificates say so (random and adversarial labelings, K = 2, 6, 10), agreement with brute force on small
batches, the doubling trick, batches sized from the server's arithmetic, and loud failure otherwise."""

from __future__ import annotations

import doctest
import itertools
import math
from typing import Any

import numpy as np
import pytest

import attacks
import attacks.paper001.attacks
import attacks.paper001.losses
import attacks.paper001.squarefree
from attacks import AttackFailed, LocalOracle
from attacks.paper000.decoders import brute_force
from attacks.paper000.probes import ServerModel
from attacks.paper001.decode import decode_labelinf, decode_powers, decode_primes
from attacks.paper001.design import plan_batch
from attacks.paper001.losses import family_for
from attacks.paper001.squarefree import closest_free, closest_free_brute, free_exponents
from scoring.metrics import METRICS


def adversarial(n: int, k: int) -> list[np.ndarray]:
    """All one class (each extreme), alternating, a single odd row, and a staircase through the classes."""
    one = np.zeros(n, dtype=np.int64)
    one[n // 2] = k - 1
    return [np.zeros(n, dtype=np.int64), np.full(n, k - 1, dtype=np.int64), np.arange(n) % 2, one,
            np.arange(n) % k]


def labelings(n: int, k: int, seed: int, count: int = 2) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, k, n) for _ in range(count)] + adversarial(n, k)


class NoisyOracle:
    """A leaderboard adding uniform noise in ``[-tau, tau]`` (the bounded noise of paper 001's Figures 1–2) to
    the exact mean, then releasing it at ``decimals``. (The site's Laplace defense is exercised below.)"""

    def __init__(self, labels: Any, *, tau: float, decimals: int | None = 5, seed: int = 0, **kwargs: Any) -> None:
        self.inner = LocalOracle(labels, decimals=None, **kwargs)
        self.tau, self.decimals = tau, decimals
        self.rng = np.random.default_rng(seed)
        self.n_rows, self.n_classes = self.inner.n_rows, self.inner.n_classes
        self.metric, self.eps, self.arithmetic = self.inner.metric, self.inner.eps, self.inner.arithmetic
        self.queries = 0

    def submit(self, predictions: Any) -> float:
        self.queries += 1
        value = self.inner.submit(predictions)
        assert value is not None
        noisy = float(value) + self.rng.uniform(-self.tau, self.tau)
        return noisy if self.decimals is None else round(noisy, self.decimals)


def have(metric: str) -> bool:
    return metric.split(":")[0] in METRICS


BINARY_METRICS = ["binary_logloss", "brier", "kl", "itakura_saito", "norm_like", "norm_like:2.5"]
MULTICLASS_METRICS = ["multiclass_logloss", "brier", "kl", "itakura_saito", "norm_like"]


def test_doctests() -> None:
    for module in (attacks.paper001.attacks, attacks.paper001.losses, attacks.paper001.squarefree):
        assert doctest.testmod(module).failed == 0


# --- CloSqFree (Algorithm 1) -----------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 3, 5, 6])
@pytest.mark.parametrize("k", [2, 3])
def test_closest_free_is_the_nearest_member_brute_force(m: int, k: int) -> None:
    primes = (2, 3, 5, 7, 11, 13)[:m]
    top = math.prod(p ** (k - 1) for p in primes)
    rng = np.random.default_rng(m * 10 + k)
    members = [math.prod(p**e for p, e in zip(primes, es, strict=True))
               for es in itertools.product(range(k), repeat=m)]
    # the walk is short near a member (where a decoder looks); far from all of them only on small ranges
    near = [y + d for y in rng.choice(members, 20) for d in rng.uniform(-3, 3, 3)]
    anywhere = list(rng.uniform(-1, top + 3, 40)) if top <= 10_000 else []
    points = near + anywhere + [0.5, 1.5, 2.5, top - 0.5, float(top), top + 0.49]
    for x in points:
        assert closest_free(x, primes, k) == closest_free_brute(x, primes, k), x


def test_closest_free_takes_the_nearer_side_and_respects_the_radius() -> None:
    # Algorithm 1 as printed tries ⌊x⌋ first: at 5.9 it would answer 5, yet 6 = 2·3 is nearer.
    assert closest_free(5.9, (2, 3, 5)) == 6
    # 9 = 3² is not square-free: the nearest members of SqFree(4) to 9.2 are 10 (0.8) and 7 (2.2)
    assert closest_free(9.2, (2, 3, 5, 7)) == 10
    assert closest_free(9.2, (2, 3, 5, 7), radius=0.5) is None
    primes = attacks.exact.first_primes(30)
    product = math.prod(primes[::3])  # ≈ 2^61: the walk is short near a member however large
    assert closest_free(product + 0.3, primes) == product


def test_free_exponents_recognises_products_of_the_primes() -> None:
    primes = (2, 3, 5, 7)
    for exponents in itertools.product(range(3), repeat=4):
        n = math.prod(p**e for p, e in zip(primes, exponents, strict=True))
        assert free_exponents(n, primes, 3) == list(exponents)
        assert (free_exponents(n, primes, 2) is not None) == (max(exponents) < 2)
    assert free_exponents(11, primes) is None and free_exponents(0, primes) is None


# --- designing rows --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", ["kl", "itakura_saito", "brier", "norm_like:3"])
def test_binary_rows_reach_theorem_1s_offsets(metric: str) -> None:
    family = family_for(metric)
    for target in (1e-4, 0.01, 0.3, 0.9):
        theta = family.design_binary(target, 1e-15)
        assert theta is not None and 0 < theta <= 0.5
        assert family.binary_offset(theta) == pytest.approx(target, rel=1e-9)
    # bounded losses refuse what they cannot reach: Brier moves a row by at most 1
    assert family_for("brier").design_binary(1.5, 1e-15) is None
    assert family_for("itakura_saito").design_binary(1e12, 1e-15) is not None


@pytest.mark.parametrize("metric", ["kl", "itakura_saito", "brier", "norm_like:2.5"])
@pytest.mark.parametrize("k", [3, 6, 10])
def test_multiclass_rows_reach_their_offsets(metric: str, k: int) -> None:
    family = family_for(metric)
    targets = [0.01 * c for c in range(1, k)]  # bounded losses: Brier reaches 2·q_0, norm-like α·q_0^(α−1)
    row = family.design_row(targets, 1e-15)
    assert row is not None and sum(row) == pytest.approx(1.0, abs=1e-12) and min(row) >= 0
    phis = [family.phi(q) for q in row]
    assert [phis[c] - phis[0] for c in range(1, k)] == pytest.approx(targets, rel=1e-7, abs=1e-12)


def test_corollary_1s_closed_form_separates_itakura_saito() -> None:
    """Corollary 1: θ_i = (1 + 3^(2^i·N·τ))^-1 gives g(θ_i) − g(1 − θ_i) > 2^i·N·τ (in fact ≥ that times ln 3)."""
    family = family_for("itakura_saito")
    n, tau = 4, 0.01
    for i in range(1, 6):
        theta = 1 / (1 + 3 ** (2**i * n * tau))
        assert family.binary_offset(theta) > 2**i * n * tau * math.log(3)


# --- decoders against brute force ------------------------------------------------------------------------------


CASES = [("binary_logloss", 2, "powers", 6), ("brier", 2, "powers", 5), ("binary_logloss", 2, "primes", 4),
         ("brier", 2, "primes", 3), ("multiclass_logloss", 3, "powers", 3), ("brier", 3, "powers", 3),
         ("multiclass_logloss", 3, "primes", 2)]


@pytest.mark.parametrize(("metric", "k", "construction", "size"), CASES)
def test_decoders_agree_with_brute_force_on_every_labeling(metric: str, k: int, construction: str, size: int) -> None:
    n = size + 2
    model = ServerModel(n_rows=n, n_classes=k, eps=1e-15, decimals=5)
    plan = plan_batch(model, family_for(metric), size, construction)
    assert plan is not None
    probe = plan.probe.at(np.arange(size))
    decode = decode_powers if construction == "powers" else decode_primes
    for batch in itertools.product(range(k), repeat=size):
        truth = np.array([*batch, 1, 0], dtype=np.int64)
        released = LocalOracle(truth, metric=metric, n_classes=k, decimals=5).submit(probe.predictions())
        assert decode(plan, probe, released).tolist() == list(batch)
        assert decode_labelinf(plan, probe, released).tolist() == list(batch)
        assert brute_force(model, probe, released) == [batch]


# --- exact recovery --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", ["bregman_powers", "bregman_primes"])
@pytest.mark.parametrize("metric", BINARY_METRICS)
@pytest.mark.parametrize("decimals", [5, None])
def test_binary_labels_are_recovered_exactly(attack: str, metric: str, decimals: int | None) -> None:
    if not have(metric):
        pytest.skip(f"the scoring core has no {metric} yet")
    for labels in labelings(150, 2, seed=len(metric) + (decimals or 0)):
        oracle = LocalOracle(labels, metric=metric, decimals=decimals)
        result = attacks.run(attack, oracle)
        assert result.labels.tolist() == labels.tolist()
        assert result.details["verified"] == "passed"
        assert result.queries == math.ceil(150 / result.details["batch_size"]) + 1


@pytest.mark.parametrize("attack", ["bregman_powers", "bregman_primes"])
@pytest.mark.parametrize("metric", MULTICLASS_METRICS)
@pytest.mark.parametrize("k", [6, 10])
def test_multiclass_labels_are_recovered_exactly(attack: str, metric: str, k: int) -> None:
    if not have(metric):
        pytest.skip(f"the scoring core has no {metric} yet")
    # a bounded loss (Brier ≤ 2, norm-like ≤ α a row) cannot give a 10-class row's prime powers room at 5
    # decimals (test_refusals_name_their_reason): they are recovered from the full score
    decimals = None if metric.startswith(("brier", "norm_like")) and attack == "bregman_primes" else 5
    for labels in labelings(40, k, seed=k):
        oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=decimals)
        result = attacks.run(attack, oracle)
        assert result.labels.tolist() == labels.tolist()
        assert result.details["verified"] == "passed"


def test_one_query_carries_every_label_when_the_precision_allows() -> None:
    """Theorem 1 in one query (N ≤ the batch the server carries): Itakura–Saito's unbounded 1/θ carries 40."""
    labels = np.random.default_rng(3).integers(0, 2, 40)
    metric = "itakura_saito" if have("itakura_saito") else "binary_logloss"
    result = attacks.run("bregman_powers", LocalOracle(labels, metric=metric, decimals=None))
    assert result.labels.tolist() == labels.tolist() and result.queries == 2  # one query + the check


# --- finite precision (App. B.1): the batch comes from the server's arithmetic ---------------------------------


def test_the_batch_shrinks_with_the_released_precision_and_the_noise() -> None:
    def batch(decimals: int | None, tau: float = 0.0, construction: str = "powers") -> int:
        labels = np.zeros(2201, dtype=np.int64)
        oracle = LocalOracle(labels, decimals=decimals)
        name = f"bregman_{construction}"
        return int(attacks.run(name, oracle, tau=tau, budget=1, verify=False).details["batch_size"])

    assert batch(None) > batch(8) > batch(5) > batch(3)
    assert batch(5) > batch(5, tau=1e-3) > batch(5, tau=5e-3) >= 1  # N·τ must stay below ln((1−eps)/eps)/2
    assert batch(5, construction="primes") < batch(5)
    assert batch(5) == 11  # log loss at N = 2,201 and 5 decimals (the counting bound is 14)


def test_a_batch_the_server_cannot_carry_is_refused_before_any_query() -> None:
    oracle = LocalOracle(np.zeros(300, dtype=np.int64), decimals=5)
    carried = attacks.run("bregman_powers", oracle, budget=1, verify=False).details["batch_size"]
    fresh = LocalOracle(np.zeros(300, dtype=np.int64), decimals=5)
    with pytest.raises(AttackFailed, match="not separable"):
        attacks.run("bregman_powers", fresh, batch_size=carried + 1)
    assert fresh.queries == 0


def test_refusals_name_their_reason() -> None:
    with pytest.raises(AttackFailed, match="linearly-decomposable"):
        attacks.run("bregman_powers", LocalOracle([0, 1, 1], metric="auc"))
    with pytest.raises(AttackFailed, match="public-split"):
        attacks.run("bregman_powers", LocalOracle(np.arange(20) % 2, public_fraction=0.3))
    everything_public = LocalOracle(np.arange(20) % 2, public_fraction=1.0)
    assert attacks.run("bregman_powers", everything_public).labels.tolist() == (np.arange(20) % 2).tolist()
    with pytest.raises(AttackFailed, match="not separable"):  # Brier moves a 10-class row by at most 2
        attacks.run("bregman_primes", LocalOracle(np.arange(100) % 10, metric="brier", n_classes=10))
    with pytest.raises(AttackFailed, match="not separable"):  # noise beyond what one label moves
        attacks.run("bregman_powers", LocalOracle(np.arange(100) % 2, metric="brier"), tau=0.02)


# --- noise -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("attack", ["bregman_powers", "bregman_primes"])
@pytest.mark.parametrize("tau", [1e-4, 1e-2])
def test_bounded_noise_within_the_bound_is_decoded_exactly(attack: str, tau: float) -> None:
    for seed, labels in enumerate(labelings(120, 2, seed=7)):
        oracle = NoisyOracle(labels, tau=tau, seed=seed)
        result = attacks.run(attack, oracle, tau=tau)
        assert result.labels.tolist() == labels.tolist()


def test_multiclass_noise_within_the_bound_is_decoded_exactly() -> None:
    for seed, labels in enumerate(labelings(60, 6, seed=8)):
        oracle = NoisyOracle(labels, tau=1e-3, seed=seed, metric="multiclass_logloss", n_classes=6)
        assert attacks.run("bregman_powers", oracle, tau=1e-3).labels.tolist() == labels.tolist()


@pytest.mark.parametrize("attack", ["bregman_powers", "bregman_primes"])
def test_noise_beyond_the_bound_fails_loudly(attack: str) -> None:
    labels = np.random.default_rng(5).integers(0, 2, 200)
    oracle = NoisyOracle(labels, tau=0.05, seed=1)
    with pytest.raises(AttackFailed):
        attacks.run(attack, oracle, tau=1e-5)


def test_the_sites_laplace_noise_beyond_the_bound_fails_loudly() -> None:
    labels = np.random.default_rng(6).integers(0, 2, 200)
    oracle = LocalOracle(labels, decimals=5, defenses=[{"name": "noise", "kind": "laplace", "scale": 0.01}])
    with pytest.raises(AttackFailed):
        attacks.run("bregman_powers", oracle)


def test_laplace_noise_with_its_tail_bound_is_decoded() -> None:
    labels = np.random.default_rng(9).integers(0, 2, 200)
    oracle = LocalOracle(labels, decimals=5, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-4}])
    result = attacks.run("bregman_powers", oracle, noise="laplace", scale=1e-4, delta=1e-3)
    assert result.labels.tolist() == labels.tolist()


# --- the doubling trick (§7) -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("attack", "tau"), [("bregman_powers", 1e-4), ("bregman_powers", 3e-2),
                                             ("bregman_primes", 1e-4), ("bregman_primes", 1e-3)])
def test_the_doubling_trick_finds_an_unknown_noise_bound(attack: str, tau: float) -> None:
    labels = np.random.default_rng(11).integers(0, 2, 150)
    oracle = NoisyOracle(labels, tau=tau, seed=2)
    result = attacks.run(attack, oracle, doubling=True)
    assert result.labels.tolist() == labels.tolist()
    assert result.details["verified"] == "passed"
    found = result.details["tau_found"]
    assert found <= 4 * tau and result.details["doublings"] >= 1
    assert result.details["tau_history"] == [result.details["tau_history"][0] * 2**i for i in
                                             range(result.details["doublings"] + 1)]


def test_the_doubling_trick_fails_loudly_when_no_bound_is_separable() -> None:
    """At τ = 0.03 on N = 150 log-loss rows a prime's offset s·ln 2 must exceed 2·headroom·N·τ/ln(3/2) > 34.5,
    the most one clipped row can move: the doubling passes 0.03 and stops with the reason."""
    labels = np.random.default_rng(11).integers(0, 2, 150)
    with pytest.raises(AttackFailed, match="doubling trick reached"):
        attacks.run("bregman_primes", NoisyOracle(labels, tau=3e-2, seed=2), doubling=True)


def test_the_doubling_trick_on_multiclass_and_the_sites_noise() -> None:
    labels = np.random.default_rng(12).integers(0, 6, 80)
    oracle = LocalOracle(labels, metric="multiclass_logloss", n_classes=6, decimals=5,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-4}])
    result = attacks.run("bregman_powers", oracle, doubling=True)
    assert result.labels.tolist() == labels.tolist()
    assert result.details["tau_found"] >= 1e-4 / 4


# --- the server model's rounding bound for these losses ---------------------------------------------------------


@pytest.mark.parametrize("metric", ["kl", "itakura_saito", "brier", "norm_like", "norm_like:2.5"])
@pytest.mark.parametrize("k", [2, 6])
def test_the_servers_row_losses_stay_within_the_rounding_model(metric: str, k: int) -> None:
    """The site's float64 row losses (scoring.metrics) against the exact ones the attacks plan with: every
    difference within ``formula_row_error`` (attacks.server_model), including rows near the clipping."""
    from attacks.exact import local_precision
    from attacks.paper001.losses import exact_read
    from scoring.metrics import get_metric

    family = family_for(metric)
    model = ServerModel(n_rows=1, n_classes=k, eps=1e-15, decimals=None)
    rng = np.random.default_rng(k)
    scores = np.exp(rng.uniform(-34, 0, (200, k)))
    rows = scores / scores.sum(axis=1, keepdims=True)  # what the parser hands the metric
    predictions = rows[:, 1] if k == 2 else rows
    predictions = np.clip(predictions, 1e-15, 1 - 1e-15) if k == 2 else predictions
    row_values = get_metric(metric).row_values
    assert row_values is not None
    for label in range(k):
        served = row_values(predictions, np.full(len(rows), label), 1e-15)
        for i in range(len(rows)):
            values = [float(predictions[i])] if k == 2 else [float(v) for v in predictions[i]]
            with local_precision(model.work_bits):
                read = exact_read(values, model.work_bits)
                if k == 2:
                    read = [1 - read[0], read[0]]
                exact = family.row_losses(read, binary=k == 2)[label]
                bound = family.row_error(model, read, binary=k == 2)
                assert abs(exact - served[i]) <= bound, (metric, k, label, i)
