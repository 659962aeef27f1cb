"""The exact discrete samplers: their spread matches theory and OpenDP's own samplers (5-sigma bounds)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from defenses import sampling

N = 3000  # draws per statistical check


def _draws(fn, scale: float, k: int, seed: int = 1) -> np.ndarray:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    unit = Fraction(2) ** k
    return np.array([float(fn(rng, scale, k) * unit) for _ in range(N)])


def _ks_bound(n: int, m: int, alpha: float = 1e-6) -> float:
    """Two-sample Kolmogorov–Smirnov critical value at level ``alpha`` (asymptotic formula)."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def _opendp_draws(kind: str, scale: float, k: int | None) -> np.ndarray:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    make = dp.m.make_laplace if kind == "laplace" else dp.m.make_gaussian
    mechanism = make(*space, scale=scale, k=k)
    return np.array([mechanism(0.0) for _ in range(N)])


def test_it_reproduces_draws_from_the_same_generator_state() -> None:
    a = [sampling.discrete_laplace(np.random.default_rng(5), Fraction(7, 3)) for _ in range(3)]
    b = [sampling.discrete_laplace(np.random.default_rng(5), Fraction(7, 3)) for _ in range(3)]
    assert a == b


def test_bernoulli_exp_matches_its_probability() -> None:
    rng = np.random.default_rng(2)
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        p = math.exp(-gamma)
        hits = sum(sampling.bernoulli_exp(rng, gamma) for _ in range(N))
        assert abs(hits - N * p) <= 5 * math.sqrt(N * p * (1 - p))  # 5-sigma binomial bound


def test_laplace_spread_matches_theory() -> None:
    b = 0.01
    x = _draws(sampling.laplace_units, b, sampling.FINEST_K)
    # Laplace(b): variance 2b², fourth moment 24b⁴, so the sample variance has sd b²·sqrt(20/N).
    assert abs(x.mean()) <= 5 * math.sqrt(2) * b / math.sqrt(N)
    assert abs(x.var() - 2 * b * b) <= 5 * b * b * math.sqrt(20 / N)


def test_gaussian_spread_matches_theory() -> None:
    sigma = 0.01
    x = _draws(sampling.gaussian_units, sigma, sampling.FINEST_K)
    # N(0, σ²): the sample variance has sd σ²·sqrt(2/N).
    assert abs(x.mean()) <= 5 * sigma / math.sqrt(N)
    assert abs(x.var() - sigma * sigma) <= 5 * sigma * sigma * math.sqrt(2 / N)


def test_coarse_grid_releases_multiples_of_two_to_the_k() -> None:
    x = _draws(sampling.laplace_units, 1.0, -2)
    assert np.all(np.mod(x * 4, 1) == 0)


@pytest.mark.parametrize(("kind", "fn", "scale", "k"), [
    ("laplace", sampling.laplace_units, 0.5, None),
    ("gaussian", sampling.gaussian_units, 0.5, None),
    ("laplace", sampling.laplace_units, 1.0, -2),
    ("gaussian", sampling.gaussian_units, 1.0, -2),
])
def test_it_draws_the_same_distribution_as_opendp(kind: str, fn, scale: float, k: int | None) -> None:  # type: ignore[no-untyped-def]
    ours = _draws(fn, scale, sampling.FINEST_K if k is None else k)
    theirs = _opendp_draws(kind, scale, k)
    # OpenDP is unseeded, so this is a genuine two-sample test; its false-alarm rate is 1e-6.
    statistic = stats.ks_2samp(ours, theirs).statistic
    assert statistic <= _ks_bound(N, N)


def test_add_grid_noise_rounds_once_to_float() -> None:
    assert sampling.add_grid_noise(0.1, 0, sampling.FINEST_K) == 0.1
    assert sampling.add_grid_noise(0.3, 1, -1) == 1.0  # 0.3 rounds to 0.5 on the grid 2^-1, plus one unit
