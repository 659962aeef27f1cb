"""Paper 001's cross-entropy attacks: ``ce_robust`` (Theorem 3) and ``softmax_ce`` / ``sigmoid_ce`` on logit
boards (§4, App. D, through the inverse activation). Exact recovery at K = 2, 6, 10 on random and adversarial
labelings, the decoders against brute force on every labeling of small batches, Theorem 3's rows as the
theorem writes them, noise within the bound decoded, the doubling trick, and loud failures."""

from __future__ import annotations

import doctest
import itertools
import math
from functools import partial

import numpy as np
import pytest

import attacks
import attacks.paper001.activations
import attacks.paper001.cross_entropy
from attacks import AttackFailed, LocalOracle
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.paper000.decoders import brute_force
from attacks.paper000.probes import ServerModel
from attacks.paper001.activations import CROSS_ENTROPY, plan_logits, to_logits
from attacks.paper001.decode import decode_labelinf, decode_powers, decode_primes
from attacks.paper001.design import plan_batch
from tests.attacks.test_paper001 import NoisyOracle, labelings


def test_doctests() -> None:
    for module in (attacks.paper001.cross_entropy, attacks.paper001.activations):
        assert doctest.testmod(module).failed == 0


# --- Theorem 3's rows ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 6])
def test_theorem3_rows_are_the_theorems_weights(k: int) -> None:
    """Row i, class j of a Theorem 3 plan: ``ln θ_{i,j} − ln θ_{i,0} = −c·(2^(iK+K) − 2^(iK+K−j))`` with
    ``c = s/2`` (class 0 carries the exponent iK+K), i.e. θ ∝ ϑ with ``ln ϑ_{i,j} = c·2^(iK+K−j)``."""
    model = ServerModel(n_rows=40, n_classes=k, eps=1e-15, decimals=5)
    size = 3 if k == 2 else 1
    plan = plan_batch(model, CROSS_ENTROPY, size, "theorem3")
    assert plan is not None
    c = plan.spacing / 2
    for i, cell in enumerate(plan.probe.cells):
        q = [1 - cell, cell] if k == 2 else list(cell)
        for j in range(1, k):
            expected = -c * (2.0 ** (i * k + k) - 2.0 ** (i * k + k - j))
            assert math.log(q[j]) - math.log(q[0]) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert float(plan.gap) == pytest.approx(2 * c, rel=1e-6)  # the proof's 2τ·ln 3, with c = N·τ·ln 3


@pytest.mark.parametrize("k", [2, 3])
def test_theorem3_with_the_papers_constant_separates_by_2tau(k: int) -> None:
    """The theorem itself, exactly: ``ϑ_{n,k} = 3^(2^((n−1)K+k)·N·τ)`` gives every two labelings' mean
    cross-entropies ≥ 2τ apart (brute force over all K^N labelings, MPFR)."""
    n, tau = 3, 0.01
    with local_precision(400):
        log_theta = []
        for row in range(1, n + 1):
            log_v = [mpfr(2) ** ((row - 1) * k + j) * n * mpfr(tau) * gmpy2.log(3) for j in range(1, k + 1)]
            log_sum = gmpy2.log(sum((gmpy2.exp(v) for v in log_v), mpfr(0)))
            log_theta.append([v - log_sum for v in log_v])
        scores = sorted(-sum(log_theta[r][c] for r, c in enumerate(sigma)) / n
                        for sigma in itertools.product(range(k), repeat=n))
        assert min(b - a for a, b in itertools.pairwise(scores)) >= 2 * tau


def test_theorem3_carries_fewer_labels_than_construction_1() -> None:
    """§6: Theorem 3's exponents grow as 2^(NK) where Aggarwal et al. 2021's grow as 2^N — in float64 at
    N = 2,201 and 5 decimals, 6 binary labels a query against Construction 1's 11."""
    from attacks.planning import largest_feasible

    model = ServerModel(n_rows=2201, n_classes=2, eps=1e-15, decimals=5)
    def carries(construction: str, m: int) -> bool:
        return plan_batch(model, CROSS_ENTROPY, m, construction) is not None

    sizes = [largest_feasible(62, partial(carries, c)) for c in ("theorem3", "powers")]
    assert sizes == [6, 11]


# --- decoders against brute force ------------------------------------------------------------------------------


CASES = [("binary_logloss", 2, "theorem3", None, 5), ("multiclass_logloss", 3, "theorem3", None, 2),
         ("softmax_ce", 3, "theorem3", "softmax_ce", 2), ("sigmoid_ce", 2, "theorem3", "sigmoid_ce", 5),
         ("sigmoid_ce", 2, "powers", "sigmoid_ce", 6), ("softmax_ce", 4, "powers", "softmax_ce", 2),
         ("softmax_ce", 3, "primes", "softmax_ce", 2)]


@pytest.mark.parametrize(("metric", "k", "construction", "logits", "size"), CASES)
def test_decoders_agree_with_brute_force_on_every_labeling(
    metric: str, k: int, construction: str, logits: str | None, size: int
) -> None:
    n = size + 2
    model = ServerModel(n_rows=n, n_classes=k, eps=1e-15, decimals=5)
    if logits is None:
        plan = plan_batch(model, CROSS_ENTROPY, size, construction)
    else:
        plan = plan_logits(model, logits, size, construction)
    assert plan is not None
    probe = plan.probe.at(np.arange(size))
    decode = decode_primes if construction == "primes" else decode_powers
    for batch in itertools.product(range(k), repeat=size):
        truth = np.array([*batch, 1, 0], dtype=np.int64)
        released = LocalOracle(truth, metric=metric, n_classes=k, decimals=5).submit(probe.predictions())
        assert decode(plan, probe, released).tolist() == list(batch)
        assert decode_labelinf(plan, probe, released).tolist() == list(batch)
        assert brute_force(model, probe, released) == [batch]


def test_the_logit_rows_are_the_inverse_activation_of_the_probability_rows() -> None:
    from scoring.metrics import get_metric

    model = ServerModel(n_rows=30, n_classes=6, eps=1e-15, decimals=5)
    base = plan_batch(model, CROSS_ENTROPY, 3, "powers")
    plan = plan_logits(model, "softmax_ce", 3, "powers")
    assert base is not None and plan is not None
    logits = np.asarray(plan.probe.cells)
    assert logits.max() <= 0 and logits.min() < -1  # logits, not probabilities
    probabilities = get_metric("softmax_ce").as_probabilities(logits)
    assert np.allclose(probabilities, np.asarray(base.probe.cells), rtol=1e-12, atol=1e-18)
    assert to_logits(0.5) == 0.0 and to_logits(0.75) == pytest.approx(math.log(3))


# --- exact recovery --------------------------------------------------------------------------------------------


RECOVERY = [("ce_robust", "binary_logloss", 2, 60), ("ce_robust", "multiclass_logloss", 6, 24),
            ("ce_robust", "kl", 10, 16), ("ce_robust", "softmax_ce", 10, 16), ("ce_robust", "sigmoid_ce", 2, 60),
            ("softmax_ce", "softmax_ce", 2, 80), ("softmax_ce", "softmax_ce", 6, 40),
            ("softmax_ce", "softmax_ce", 10, 40), ("sigmoid_ce", "sigmoid_ce", 2, 80)]


@pytest.mark.parametrize(("attack", "metric", "k", "n"), RECOVERY)
def test_labels_are_recovered_exactly(attack: str, metric: str, k: int, n: int) -> None:
    for labels in labelings(n, k, seed=k + n):
        oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5)
        result = attacks.run(attack, oracle)
        assert result.labels.tolist() == labels.tolist()
        assert result.details["verified"] == "passed"
        assert result.queries == math.ceil(n / result.details["batch_size"]) + 1


def test_every_digit_released_carries_more_labels_a_query() -> None:
    labels = np.random.default_rng(4).integers(0, 10, 30)
    full = attacks.run("softmax_ce", LocalOracle(labels, metric="softmax_ce", n_classes=10, decimals=None))
    rounded = attacks.run("softmax_ce", LocalOracle(labels, metric="softmax_ce", n_classes=10, decimals=5))
    assert full.labels.tolist() == rounded.labels.tolist() == labels.tolist()
    assert full.details["batch_size"] > rounded.details["batch_size"]


# --- noise -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("attack", "metric", "k", "tau"), [("ce_robust", "binary_logloss", 2, 1e-3),
                                                            ("ce_robust", "multiclass_logloss", 6, 1e-4),
                                                            ("softmax_ce", "softmax_ce", 10, 1e-4),
                                                            ("sigmoid_ce", "sigmoid_ce", 2, 1e-2)])
def test_bounded_noise_within_the_bound_is_decoded_exactly(attack: str, metric: str, k: int, tau: float) -> None:
    for seed, labels in enumerate(labelings(30, k, seed=31)):
        oracle = NoisyOracle(labels, tau=tau, seed=seed, metric=metric, n_classes=k)
        assert attacks.run(attack, oracle, tau=tau).labels.tolist() == labels.tolist()


@pytest.mark.parametrize(("attack", "metric", "k"), [("ce_robust", "multiclass_logloss", 6),
                                                     ("softmax_ce", "softmax_ce", 10), ("sigmoid_ce", "sigmoid_ce", 2)])
def test_the_doubling_trick_finds_an_unknown_noise_bound(attack: str, metric: str, k: int) -> None:
    labels = np.random.default_rng(13).integers(0, k, 40)
    tau = 1e-4
    result = attacks.run(attack, NoisyOracle(labels, tau=tau, seed=3, metric=metric, n_classes=k), doubling=True)
    assert result.labels.tolist() == labels.tolist() and result.details["verified"] == "passed"
    assert result.details["doublings"] >= 1 and result.details["tau_found"] <= 8 * tau


def test_the_sites_laplace_noise_with_its_tail_bound_is_decoded() -> None:
    labels = np.random.default_rng(14).integers(0, 10, 30)
    oracle = LocalOracle(labels, metric="softmax_ce", n_classes=10, decimals=5,
                         defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-5}])
    result = attacks.run("softmax_ce", oracle, noise="laplace", scale=1e-5, delta=1e-3)
    assert result.labels.tolist() == labels.tolist()


@pytest.mark.parametrize(("attack", "metric", "k"), [("ce_robust", "multiclass_logloss", 6),
                                                     ("softmax_ce", "softmax_ce", 6), ("sigmoid_ce", "sigmoid_ce", 2)])
def test_noise_beyond_the_bound_fails_loudly(attack: str, metric: str, k: int) -> None:
    labels = np.random.default_rng(15).integers(0, k, 40)
    with pytest.raises(AttackFailed):
        attacks.run(attack, NoisyOracle(labels, tau=0.05, seed=1, metric=metric, n_classes=k), tau=1e-5)


def test_refusals_name_their_reason() -> None:
    with pytest.raises(AttackFailed, match="Theorem 3 is about the cross-entropy"):
        attacks.run("ce_robust", LocalOracle([0, 1, 1], metric="brier"))
    with pytest.raises(AttackFailed, match="plays sigmoid_ce boards"):
        attacks.run("sigmoid_ce", LocalOracle([0, 1, 2], metric="softmax_ce", n_classes=3))
    with pytest.raises(AttackFailed, match="plays softmax_ce boards"):
        attacks.run("softmax_ce", LocalOracle([0, 1, 1], metric="sigmoid_ce"))
    with pytest.raises(AttackFailed, match="logit attacks play"):
        attacks.run("softmax_ce", LocalOracle([0, 1, 1], metric="binary_logloss"))
    with pytest.raises(AttackFailed, match="public-split"):
        attacks.run("softmax_ce", LocalOracle(np.arange(20) % 3, metric="softmax_ce", n_classes=3,
                                              public_fraction=0.3))
    fresh = LocalOracle(np.arange(100) % 10, metric="softmax_ce", n_classes=10, decimals=5)
    with pytest.raises(AttackFailed, match="not separable"):  # N·τ beyond what one row can move
        attacks.run("ce_robust", fresh, tau=0.2)
    assert fresh.queries == 0
    with pytest.raises(ValueError, match="unknown construction"):
        attacks.run("softmax_ce", LocalOracle([0, 1], metric="softmax_ce"), construction="squares")
