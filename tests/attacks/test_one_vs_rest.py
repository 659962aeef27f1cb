"""``one_vs_rest``: a board asked "is the label in S?" as an exact binary log-loss board (K-class log loss, kl,
softmax CE; Brier, norm-like and Itakura–Saito on any number of classes), so the binary likelihood decoder
(``noisy``) reads their labels through noise no exact design carries."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

import attacks
from attacks import AttackFailed, LocalOracle
from attacks.one_vs_rest import QuestionOracle, question_sets, reducible


def _labels(n: int, k: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, k, n)


def _noisy(y: np.ndarray, metric: str, scale: float, seed: int = 1) -> LocalOracle:
    return LocalOracle(y, metric=metric, decimals=5, seed=seed,
                       defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])


CASES = [(metric, k) for metric in ("multiclass_logloss", "kl", "softmax_ce") for k in (3, 6, 10)] + [
    (metric, k) for metric in ("brier", "norm_like", "norm_like:2.5", "itakura_saito") for k in (2, 3, 6, 10)]


@pytest.mark.parametrize(("metric", "k"), CASES)
def test_the_adapter_releases_exactly_the_binary_board_of_each_question(metric: str, k: int) -> None:
    y = _labels(60, k, k)
    inner = LocalOracle(y, metric=metric, decimals=None)
    rng = np.random.default_rng(0)
    for subset in question_sets(k) + question_sets(k, "classes")[-1:]:
        asked = QuestionOracle(inner, subset)
        binary = LocalOracle(np.isin(y, subset).astype(int), metric="binary_logloss", decimals=None)
        # The binary attacks' vectors: the label-free ½, arbitrary values, the clipping edges, a jittered probe.
        for p in (np.full(60, 0.5), rng.uniform(0, 1, 60), np.where(rng.random(60) < 0.5, 0.0, 1.0),
                  0.5 + 1e-12 * np.arange(60)):
            clipped = np.clip(p, asked.eps, 1 - asked.eps)  # what the binary attack itself sends
            expected = float(binary.submit(clipped))  # type: ignore[arg-type]
            assert asked.submit(p) == pytest.approx(expected, abs=1e-9)
            matrix, _ = asked.rows(p)
            if metric.startswith(("brier", "norm_like", "itakura")):
                # Inside [0, 1] (and off the clipping bound where the metric clips); K-class rows sum to one.
                assert matrix.min() >= (2 * inner.eps if metric == "itakura_saito" else 0.0) and matrix.max() <= 1
                if k > 2:
                    assert np.allclose(matrix.sum(axis=1), 1.0, atol=1e-14)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 10, 16])
def test_the_bit_questions_name_every_class_and_split_the_classes_evenly(k: int) -> None:
    questions = question_sets(k)
    assert len(questions) == max(1, int(np.ceil(np.log2(k))))
    words = {tuple(c in s for s in questions) for c in range(k)}
    assert len(words) == k  # the answers tell every class apart
    # No code of this length splits the classes more evenly (brute force over every set of K codewords).
    bits = len(questions)
    best = min(max(abs(2 * sum((w >> j) & 1 for w in chosen) - k) for j in range(bits))
               for chosen in combinations(range(1 << bits), k))
    assert max(abs(2 * len(s) - k) for s in questions) == best


def test_brier_questions_reach_further_on_balanced_sets() -> None:
    # Brier's gap D = 2(b − a) reaches 2/max(s, K − s) on both sides: 4/K for a balanced set, 2/(K − 1) alone.
    inner = LocalOracle(_labels(20, 10, 0), metric="brier", decimals=None)
    balanced, alone = QuestionOracle(inner, (0, 1, 2, 3, 4)), QuestionOracle(inner, 0)
    assert balanced.scale / alone.scale == pytest.approx((4 / 10) / (2 / 9), rel=1e-9)


def test_it_reads_every_label_through_laplace_noise() -> None:
    y = _labels(120, 3, 1)
    oracle = _noisy(y, "multiclass_logloss", 1e-3)
    result = attacks.run("one_vs_rest", oracle, budget=1500)
    assert result.accuracy(y) == 1.0 and len(result.details["runs"]) == 2
    assert oracle.queries == result.queries <= 1500


@pytest.mark.parametrize(("metric", "k"), [("brier", 6), ("norm_like", 3), ("itakura_saito", 3), ("brier", 2)])
def test_it_reads_paper_001_losses_through_laplace_noise(metric: str, k: int) -> None:
    y = _labels(150, k, 2)
    oracle = _noisy(y, metric, 1e-3 if k > 2 else 5e-3)
    result = attacks.run("one_vs_rest", oracle, budget=3000, seed=2)
    assert result.accuracy(y) == 1.0 and oracle.queries == result.queries <= 3000
    assert len(result.details["runs"]) == len(question_sets(k))


def test_bit_questions_cost_fewer_queries_than_one_class_at_a_time() -> None:
    # ⌈log2 10⌉ = 4 binary runs instead of 9, each about as long: less than half the queries.
    y = _labels(200, 10, 3)
    bits, classes = _noisy(y, "multiclass_logloss", 1e-3), _noisy(y, "multiclass_logloss", 1e-3)
    by_bits = attacks.run("one_vs_rest", bits, budget=4000, seed=3)
    by_classes = attacks.run("one_vs_rest", classes, budget=4000, code="classes", seed=3)
    assert by_bits.accuracy(y) == by_classes.accuracy(y) == 1.0
    assert len(by_bits.details["runs"]) == 4 and len(by_classes.details["runs"]) == 9
    assert bits.queries < 0.5 * classes.queries


def test_auto_reads_a_noisy_multiclass_board_that_no_exact_design_carries() -> None:
    # Laplace 5e-3 on 200 rows: the summed loss moves by ~1 where one row spans 33; capacity, paper 001's powers
    # and Theorem 3 all refuse or fail to decode, and auto used to end at the majority class (0.375).
    y = _labels(200, 3, 1)
    oracle = _noisy(y, "multiclass_logloss", 5e-3)
    result = attacks.run("auto", oracle, budget=3000)
    assert result.details["fallback"] == "one_vs_rest"
    assert result.accuracy(y) >= 0.99 and oracle.queries <= 3000


@pytest.mark.parametrize(("metric", "k"), [("brier", 6), ("norm_like", 3), ("brier", 2)])
def test_auto_reads_noisy_boards_of_paper_001_losses(metric: str, k: int) -> None:
    # Before the reduction took these metrics, auto ended at the majority class on the K-class boards (0.185 at
    # K = 6) and spent its whole budget on boosting on the binary one (0.99 in 4,000 queries).
    n = 200
    y = np.random.default_rng(100 * k + 1).integers(0, k, n)
    oracle = _noisy(y, metric, 1e-3 if k > 2 else 5e-3)
    result = attacks.run("auto", oracle, budget=20 * n, seed=1)
    assert result.details["fallback"] == "one_vs_rest"
    assert result.accuracy(y) == 1.0 and oracle.queries < 600


def test_it_refuses_a_board_it_cannot_reduce() -> None:
    assert not reducible("binary_logloss", 2) and not reducible("kl", 2) and not reducible("auc", 2)
    assert reducible("brier", 2) and reducible("norm_like:2.5", 6) and reducible("softmax_ce", 3)
    with pytest.raises(AttackFailed, match="needs no reduction"):
        attacks.run("one_vs_rest", LocalOracle(_labels(20, 2, 0), metric="binary_logloss"))
    with pytest.raises(AttackFailed, match="accuracy"):
        attacks.run("one_vs_rest", LocalOracle(_labels(20, 3, 0), metric="accuracy"))
    with pytest.raises(AttackFailed, match="cannot hold"):
        attacks.run("one_vs_rest", LocalOracle(_labels(20, 3, 0), metric="multiclass_logloss"), budget=5)
    with pytest.raises(ValueError, match="proper"):
        QuestionOracle(LocalOracle(_labels(20, 3, 0), metric="brier"), (0, 1, 2))


def test_auto_skips_an_exact_design_that_cannot_carry_one_label_a_query() -> None:
    # Six classes, Laplace 1e-3 on 200 rows: the noise bound from the probes leaves one row's six losses closer
    # than the resolution; capacity used to run anyway and decode 2 labels in 3,993 queries.
    k, n = 6, 200
    y = np.random.default_rng(100 * k + 1).integers(0, k, n)
    oracle = _noisy(y, "multiclass_logloss", 1e-3)
    result = attacks.run("auto", oracle, budget=20 * n, seed=1)
    assert any("capacity skipped" in line for line in result.details["reasoning"])
    assert result.details["attack"] == "one_vs_rest" and result.accuracy(y) >= 0.99
    assert oracle.queries < 1000


def test_auto_reads_noise_hidden_below_the_resolution_through_binary_questions() -> None:
    # Laplace 1e-5 rounded to 5 decimals on a 10-class Brier board: repeated probes round to the same text, so
    # the fingerprint sees no noise; capacity's lattice and paper 001's doubling both fail on the rare draw that
    # crosses a rounding edge, and auto ended at the majority class (0.115). With every exact attack failed on a
    # rounded board, the likelihood decoder models the rounding as noise and reads every label.
    y = np.random.default_rng(0).integers(0, 10, 540)
    chain = [{"name": "noise", "kind": "laplace", "scale": 1e-5}, {"name": "rounding", "decimals": 5}]
    oracle = LocalOracle(y, metric="brier", decimals=None, seed=0, defenses=chain)
    result = attacks.run("auto", oracle, budget=2000, seed=0)
    assert result.details["fingerprint"]["noise"] is False
    assert result.details["fallback"] == "one_vs_rest" and result.accuracy(y) == 1.0
    assert oracle.queries <= 2000
