"""``auc_logloss_ranks`` (paper 004 §3 with the AUC read as a rank-sum code) and the counting bound of an
(AUC, log loss) pair: exact recovery, a brute-force cross-check of one query's decoder, loud failures, and the
codomain counts against enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attacks import AttackFailed, LocalOracle, available, run
from attacks import information as info
from attacks.paper004.auc_ranks import build_query, decode_query
from attacks.paper004.server import ServerModel
from tests.attacks.test_paper004 import NoisyOracle, labelings


def both(labels: np.ndarray, decimals: int | None = None) -> LocalOracle:
    return LocalOracle(labels, decimals=decimals, also_report=("auc",))


@pytest.mark.parametrize(("n", "decimals"), [(60, None), (306, None), (120, 4), (200, 6)])
def test_it_recovers_every_label_of_random_and_adversarial_labelings(
    n: int, decimals: int | None, rng: np.random.Generator
) -> None:
    for labels in labelings(n, rng):
        result = run("auc_logloss_ranks", both(labels, decimals))  # run() also confirms the claim
        assert (result.labels == labels).all()
        if labels.min() == labels.max():
            assert result.details["labels_per_query"] == [n]  # the count of positives says everything


def test_rank_rows_carry_labels_beyond_the_log_loss_alone(rng: np.random.Generator) -> None:
    labels = rng.integers(0, 2, 306)
    ranks = run("auc_logloss_ranks", both(labels), confirm=False)
    plain = run("auc_logloss", both(labels), confirm=False)
    per_query = ranks.details["labels_per_query"]
    assert per_query[0] >= plain.details["batch_size"] + 2  # 2 rank rows need no spacer
    assert max(per_query) >= plain.details["batch_size"] + 7  # ~log2(decoded rows) + 1 once spacers exist
    assert ranks.queries < plain.queries
    assert (ranks.labels == labels).all()


@pytest.mark.parametrize(("decimals", "n", "varied_log_loss_rows"), [(2, 40, None), (None, 70, 8)])
@pytest.mark.parametrize("pooled", [True, False])
def test_one_query_decodes_exactly_what_brute_force_finds(
    decimals: int | None, n: int, varied_log_loss_rows: int | None, pooled: bool
) -> None:
    # A query after 16 rows are decoded (so spacers exist): every labeling of its rank rows and log-loss rows
    # (at float64 the 8 with the smallest logits: 2^44 is out of reach), the rest fixed, scored by the
    # leaderboard itself; exactly the true one must release the same pair, and it is what the decoder names.
    # The other decoded rows pooled in the tied block, or at the extremes.
    rng = np.random.default_rng(11)
    labels = rng.integers(0, 2, n)
    positives = int(labels.sum())
    oracle = both(labels, decimals)
    model = ServerModel.of(oracle)
    state = np.full(n, -1, dtype=np.int64)
    state[:16] = labels[:16]
    predictions, query, a_rows, b_rows = build_query(state, model, positives, pooled=pooled)
    assert len(b_rows) >= 2 and query.layout.spacers > 0
    assert (query.block_known_positives > 0) == pooled
    assert (query.top + query.bottom > 0) == (not pooled)
    released = oracle.submit_all(predictions)
    code_a, code_b = decode_query(released["binary_logloss"], released["auc"], model, query, positives)
    decoded = [(code_a >> i) & 1 for i in range(len(a_rows))] + [(code_b >> j) & 1 for j in range(len(b_rows))]
    assert decoded == labels[np.concatenate([a_rows, b_rows])].tolist()
    rows = np.concatenate([a_rows[:varied_log_loss_rows], b_rows])
    assert len(rows) <= 13
    matches = []
    for guess in itertools.product((0, 1), repeat=len(rows)):
        trial = labels.copy()
        trial[rows] = guess
        if trial.sum() == positives and both(trial, decimals).submit_all(predictions) == released:
            matches.append(list(guess))
    assert matches == [labels[rows].tolist()]


def test_it_is_registered() -> None:
    assert "auc_logloss_ranks" in available()


def test_it_needs_a_leaderboard_that_reports_auc(rng: np.random.Generator) -> None:
    oracle = LocalOracle(rng.integers(0, 2, 30))
    with pytest.raises(AttackFailed, match="reports AUC"):
        run("auc_logloss_ranks", oracle)
    assert oracle.queries == 0


def test_it_fails_loudly_when_the_release_is_too_coarse(rng: np.random.Generator) -> None:
    with pytest.raises(AttackFailed):
        run("auc_logloss_ranks", both(rng.integers(0, 2, 3000), decimals=1))


def test_it_fails_loudly_under_undisclosed_noise(rng: np.random.Generator) -> None:
    oracle = NoisyOracle(rng.integers(0, 2, 200), 2e-7, decimals=None, also_report=("auc",))
    with pytest.raises(AttackFailed):
        run("auc_logloss_ranks", oracle)


def test_labelings_bits_is_log2_of_the_binomial() -> None:
    for n, p in [(10, 3), (179, 89), (306, 81)]:
        assert info.labelings_bits(n, p) == pytest.approx(math.log2(math.comb(n, p)), rel=1e-12)


def test_auc_takes_at_most_2_p_n_minus_p_plus_1_values_ties_included() -> None:
    # Brute force: every labeling with P = 3 of 7 rows under predictions with ties; halves occur, so the count
    # needs the factor 2.
    n, p = 7, 3
    files = [[0.1, 0.5, 0.5, 0.9, 0.3, 0.5, 0.7], [0.2, 0.2, 0.4, 0.4, 0.6, 0.6, 0.8], list(np.linspace(0.1, 0.9, n))]
    values: set[float] = set()
    for file in files:
        for ones in itertools.combinations(range(n), p):
            labels = np.zeros(n, dtype=np.int64)
            labels[list(ones)] = 1
            released = both(labels).submit_all(file)["auc"]
            assert released is not None
            values.add(float(released))
    pairs = p * (n - p)
    assert len(values) <= info.auc_release_count(p, n - p, None)
    assert any(v * pairs % 1 == 0.5 for v in values)  # a tie counted one half
    assert info.auc_release_count(p, n - p, 1) == 11


def test_every_labeling_but_one_scores_at_least_ln2_over_n() -> None:
    # The log-loss count rests on this: each row's costlier label costs at least ln 2 (clipping included).
    rng = np.random.default_rng(3)
    n = 9
    for file in ([0.5] * n, list(rng.uniform(0, 1, n)), list(np.clip(rng.uniform(0, 1, n) ** 8, 0, 1))):
        releases = [LocalOracle(list(y), decimals=None).submit(file) for y in itertools.product((0, 1), repeat=n)]
        scores = sorted(float(r) for r in releases if r is not None)
        assert len(scores) == 2**n
        assert scores[1] >= math.log(2) / n * (1 - 1e-9)


def test_the_counting_bound_contradicts_paper_004s_two_queries_below_180_rows() -> None:
    n, p = 179, 89
    bits = info.auc_logloss_bits(n, p, None)
    assert 69 < bits < 70 < info.paper004_tuple_bits() < 100
    assert math.ceil(info.labelings_bits(n, p) / bits) == 3  # the paper: 2 queries suffice for N < 180
    for n in (569, 2_201, 25_000):
        assert math.ceil(info.labelings_bits(n, n // 2) / info.auc_logloss_bits(n, n // 2, None)) > -(-n // 90)
