"""The capacity attacks on multiclass log-loss boards (issue 11): the K-ary construction recovers every label
(random and adversarial labelings, K = 2, 3, 6, 10), its one-query decoder agrees with brute force through
the scoring core, it reaches 90 % of the K-ary counting bound ``K^m <= m·M + 1`` at 5 decimals, the split-aware
variant recovers the public mask and labels with the public count measured, every refusal is an
``AttackFailed`` with a reason, and ``auto`` plays them on multiclass boards (with the default 30 % split)."""

from __future__ import annotations

from collections import deque
from itertools import product

import numpy as np
import pytest

import attacks.paper000.attacks as paper000
from attacks import AttackFailed, LocalOracle, run
from attacks.capacity import capacity_attack, capacity_split_attack, counting_bound
from attacks.capacity.kary import build_model, kary_predictions, kary_window, plan_query_k
from attacks.capacity.public_count import estimate_public_count
from scoring.metrics import get_metric
from scoring.pipeline import release_text


def board(labels: np.ndarray, k: int, **options: object) -> LocalOracle:
    return LocalOracle(labels, metric="multiclass_logloss", n_classes=k, **options)  # type: ignore[arg-type]


def labelings(n: int, k: int, seed: int) -> list[np.ndarray]:
    """Random, constant (every class), sorted and cyclic labelings: the adversarial cases of a lattice design
    (equal labels make every weight's extreme sum; a cycle repeats one pattern in every digit)."""
    rng = np.random.default_rng(seed)
    out = [rng.integers(0, k, n), np.sort(rng.integers(0, k, n)), np.arange(n) % k, (np.arange(n) // 3) % k]
    out += [np.full(n, c) for c in (0, k - 1)]
    return out


@pytest.mark.parametrize("k", [2, 3, 6, 10])
@pytest.mark.parametrize("decimals", [5, None])
def test_recovers_random_and_adversarial_labelings(k: int, decimals: int | None) -> None:
    for labels in labelings(157, k, seed=k):
        result = capacity_attack(board(labels, k, decimals=decimals))
        assert result.labels.tolist() == labels.tolist()
        assert result.details["classes"] == k


def test_every_labeling_of_five_rows_in_three_classes() -> None:
    for labels in product(range(3), repeat=5):
        result = capacity_attack(board(np.array(labels), 3, decimals=5), check=False)
        assert tuple(result.labels.tolist()) == labels


def test_decoder_keeps_every_labeling_brute_force_finds_consistent() -> None:
    """One K-ary query on 6 rows of a 40-row board: the scoring core, run on every one of the 3^6 labelings of
    the batch rows, releases the observed score only for labelings the decoder keeps (the decoder is sound),
    and the decoder keeps no labeling whose release differs by more than its window (it is also tight)."""
    n, k, decimals = 40, 3, 5
    model = build_model(n, k, 1e-15, decimals)
    metric = get_metric("multiclass_logloss")
    rng = np.random.default_rng(6)
    for _ in range(4):
        fresh = deque(range(6))
        query = plan_query_k(fresh, deque(), model, k, max_rows=6)
        rows, ks = query.row_weights()
        pred = kary_predictions(n, k, rows, ks, model.unit)
        truth = rng.integers(0, k, n)
        released, _ = release_text(metric.score(pred, truth, 1e-15), decimals)
        masks = query.decode(kary_window(float(released), model, pred[rows], ks, n - len(rows)))
        kept: set[tuple[int, ...]] = set()
        for choice in product(*[np.flatnonzero(m) for m in masks]):
            chosen: dict[int, int] = {}
            for digit, index in zip(query.digits, choice, strict=True):
                chosen.update(zip(digit.group.rows.tolist(), digit.group.patterns[index].tolist(), strict=True))
            kept.add(tuple(chosen[r] for r in range(6)))
        consistent: set[tuple[int, ...]] = set()
        labels = truth.copy()
        for candidate in product(range(k), repeat=6):
            labels[:6] = candidate
            value, _ = release_text(metric.score(pred, labels, 1e-15), decimals)
            if value == released:
                consistent.add(candidate)
        assert tuple(truth[:6].tolist()) in consistent
        assert consistent <= kept
        assert len(kept) <= len(consistent) * 3  # the window is at most a few lattice steps wide


@pytest.mark.parametrize("k", [3, 6, 10])
def test_labels_per_query_reach_ninety_percent_of_the_kary_bound(k: int) -> None:
    n = 300
    labels = np.random.default_rng(k * n).integers(0, k, n)
    result = capacity_attack(board(labels, k, decimals=5))
    bound = counting_bound(n, 5, classes=k)
    assert result.details["counting_bound"] == bound
    assert result.details["labels_per_query"] >= 0.9 * bound


@pytest.mark.parametrize("constant", [0, 5])
def test_constant_labelings_reach_ninety_percent_too(constant: int) -> None:
    """A constant labeling used to meet the same top-digit collision set every query (the top's weights were
    the same each time): 89 % of the bound at K = 6, N = 306; each top row's classes are now permuted per query."""
    n, k = 306, 6
    result = capacity_attack(board(np.full(n, constant), k, decimals=5), check=False)
    assert (result.labels == constant).all()
    assert result.details["labels_per_query"] >= 0.9 * counting_bound(n, 5, classes=k)


def test_tolerates_a_known_noise_bound_and_fails_loudly_beyond_it() -> None:
    labels = np.random.default_rng(3).integers(0, 4, 120)
    noisy = [{"name": "noise", "kind": "laplace", "scale": 1e-5}]
    result = capacity_attack(board(labels, 4, decimals=5, defenses=noisy, seed=1), noise_bound=4e-4)
    assert result.labels.tolist() == labels.tolist()
    loud = [{"name": "noise", "kind": "laplace", "scale": 1e-2}]
    with pytest.raises(AttackFailed):
        capacity_attack(board(labels, 4, decimals=5, defenses=loud, seed=1))


@pytest.mark.parametrize(("k", "decimals"), [(2, 5), (3, 5), (6, 5), (10, 5), (3, None)])
def test_split_variant_recovers_public_mask_and_labels_with_the_count_measured(k: int, decimals: int | None) -> None:
    n = 160
    # A float64 release is slower to enumerate (the window holds few states, so the batches are long): one case.
    for labels in labelings(n, k, seed=10 + k)[: 3 if decimals is not None else 1]:
        oracle = board(labels, k, decimals=decimals, public_fraction=0.3, seed=k)
        truth_mask = oracle.spec.hidden.public_mask
        result = capacity_split_attack(oracle, hidden_split=True)  # the count measured, not read off the page
        mask = result.details["public_mask"]
        assert mask.tolist() == truth_mask.tolist()
        assert result.details["n_public"] == int(truth_mask.sum())
        assert result.labels[mask].tolist() == labels[mask].tolist()
        assert (result.labels[~mask] == -1).all()
        assert 0 < result.details["calibration_queries"] <= 80


@pytest.mark.parametrize(("n", "k", "fraction"), [(25_000, 3, 0.3), (2_201, 10, 0.25), (500, 2, 0.5)])
def test_public_count_is_measured_exactly(n: int, k: int, fraction: float) -> None:
    labels = np.random.default_rng(n).integers(0, k, n)
    metric = "binary_logloss" if k == 2 else "multiclass_logloss"
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5, public_fraction=fraction, seed=2)
    count, queries = estimate_public_count(oracle, None if k == 2 else k)
    assert count == int(oracle.spec.hidden.public_mask.sum())
    assert queries == oracle.queries <= 40


def test_split_variant_fails_loudly_on_a_wrong_public_count() -> None:
    labels = np.random.default_rng(4).integers(0, 3, 120)
    oracle = board(labels, 3, decimals=5, public_fraction=0.3, seed=4)
    with pytest.raises(AttackFailed):
        capacity_split_attack(oracle, n_public=int(oracle.spec.hidden.public_mask.sum()) + 1)


def test_capacity_accepts_a_public_fraction_of_one() -> None:
    for k, metric in ((2, "binary_logloss"), (5, "multiclass_logloss")):
        labels = np.random.default_rng(k).integers(0, k, 90)
        oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=5, public_fraction=1.0)
        assert capacity_attack(oracle).labels.tolist() == labels.tolist()
        split = capacity_split_attack(oracle)
        assert split.labels.tolist() == labels.tolist() and split.details["public_mask"].all()


@pytest.mark.parametrize("attack", ["capacity", "capacity_split"])
def test_every_refusal_is_an_attack_failure_with_a_reason(attack: str) -> None:
    cases = [
        (LocalOracle([0, 1, 2, 1], metric="accuracy", n_classes=3), "log-loss board"),
        (LocalOracle([0, 1, 1, 0], arithmetic="mpfr:80", decimals=None), "float64"),
    ]
    if attack == "capacity_split":  # both run on Brier (tests/attacks/test_capacity_split_bregman.py), not on AUC
        cases.append((LocalOracle([0, 1, 1, 0], metric="auc"), "Bregman losses"))
    for oracle, reason in cases:
        with pytest.raises(AttackFailed, match=reason):
            run(attack, oracle)
        assert oracle.queries == 0
    with pytest.raises(AttackFailed, match="noise_bound"):
        run(attack, LocalOracle([0, 1, 2, 1], metric="multiclass_logloss"), noise_bound=-1e-3)
    split = LocalOracle([0, 1, 2, 1, 0, 2], metric="multiclass_logloss", public_fraction=0.5)
    if attack == "capacity":
        with pytest.raises(AttackFailed, match="capacity_split"):
            run(attack, split)


def test_prime_single_refuses_before_building_its_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """At N = 2,201 the refusal used to build the probe and search the bits it would need (minutes); now the
    primes' product alone (log2 Π p_i ≈ 27,700 bits against φ = 53) decides, and nothing expensive is called."""
    calls: list[str] = []

    def forbidden(name: str):  # type: ignore[no-untyped-def]
        def call(*args: object, **kwargs: object) -> None:
            calls.append(name)
            raise AssertionError(f"{name} called")

        return call

    monkeypatch.setattr(paper000, "prime_probe", forbidden("prime_probe"))
    monkeypatch.setattr(paper000, "prime_single_bits", forbidden("prime_single_bits"))
    for decimals in (5, None):
        oracle = LocalOracle(np.arange(2201) % 2, decimals=decimals)
        with pytest.raises(AttackFailed, match=r"needs mpfr:≈27731 .*prime_batched"):
            run("prime_single", oracle)
        assert oracle.queries == 0
    assert calls == []


def test_prime_single_estimate_is_close_to_the_searched_bits() -> None:
    from attacks.exact import first_primes

    for n in (5, 10, 21, 60):
        assert 0 <= paper000.prime_single_bits_estimate(first_primes(n)) - paper000.prime_single_bits(n) <= 2


@pytest.mark.parametrize(("k", "fraction"), [(3, 0.3), (6, None), (10, 0.3)])
def test_auto_recovers_a_plain_multiclass_board(k: int, fraction: float | None) -> None:
    """Issue 11: auto on a plain 3-class board with the default 30 % public split used to fail after 3
    submissions (prime_powers cannot see a split) and fall back to the majority class."""
    labels = np.random.default_rng(k).integers(0, k, 300)
    oracle = board(labels, k, decimals=5, public_fraction=fraction, seed=3)
    mask = oracle.spec.hidden.public_mask
    result = run("auto", oracle, budget=400)
    expected = "capacity_split" if fraction is not None else "capacity"
    assert result.details["attack"] == expected and result.details["fallback"] is None
    exact = np.asarray(result.confidence) == 1.0
    assert exact.tolist() == mask.tolist()
    assert result.labels[exact].tolist() == labels[exact].tolist()
    assert any(line.startswith(f"chose {expected}: multiclass log loss") for line in result.details["reasoning"])


@pytest.mark.parametrize("fraction", [None, 0.3])
def test_auto_under_laplace_noise_vouches_only_for_right_labels(fraction: float | None) -> None:
    labels = np.random.default_rng(5).integers(0, 4, 120)
    noise = [{"name": "noise", "kind": "laplace", "scale": 1e-4}]
    oracle = board(labels, 4, decimals=5, public_fraction=fraction, seed=2, defenses=noise)
    result = run("auto", oracle, budget=600)
    exact = np.asarray(result.confidence) == 1.0
    assert result.details["attack"] == ("capacity" if fraction is None else "capacity_split")
    assert exact.sum() == oracle.spec.hidden.public_mask.sum()
    assert result.labels[exact].tolist() == labels[exact].tolist()


class StatedFraction:
    """A board that states a public fraction its split does not have (another site's rule, or a wrong one)."""

    def __init__(self, inner: LocalOracle, fraction: float) -> None:
        self._inner = inner
        self.public_fraction = fraction

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_public_count_is_measured_even_when_the_stated_fraction_is_wrong() -> None:
    labels = np.random.default_rng(0).integers(0, 3, 300)
    oracle = board(labels, 3, decimals=5, public_fraction=0.3, seed=1)
    count, _ = estimate_public_count(StatedFraction(oracle, 0.5), 3)  # type: ignore[arg-type]
    assert count == int(oracle.spec.hidden.public_mask.sum()) == 90


def test_a_small_split_costs_two_calibration_queries() -> None:
    for seed in range(4):
        oracle = LocalOracle(np.random.default_rng(seed).integers(0, 2, 40), decimals=5, public_fraction=0.3, seed=seed)
        assert estimate_public_count(oracle, None) == (12, 2)
