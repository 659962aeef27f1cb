"""The capacity attack: exact recovery of every labeling, decoder vs brute force, labels per query against
the counting bound, loud failure under unmodelled noise, and the split-aware variant."""

from __future__ import annotations

import itertools
import math
from collections import deque

import numpy as np
import pytest

import attacks
import defenses
from attacks import AttackFailed, LocalOracle
from attacks.capacity import capacity_attack, capacity_split_attack
from attacks.capacity.attack import plan_query, submit_query
from attacks.capacity.decoder import Group, brute_force, predictions, query_labelings
from attacks.capacity.design import (
    COUNT_REALIZATIONS,
    FRESH_GROUPS,
    ServerModel,
    check_count_realizations,
    conway_guy_per_query,
    conway_guy_set,
    count_of,
    counting_bound,
    powers_of_two_per_query,
    realize,
)
from attacks.capacity.state import CapacityState

PRECISIONS = [5, 8, None]


def adversarial(n: int) -> dict[str, np.ndarray]:
    one = np.zeros(n, dtype=np.int64)
    one[n // 3] = 1
    return {
        "zeros": np.zeros(n, dtype=np.int64),
        "ones": np.ones(n, dtype=np.int64),
        "alternating": np.arange(n, dtype=np.int64) % 2,
        "one_positive": one,
    }


def test_registered() -> None:
    assert {"capacity", "capacity_split"} <= set(attacks.available())


def test_counting_bound_matches_field_notes() -> None:
    assert [counting_bound(n, 5) for n in (306, 569, 2201, 25000)] == [17, 16, 14, 10]
    assert [counting_bound(n, 8) for n in (306, 569, 2201, 25000)] == [28, 27, 25, 21]
    assert [counting_bound(n, None) for n in (306, 569, 2201, 25000)] == [43] * 4
    # "Scaled powers of two reach ... at N = 25,000: 8, 18 and 39"; Conway–Guy gains about one label.
    assert [powers_of_two_per_query(25000, d) for d in (5, 8, None)] == [8, 18, 39]
    assert conway_guy_per_query(306, 5) == powers_of_two_per_query(306, 5) + 1


def test_conway_guy_sets_have_distinct_subset_sums() -> None:
    for n in range(1, 11):
        values = conway_guy_set(n)
        sums = {sum(c) for r in range(n + 1) for c in itertools.combinations(values, r)}
        assert len(sums) == 2**n


def test_realization_tables() -> None:
    check_count_realizations()
    for span, fresh_weights in FRESH_GROUPS.items():
        assert sum(fresh_weights) + 1 == span
    for k, c in COUNT_REALIZATIONS:
        group = Group.fresh(list(range(k)))
        patterns = group.patterns[group.patterns.sum(axis=1) == c]
        assert count_of(patterns) == c
        weights = realize(patterns, 10**6)
        assert weights is not None and (weights >= 0).all()


@pytest.mark.parametrize("decimals", PRECISIONS)
@pytest.mark.parametrize("n", [30, 306, 569, 2201])
def test_recovers_random_and_adversarial_labelings(n: int, decimals: int | None) -> None:
    cases = {"random": np.random.default_rng(n).integers(0, 2, n), **adversarial(n)}
    for name, labels in cases.items():
        oracle = LocalOracle(labels, decimals=decimals)
        result = attacks.run("capacity", oracle)
        assert np.array_equal(result.labels, labels), name
        assert result.queries == oracle.queries
        assert result.details["design_queries"] <= math.ceil(n / 4) + 2


def test_recovers_imdb_sized_balanced_vector() -> None:
    rng = np.random.default_rng(25000)
    labels = rng.permutation(np.repeat([0, 1], 12500))
    oracle = LocalOracle(labels, decimals=5)
    result = attacks.run("capacity", oracle)
    assert np.array_equal(result.labels, labels)
    assert result.details["labels_per_query"] >= 0.9 * counting_bound(25000, 5)


def test_every_labeling_of_ten_rows() -> None:
    for bits in itertools.product((0, 1), repeat=10):
        labels = np.array(bits)
        result = capacity_attack(LocalOracle(labels, decimals=5), check=False)
        assert np.array_equal(result.labels, labels)


@pytest.mark.parametrize("decimals", PRECISIONS)
def test_decoder_agrees_with_brute_force(decimals: int | None) -> None:
    """Each query's candidate set contains every batch labeling the server would score the same (brute
    force over the batch, scored bit-for-bit as the server does), and with rounding they coincide."""
    rng = np.random.default_rng(7)
    n = 16
    for trial in range(6):
        labels = rng.integers(0, 2, n)
        oracle = LocalOracle(labels, decimals=decimals)
        model = ServerModel.build(n, oracle.eps, decimals, batch_weight=10.0)
        state = CapacityState(labels=np.full(n, -1, dtype=np.int64), fresh=deque(rng.permutation(n).tolist()))
        while state.fresh or state.carried:
            query = plan_query(state, model, top=4, max_rows=14)
            t_values, _ = submit_query(oracle, query, model)
            masks = query.decode(t_values)
            rows, ks = query.row_weights()
            pred = predictions(n, rows, ks, model.unit)
            released = oracle.submit(pred)  # the same deterministic score again
            assert released is not None
            _, prior = query_labelings(query)
            _, decoded = query_labelings(query, masks)
            brute = set(brute_force(n, rows, pred, float(released), oracle.eps, decimals, sorted(prior)))
            assert tuple(int(labels[r]) for r in rows) in brute, trial
            assert brute <= decoded, trial
            if decimals is not None:
                assert brute == decoded, trial
            for d, m in zip(query.digits, masks, strict=True):
                state.absorb(d.group, m)
        assert np.array_equal(state.labels, labels)


def _design_rate(n: int, decimals: int | None, seeds: int) -> float:
    rates = []
    for seed in range(seeds):
        labels = np.random.default_rng(seed).integers(0, 2, n)
        result = capacity_attack(LocalOracle(labels, decimals=decimals), check=False)
        assert np.array_equal(result.labels, labels)
        rates.append(n / result.details["design_queries"])
    return float(np.mean(rates))


@pytest.mark.parametrize(
    ("n", "decimals"),
    [(306, 5), (569, 5), (2201, 5), (306, 8), (569, 8), (2201, 8), (306, None), (569, None), (2201, None)],
)
def test_labels_per_query_reach_ninety_percent_of_the_counting_bound(n: int, decimals: int | None) -> None:
    """A measured property of the design: mean labels per (design) query on seeded random labelings."""
    rate = _design_rate(n, decimals, seeds=6 if n < 2000 else 3)
    assert rate >= 0.9 * counting_bound(n, decimals) - 1e-9
    assert rate > conway_guy_per_query(n, decimals)


def test_beats_the_classic_designs_at_every_precision() -> None:
    for decimals in PRECISIONS:
        rate = _design_rate(569, decimals, seeds=2)
        assert rate >= conway_guy_per_query(569, decimals) + 0.5
        assert rate >= powers_of_two_per_query(569, decimals) + 1.5


def _need_noise() -> None:
    if "noise" not in defenses.available():
        pytest.skip("the 'noise' defense is not registered yet (defenses.available())")


def test_known_noise_bound_is_tolerated() -> None:
    _need_noise()
    labels = np.random.default_rng(3).integers(0, 2, 306)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-7}]
    oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=5)
    result = capacity_attack(oracle, noise_bound=4e-6)  # 40 Laplace scales: P(exceeded) ~ 1e-15 per query
    assert np.array_equal(result.labels, labels)


def test_fails_loudly_when_noise_exceeds_the_assumed_bound() -> None:
    _need_noise()
    labels = np.random.default_rng(4).integers(0, 2, 306)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    oracle = LocalOracle(labels, decimals=5, defenses=chain, seed=5)
    with pytest.raises(AttackFailed):
        capacity_attack(oracle, noise_bound=1e-6)


def test_fails_loudly_on_a_public_split_oracle() -> None:
    oracle = LocalOracle(np.zeros(50, dtype=np.int64), decimals=5, public_fraction=0.3)
    with pytest.raises(AttackFailed, match="capacity_split"):
        capacity_attack(oracle)


def test_rejects_other_metrics() -> None:
    with pytest.raises(AttackFailed, match="log-loss board"):
        capacity_attack(LocalOracle(np.array([0, 1, 1, 0]), metric="accuracy", decimals=5))


@pytest.mark.parametrize(("n", "decimals", "fraction"), [(306, 5, 0.3), (569, 8, 0.25), (200, None, 0.5)])
def test_split_variant_recovers_public_labels_and_mask(n: int, decimals: int | None, fraction: float) -> None:
    labels = np.random.default_rng(n).integers(0, 2, n)
    oracle = LocalOracle(labels, decimals=decimals, public_fraction=fraction, seed=17)
    result = attacks.run("capacity_split", oracle)
    mask = oracle.spec.hidden.public_mask
    assert np.array_equal(result.details["public_mask"], mask)
    assert np.array_equal(result.labels[mask], labels[mask])
    assert (result.labels[~mask] == -1).all()


def test_split_variant_on_adversarial_labels() -> None:
    for name, labels in adversarial(120).items():
        oracle = LocalOracle(labels, decimals=5, public_fraction=0.3, seed=2)
        result = capacity_split_attack(oracle)
        mask = oracle.spec.hidden.public_mask
        assert np.array_equal(result.details["public_mask"], mask), name
        assert np.array_equal(result.labels, np.where(mask, labels, -1)), name


def _split_entropy_bits(n: int, n_public: int) -> float:
    """``log2`` of the number of (mask, public labels) the attacker must tell apart: ``C(n, n_pub)·2^n_pub``."""
    return (math.lgamma(n + 1) - math.lgamma(n_public + 1) - math.lgamma(n - n_public + 1)) / math.log(2) + n_public


def test_split_variant_query_count_is_near_the_information_bound() -> None:
    """The three-state design carries about ``log2(A / window)`` bits per query (random weights up to ``A``
    spread the sum over ``A`` in window units), so the queries stay within 15 % of ``bits / log2(A/window)``
    — and at least 1.4× below the mirrored pairs' ``2·N / (log2 W' + 2.5)`` (``W'`` at the doubled window)."""
    n = 2201
    labels = np.random.default_rng(n).integers(0, 2, n)
    oracle = LocalOracle(labels, decimals=5, public_fraction=0.3, seed=17)
    result = capacity_split_attack(oracle, check=False)
    mask = oracle.spec.hidden.public_mask
    assert np.array_equal(result.labels, np.where(mask, labels, -1))
    n_pub = int(mask.sum())
    a = math.log((1 - oracle.eps) / oracle.eps)
    per_query = math.log2(a / result.details["window"])
    assert result.details["design_queries"] <= 1.15 * _split_entropy_bits(n, n_pub) / per_query
    pair_model = ServerModel.build(n, oracle.eps, 5, n_scored=n_pub, releases=2, batch_weight=22.0)
    mirrored = 2 * n / (math.log2(min(pair_model.cap, a / pair_model.unit)) + 2.5)
    assert result.queries * 1.4 <= mirrored


@pytest.mark.parametrize(("n", "decimals", "fraction"), [(306, 5, 0.3), (200, 8, 0.5), (90, 5, 0.1)])
def test_split_variant_on_adversarial_labels_at_scale(n: int, decimals: int, fraction: float) -> None:
    for name, labels in adversarial(n).items():
        oracle = LocalOracle(labels, decimals=decimals, public_fraction=fraction, seed=3)
        result = attacks.run("capacity_split", oracle)
        mask = oracle.spec.hidden.public_mask
        assert np.array_equal(result.details["public_mask"], mask), name
        assert np.array_equal(result.labels, np.where(mask, labels, -1)), name


def test_split_variant_every_labeling_of_six_rows() -> None:
    for seed in range(3):
        for bits in itertools.product((0, 1), repeat=6):
            labels = np.array(bits)
            oracle = LocalOracle(labels, decimals=5, public_fraction=0.5, seed=seed)
            result = capacity_split_attack(oracle)
            mask = oracle.spec.hidden.public_mask
            assert np.array_equal(result.details["public_mask"], mask)
            assert np.array_equal(result.labels, np.where(mask, labels, -1))


def test_split_variant_tolerates_a_known_noise_bound_and_fails_loudly_beyond_it() -> None:
    _need_noise()
    labels = np.random.default_rng(5).integers(0, 2, 306)
    quiet = LocalOracle(
        labels, decimals=5, public_fraction=0.3, seed=4, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-7}]
    )
    result = capacity_split_attack(quiet, noise_bound=4e-6)
    mask = quiet.spec.hidden.public_mask
    assert np.array_equal(result.labels, np.where(mask, labels, -1))
    loud = LocalOracle(
        labels, decimals=5, public_fraction=0.3, seed=4, defenses=[{"name": "noise", "kind": "laplace", "scale": 1e-3}]
    )
    with pytest.raises(AttackFailed):
        capacity_split_attack(loud, noise_bound=1e-6)
