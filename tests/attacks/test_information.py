"""The information bounds of attacks.information against brute force and exact channel capacities."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from attacks import LocalOracle
from attacks import information as info


def test_loss_range_matches_field_notes() -> None:
    assert info.loss_range() == pytest.approx(34.5388, abs=1e-4)


def test_rounding_count_bounds_the_distinct_releases_of_every_labeling() -> None:
    # Brute force: one file, all 2^8 labelings; the releases it can make are at most the bound's count.
    rng = np.random.default_rng(1)
    n, decimals = 8, 0
    file = np.clip(rng.uniform(0, 1, n) ** 3, 1e-15, 1 - 1e-15)
    releases = {LocalOracle(list(y), decimals=decimals).submit(file) for y in itertools.product((0, 1), repeat=n)}
    assert len(releases) <= info.release_count(decimals, info.loss_range())
    assert math.log2(len(releases)) <= info.rounding_bits(n, decimals)
    assert info.rounding_bits(3, 5) == 3.0  # never more than the labels themselves


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
@pytest.mark.parametrize("scale", [0.05, 0.2])
def test_blahut_arimoto_capacity_stays_below_the_analytic_bound(kind: str, scale: float) -> None:
    amplitude, step = 1.0, 0.02
    w = info.discretized_noise_channel(kind, scale, amplitude, step, 41, tail=8.0)
    capacity = info.blahut_arimoto(w)
    bound = info.additive_noise_bits(kind, scale, 10**6, None, amplitude=amplitude)
    assert 0 < capacity <= bound
    # The bound is not loose by more than the Gaussian-vs-uniform shaping and discretisation gap.
    assert bound - capacity < 1.0


def test_blahut_arimoto_noiseless_rounding_reaches_the_count() -> None:
    w = info.discretized_noise_channel("gaussian", 1e-6, 1.0, 0.1, 11, tail=3.0)
    assert info.blahut_arimoto(w) == pytest.approx(math.log2(11), abs=1e-3)
    assert math.log2(11) <= math.log2(info.release_count(1, 1.0))


def test_binary_input_monte_carlo_mutual_information_below_bound() -> None:
    # Antipodal input ±A/2 (the best 1-bit design) through Gaussian noise, MI by numerical integration.
    a, sigma = 1.0, 0.4
    ys = np.linspace(-8, 8, 20001)
    dy = ys[1] - ys[0]
    pdf = [np.exp(-((ys - m) ** 2) / (2 * sigma**2)) / math.sqrt(2 * math.pi * sigma**2) for m in (-a / 2, a / 2)]
    mix = 0.5 * (pdf[0] + pdf[1])
    mi = sum(0.5 * float(np.sum(p * np.log2(np.maximum(p, 1e-300) / np.maximum(mix, 1e-300))) * dy) for p in pdf)
    assert mi <= info.additive_noise_bits("gaussian", sigma, 10**6, None, amplitude=a)


def test_noise_bounds_shrink_with_noise_and_attenuate() -> None:
    b3 = info.additive_noise_bits("laplace", 1e-3, 2201, 5)
    b2 = info.additive_noise_bits("laplace", 1e-2, 2201, 5)
    assert b2 < b3 <= info.rounding_bits(2201, 5)
    assert info.uniform_prior_bits("laplace", 1e-2, 2201) < b2
    assert info.randomized_response_bits(0.5, b2) == 0
    assert info.randomized_response_bits(0.05, b2) == pytest.approx(0.81 * b2)
    assert info.subsetting_bits(0.5, b2) == pytest.approx(b2 / 2)
    assert 0 < info.multiplicative_noise_bits(1e-3, 2201, 5) <= info.rounding_bits(2201, 5)
    assert info.queries_lower_bound(2201, b2) == pytest.approx(2201 / b2)
    assert info.privacy_budget_bits(10, b2) == pytest.approx(10 * b2)


def _ladder_transcript(scores: tuple[float, ...], step: float) -> tuple[float, ...]:
    best, out = math.inf, []
    for s in scores:
        if s < best - step:
            best = round(s / step) * step
        out.append(best)
    return tuple(out)


def test_ladder_transcripts_counted_by_brute_force() -> None:
    step, top, queries = 0.25, 1.0, 4
    grid = np.linspace(0, top, 17)
    transcripts = {_ladder_transcript(s, step) for s in itertools.product(grid, repeat=queries)}
    assert math.log2(len(transcripts)) <= info.ladder_bits(step, queries, initial=top)


def test_the_accounts_bound_splits_submissions_over_per_account_ladders() -> None:
    # One account: the Ladder's own transcript bound; more accounts never carry fewer bits, and never more than
    # a release each at the board's precision.
    one = info.accounts_ladder_bits(1, 200, 0.01, 306, 5)
    assert one == info.ladder_bits(0.01, 200)
    bits = [info.accounts_ladder_bits(k, 200, 0.01, 306, 5) for k in (1, 2, 10, 100, 200, 1000)]
    assert bits == sorted(bits) and bits[-1] == bits[-2]  # past one submission an account, no more accounts help
    assert bits[-1] <= 200 * info.rounding_bits(306, 5)
    # Brute force over every share of 12 submissions between 3 accounts: the even share is the maximum.
    from itertools import product

    best = max(sum(info.ladder_bits(0.01, q) for q in shares)
               for shares in product(range(13), repeat=3) if sum(shares) == 12)
    assert abs(info.accounts_ladder_bits(3, 12, 0.01, 306, 5) - best) < 1e-9


def test_what_fresh_accounts_read_stays_within_the_accounts_bound() -> None:
    # 306 rows, 30 % public, parameter-free Ladder: the public labels read through 34 accounts (36 submissions,
    # tests/attacks/test_fresh_accounts.py) carry no more bits than those accounts' releases can.
    public, share = 92, 0.68
    assert info.accounts_needed(public, share, None, 5) <= 34
    assert info.accounts_ladder_bits(34, 36, None, 306, 5) >= info.label_entropy_bits(public, share)
