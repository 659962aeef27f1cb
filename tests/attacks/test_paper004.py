"""Paper 004's attacks: twin primes (Algorithms 1–2), binary representation (Algorithm 3) and AUC with log
loss (Section 3), against the local oracle in the arithmetic each assumes, with the decoders checked against
brute force and the loud failures checked where the assumptions break."""

from __future__ import annotations

import doctest
import itertools
from decimal import Decimal
from functools import partial
from typing import Any

import numpy as np
import pytest

import attacks
import attacks.paper004.auc
import attacks.paper004.binary
import attacks.paper004.server
import attacks.paper004.twin
from attacks import AttackFailed, LocalOracle, available
from attacks.exact import gmpy2, local_precision, lower_twin_primes, mpfr
from attacks.oracle import Released
from attacks.paper004 import algorithm2, labels_from_denominator, labels_from_exponent
from attacks.paper004.binary import binary_predictions
from attacks.paper004.binary import decode_batch as decode_binary
from attacks.paper004.server import ServerModel
from attacks.paper004.twin import decode_batch as decode_twin
from attacks.paper004.twin import twin_prime_predictions

# These tests check each construction's own query count and decoding; the confirmation query that
# attacks.run adds by default is tested in tests/attacks/test_confirm.py.
run = partial(attacks.run, confirm=False)

ATTACKS = ("twin_primes", "binary_representation", "auc_logloss")


def adversarial(n: int) -> dict[str, np.ndarray]:
    one_positive = np.zeros(n, dtype=np.int64)
    one_positive[n // 2] = 1
    return {
        "zeros": np.zeros(n, dtype=np.int64),
        "ones": np.ones(n, dtype=np.int64),
        "alternating": np.arange(n, dtype=np.int64) % 2,
        "one_positive": one_positive,
    }


def labelings(n: int, rng: np.random.Generator, random: int = 2) -> list[np.ndarray]:
    return [*adversarial(n).values(), *(rng.integers(0, 2, n) for _ in range(random))]


class NoisyOracle(LocalOracle):
    """A leaderboard that adds undisclosed uniform noise of ``±scale`` to the released mean."""

    def __init__(self, labels: np.ndarray, scale: float, **kwargs: Any) -> None:
        super().__init__(labels, **kwargs)
        self.noise = np.random.default_rng(5)
        self.scale = scale

    def submit_all(self, predictions: Any) -> dict[str, Released]:
        released = super().submit_all(predictions)
        value = released[self.metric]
        assert value is not None
        shift = self.noise.uniform(-self.scale, self.scale)
        released[self.metric] = value + Decimal(shift) if isinstance(value, Decimal) else float(value) + shift
        return released


@pytest.mark.parametrize(
    "module",
    [attacks.paper004.twin, attacks.paper004.binary, attacks.paper004.server,
     attacks.paper004.auc],
)
def test_the_papers_worked_examples_run_as_doctests(module: Any) -> None:
    failures, tried = doctest.testmod(module)
    assert tried > 0 or module is attacks.paper004.server
    assert failures == 0


def test_the_three_attacks_are_registered() -> None:
    assert set(ATTACKS) <= set(available())


# --- twin primes (Algorithms 1-2) ------------------------------------------------------------------------


def test_twin_primes_are_the_lower_members_from_five() -> None:
    primes = lower_twin_primes(30)
    assert primes[:6] == (5, 11, 17, 29, 41, 59)
    assert all(gmpy2.is_prime(p) and gmpy2.is_prime(p + 2) for p in primes)


def test_algorithm2_decodes_every_exact_ratio_and_rejects_other_fractions() -> None:
    from fractions import Fraction

    primes = lower_twin_primes(6)
    c = int(np.prod([p + 2 for p in primes]))
    for bits in itertools.product((0, 1), repeat=6):
        q = 2 ** (6 - sum(bits)) * int(np.prod([p for p, b in zip(primes, bits, strict=True) if b]))
        assert algorithm2(Fraction(c, q)) == list(bits)
    with pytest.raises(AttackFailed):
        algorithm2(Fraction(1729, 171))
    with pytest.raises(AttackFailed):
        algorithm2(Fraction(1730, 170))
    assert labels_from_denominator(2 * 5, (5, 11, 17)) is None  # one zero and one one: not three rows
    assert labels_from_denominator(2 * 5 * 5, (5, 11, 17)) is None  # a repeated prime
    assert labels_from_denominator(4 * 5, (5, 11, 17)) == [1, 0, 0]


@pytest.mark.parametrize("n", [1, 2, 5, 16, 60])
def test_twin_primes_recovers_everything_in_one_query_at_arbitrary_precision(
    n: int, rng: np.random.Generator
) -> None:
    for labels in labelings(n, rng):
        oracle = LocalOracle(labels, arithmetic="mpfr:1200", decimals=None)
        result = run("twin_primes", oracle)
        assert result.queries == 1
        assert (result.labels == labels).all()


@pytest.mark.parametrize(
    ("decimals", "arithmetic"), [(None, "float64"), (5, "float64"), (8, "float64"), (5, "mpfr:100")]
)
def test_twin_primes_batches_to_the_servers_precision(
    decimals: int | None, arithmetic: str, rng: np.random.Generator
) -> None:
    for labels in labelings(120, rng):
        oracle = LocalOracle(labels, arithmetic=arithmetic, decimals=decimals)
        result = run("twin_primes", oracle)
        size = result.details["batch_size"]
        assert 1 <= size < 120
        assert result.queries == -(-120 // size)
        assert (result.labels == labels).all()


def test_twin_primes_refuses_a_batch_the_precision_cannot_carry(rng: np.random.Generator) -> None:
    oracle = LocalOracle(rng.integers(0, 2, 40), decimals=None)  # float64 carries ~7 rows
    with pytest.raises(AttackFailed, match="not decodable"):
        run("twin_primes", oracle, batch_size=40)
    assert oracle.queries == 0
    coarse = LocalOracle(rng.integers(0, 2, 400_000), decimals=1)  # not even one row fits
    with pytest.raises(AttackFailed, match="not decodable"):
        run("twin_primes", coarse)
    assert coarse.queries == 0


def test_twin_primes_fails_loudly_when_the_server_is_less_precise_than_assumed(rng: np.random.Generator) -> None:
    labels = rng.integers(0, 2, 40)
    oracle = LocalOracle(labels, arithmetic="mpfr:96", decimals=None)
    with pytest.raises(AttackFailed, match="fit the released score"):
        run("twin_primes", oracle, bits=2000)  # the attacker believes in 2000 bits, the server has 96


def test_twin_primes_fails_loudly_under_undisclosed_noise(rng: np.random.Generator) -> None:
    oracle = NoisyOracle(rng.integers(0, 2, 60), 1e-6, arithmetic="mpfr:400", decimals=None)
    with pytest.raises(AttackFailed):
        run("twin_primes", oracle)


def _brute_force_table(predictions: list[Any], bits: int) -> list[tuple[Any, int]]:
    """Every labeling's exact summed loss (Gray-code order), sorted, with the labeling as a bit mask."""
    n = len(predictions)
    with local_precision(bits):
        zero = [-gmpy2.log(1 - mpfr(x)) for x in predictions]
        one = [-gmpy2.log(mpfr(x)) for x in predictions]
        total, mask, table = gmpy2.fsum(zero), 0, []
        for step in range(2**n):
            if step:
                bit = (step & -step).bit_length() - 1
                total += (zero[bit] - one[bit]) if mask >> bit & 1 else (one[bit] - zero[bit])
                mask ^= 1 << bit
            table.append((total, mask))
    return sorted(table)


def _nearest(table: list[tuple[Any, int]], value: Any, n: int) -> list[int]:
    best = min(table, key=lambda row: abs(row[0] - value))
    return [(best[1] >> i) & 1 for i in range(n)]


@pytest.mark.parametrize("n", [1, 3, 8, 12, 16])
def test_twin_prime_decoder_agrees_with_brute_force(n: int, rng: np.random.Generator) -> None:
    primes = lower_twin_primes(n)
    oracle = LocalOracle(np.zeros(n, dtype=np.int64), arithmetic="mpfr:160", decimals=None)
    model = ServerModel.of(oracle)
    texts = model.encode(twin_prime_predictions(primes, model.work_bits))
    table = _brute_force_table(texts, 400)
    cases = itertools.product((0, 1), repeat=n) if n <= 8 else (rng.integers(0, 2, n) for _ in range(24))
    for case in cases:
        labels = np.asarray(case, dtype=np.int64)
        released = LocalOracle(labels, arithmetic="mpfr:160", decimals=None).submit(texts)
        summed = model.summed_loss(released)
        assert decode_twin(summed, model, primes) == labels.tolist() == _nearest(table, summed, n)


# --- binary representation (Algorithm 3) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("decimals", "arithmetic"), [(None, "float64"), (5, "float64"), (8, "float64"), (None, "mpfr:200")]
)
def test_binary_representation_recovers_everything_six_rows_per_query(
    decimals: int | None, arithmetic: str, rng: np.random.Generator
) -> None:
    for labels in labelings(100, rng):
        oracle = LocalOracle(labels, arithmetic=arithmetic, decimals=decimals)
        result = run("binary_representation", oracle)
        assert result.details["batch_size"] == 6  # 2^(2^5) fits under 1/(2·1e-15), 2^(2^6) does not
        assert result.queries == 17
        assert (result.labels == labels).all()


def test_binary_representation_carries_ten_rows_when_clipping_allows(rng: np.random.Generator) -> None:
    for labels in labelings(25, rng):
        oracle = LocalOracle(labels, arithmetic="mpfr:1200", decimals=None, eps=1e-300)
        result = run("binary_representation", oracle)
        assert result.details["batch_size"] == 10
        assert (result.labels == labels).all()


def test_binary_representation_refuses_when_the_release_is_too_coarse(rng: np.random.Generator) -> None:
    oracle = LocalOracle(rng.integers(0, 2, 20), decimals=1)  # N/2 · 0.1 = 1 > ln 2 / 2
    with pytest.raises(AttackFailed, match="not decodable"):
        run("binary_representation", oracle)
    assert oracle.queries == 0
    with pytest.raises(AttackFailed, match="not decodable"):
        run("binary_representation", LocalOracle(rng.integers(0, 2, 20)), batch_size=7)  # 2^64 would be clipped


def test_binary_representation_fails_loudly_when_noise_leaves_no_exponent(rng: np.random.Generator) -> None:
    # Noise of ±0.02 on the mean of 20 rows moves the sum by up to 0.4 ln-units: some probe lands between two
    # exponents' windows, and the decoder says so instead of rounding.
    oracle = NoisyOracle(rng.integers(0, 2, 600), 0.0012, decimals=None)
    with pytest.raises(AttackFailed, match="fit the released score"):
        run("binary_representation", oracle)


def test_binary_decoder_agrees_with_brute_force(rng: np.random.Generator) -> None:
    for n, eps, arithmetic in ((6, 1e-15, "float64"), (10, 1e-300, "mpfr:1200")):
        oracle = LocalOracle(np.zeros(n, dtype=np.int64), arithmetic=arithmetic, decimals=None, eps=eps)
        model = ServerModel.of(oracle)
        texts = model.encode(binary_predictions(n, model.work_bits + (1 << n)))
        table = _brute_force_table(texts, 1400)
        cases = itertools.product((0, 1), repeat=n) if n <= 6 else (rng.integers(0, 2, n) for _ in range(40))
        for case in cases:
            labels = np.asarray(case, dtype=np.int64)
            released = LocalOracle(labels, arithmetic=arithmetic, decimals=None, eps=eps).submit(texts)
            summed = model.summed_loss(released)
            assert decode_binary(summed, model, n) == labels.tolist() == _nearest(table, summed, n)
    assert labels_from_exponent(0, 3) == [0, 0, 0]


# --- AUC and log loss together (Section 3) and the oracle that reports both ------------------------------


def test_the_oracle_reports_every_metric_of_one_submission_as_one_query(rng: np.random.Generator) -> None:
    labels = rng.integers(0, 2, 50)
    predictions = rng.random(50)
    both = LocalOracle(labels, decimals=None, also_report=("auc", "binary_logloss"))
    released = both.submit_all(predictions)
    assert list(released) == ["binary_logloss", "auc"]
    assert both.queries == 1
    assert released["binary_logloss"] == LocalOracle(labels, decimals=None).submit(predictions)
    assert released["auc"] == LocalOracle(labels, metric="auc", decimals=None).submit(predictions)
    assert both.submit(predictions) == released["binary_logloss"]
    assert both.queries == 2
    assert LocalOracle(np.zeros(4, dtype=np.int64), also_report=("auc",)).submit_all([0.3] * 4)["auc"] is None


def test_the_papers_three_row_example_is_unique_only_as_a_pair() -> None:
    # v = [0.2, 0.4, 0.6]: neither score alone names the labeling, the pair does even at 2 decimals.
    released = {
        case: tuple(LocalOracle(list(case), decimals=2, also_report=("auc",)).submit_all([0.2, 0.4, 0.6]).values())
        for case in itertools.product((0, 1), repeat=3)
    }
    assert len({loss for loss, _ in released.values()}) < 8
    assert len({auc for _, auc in released.values()}) < 8
    assert len(set(released.values())) == 8


@pytest.mark.parametrize(("n", "decimals"), [(40, 2), (50, 5), (120, 4), (306, 8), (200, None)])
def test_auc_logloss_recovers_everything(n: int, decimals: int | None, rng: np.random.Generator) -> None:
    for labels in labelings(n, rng):
        oracle = LocalOracle(labels, decimals=decimals, also_report=("auc",))
        result = run("auc_logloss", oracle)
        assert (result.labels == labels).all()
        if labels.min() == labels.max():
            assert result.queries == 1  # the first probe counts the positives: nothing left to decode


def test_auc_carries_rows_the_log_loss_alone_cannot(rng: np.random.Generator) -> None:
    labels = rng.integers(0, 2, 306)
    result = run("auc_logloss", LocalOracle(labels, decimals=5, also_report=("auc",)))
    assert result.details["window"] > 1
    assert result.details["batch_size"] > 14  # the log loss alone separates 14 rows at N = 306, 5 decimals
    assert (result.labels == labels).all()


def test_auc_logloss_decoder_agrees_with_brute_force(rng: np.random.Generator) -> None:
    from attacks.paper004.auc import Design, decode_batch, plan

    n, decimals = 30, 3
    for case in itertools.product((0, 1), repeat=4):
        tail = rng.integers(0, 2, n - 4)
        labels = np.concatenate([np.asarray(case), tail])
        positives = int(labels.sum())
        oracle = LocalOracle(labels, decimals=decimals, also_report=("auc",))
        model = ServerModel.of(oracle)
        design = plan(model, positives, n)
        assert isinstance(design, Design) and design.size <= 16
        batch = [attacks.paper004.auc._sigmoid_neg(design.step * 2**i) for i in range(design.size)]
        predictions = batch + [0.5] * (n - design.size)
        released = oracle.submit_all(predictions)
        decoded = decode_batch(released["binary_logloss"], released["auc"], model, design, positives, batch)
        # Brute force: every labeling of the batch rows (the rest fixed to their true labels), scored by the
        # metrics themselves and rounded as the leaderboard rounds; exactly the true one must match.
        codes = np.arange(2**design.size)
        bits = (codes[:, None] >> np.arange(design.size)) & 1
        matches = []
        for code, row in zip(codes.tolist(), bits, strict=True):
            trial = np.concatenate([row, labels[design.size :]])
            if trial.sum() != positives:
                continue
            probe = LocalOracle(trial, decimals=decimals, also_report=("auc",)).submit_all(predictions)
            if probe == released:
                matches.append(code)
        truth = int(sum(int(b) << i for i, b in enumerate(labels[: design.size])))
        assert matches == [truth]
        assert decoded == labels[: design.size].tolist()


def test_auc_logloss_needs_a_leaderboard_that_reports_auc(rng: np.random.Generator) -> None:
    oracle = LocalOracle(rng.integers(0, 2, 30))
    with pytest.raises(AttackFailed, match="reports AUC"):
        run("auc_logloss", oracle)
    assert oracle.queries == 0


def test_auc_logloss_fails_loudly_when_the_release_is_too_coarse(rng: np.random.Generator) -> None:
    oracle = LocalOracle(rng.integers(0, 2, 3000), decimals=1, also_report=("auc",))
    with pytest.raises(AttackFailed):
        run("auc_logloss", oracle)


def test_auc_logloss_fails_loudly_under_undisclosed_noise(rng: np.random.Generator) -> None:
    oracle = NoisyOracle(rng.integers(0, 2, 200), 2e-7, decimals=None, also_report=("auc",))
    with pytest.raises(AttackFailed):
        run("auc_logloss", oracle)
