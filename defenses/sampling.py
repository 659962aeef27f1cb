"""Exact, seedable samplers for floating-point-safe noise: the construction OpenDP uses, driven by our RNG.

Why this module exists. Textbook float Laplace noise leaks the input through its low-order bits (Mironov,
CCS 2012). OpenDP avoids that by rounding the input to a grid of width ``2^k`` and adding *exactly* sampled
discrete Laplace or discrete Gaussian noise in integer grid units (Canonne, Kamath & Steinke, "The Discrete
Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1–3), then converting back to float once. But
OpenDP 0.16 draws from its own CSPRNG and exposes no way to seed it (no ``seed`` argument or setter in its
Python or Rust API), while the product needs re-scoring and offline games to reproduce released scores. So
this module implements the same construction with integer and rational arithmetic only — no float noise
arithmetic anywhere — and takes its random bits from a seeded ``numpy.random.Generator``. The tests check
its output against OpenDP's own samplers statistically.

Every function below takes ``rng`` and draws only integers from it (``uniform_below``), so results are
identical on every platform for the same generator state.

>>> draws = lambda: [discrete_laplace(rng, Fraction(3)) for rng in [np.random.default_rng(7)] for _ in range(5)]
>>> draws() == draws()
True
>>> add_grid_noise(0.5, 0, FINEST_K), add_grid_noise(0.5, 3, -2)
(0.5, 1.25)
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

# OpenDP's default granularity for float64 ("k defaults to the smallest granularity"): every float64 is a
# multiple of 2^-1074, so rounding the input to the grid changes nothing.
FINEST_K = -1074

_ONE_SHOT_LIMIT = 2**63


def uniform_below(rng: np.random.Generator, n: int) -> int:
    """A uniform integer in ``[0, n)`` for any positive Python int ``n`` (big ones by byte rejection)."""
    if n <= 0:
        raise ValueError("n must be positive")
    if n <= _ONE_SHOT_LIMIT:
        return int(rng.integers(0, n))
    bits = (n - 1).bit_length()
    nbytes = (bits + 7) // 8
    excess = nbytes * 8 - bits
    while True:  # accepts with probability > 1/2
        candidate = int.from_bytes(rng.bytes(nbytes), "big") >> excess
        if candidate < n:
            return candidate


def bernoulli(rng: np.random.Generator, p: Fraction) -> bool:
    """Bernoulli(p) for a rational ``p`` in [0, 1], exactly."""
    if p <= 0:
        return False
    if p >= 1:
        return True
    return uniform_below(rng, p.denominator) < p.numerator


def bernoulli_exp(rng: np.random.Generator, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for rational ``gamma >= 0``, exactly (CKS 2020, Algorithm 1)."""
    if gamma < 0:
        raise ValueError("gamma must be non-negative")
    whole = math.floor(gamma)
    for _ in range(whole):
        if not _bernoulli_exp_unit(rng, Fraction(1)):
            return False
    return _bernoulli_exp_unit(rng, gamma - whole)


def _bernoulli_exp_unit(rng: np.random.Generator, gamma: Fraction) -> bool:
    # For gamma in [0, 1]: the number of successive successes of Bernoulli(gamma / k) is odd with
    # probability exp(-gamma) (von Neumann's trick; CKS 2020, Algorithm 1, first branch).
    k = 1
    while bernoulli(rng, gamma / k):
        k += 1
    return k % 2 == 1


def discrete_laplace(rng: np.random.Generator, scale: Fraction) -> int:
    """An integer with P[X = x] ∝ exp(-|x| / scale), exactly (CKS 2020, Algorithm 2 with scale = t/s)."""
    if scale <= 0:
        raise ValueError("scale must be positive")
    t, s = scale.numerator, scale.denominator
    while True:
        u = uniform_below(rng, t)
        if not bernoulli_exp(rng, Fraction(u, t)):
            continue
        v = 0
        while bernoulli_exp(rng, Fraction(1)):
            v += 1
        magnitude = (u + t * v) // s
        negative = bool(rng.integers(0, 2))
        if negative and magnitude == 0:
            continue  # otherwise 0 would be counted twice
        return -magnitude if negative else magnitude


def discrete_gaussian(rng: np.random.Generator, sigma: Fraction) -> int:
    """An integer with P[X = x] ∝ exp(-x² / (2σ²)), exactly (CKS 2020, Algorithm 3)."""
    if sigma <= 0:
        raise ValueError("sigma must be positive")
    sigma2 = sigma * sigma
    t = math.floor(sigma) + 1
    while True:
        y = discrete_laplace(rng, Fraction(t))
        excess = abs(y) - sigma2 / t
        if bernoulli_exp(rng, excess * excess / (2 * sigma2)):
            return y


def to_fraction(value: float | Decimal | Fraction | int) -> Fraction:
    """The exact rational value of a float64, Decimal or int (rejecting NaN and infinities)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("cannot add noise to a non-finite score")
    return Fraction(value)


def grid_round(value: Fraction, k: int) -> int:
    """``value`` rounded to the nearest multiple of ``2^k``, in grid units (ties to even, like OpenDP)."""
    return round(value / Fraction(2) ** k)


def add_grid_noise(value: float | Decimal, noise_units: int, k: int) -> float:
    """Release ``round_to_grid(value) + noise`` as the nearest float64 (one rounding, post-processing)."""
    total = Fraction(grid_round(to_fraction(value), k) + noise_units) * Fraction(2) ** k
    return float(total)  # int/int true division: correctly rounded


def laplace_units(rng: np.random.Generator, scale: float, k: int) -> int:
    """Discrete Laplace noise in units of ``2^k`` for a continuous scale ``scale`` (OpenDP's make_laplace)."""
    return discrete_laplace(rng, to_fraction(scale) / Fraction(2) ** k)


def gaussian_units(rng: np.random.Generator, scale: float, k: int) -> int:
    """Discrete Gaussian noise in units of ``2^k`` for a standard deviation ``scale`` (OpenDP's make_gaussian)."""
    return discrete_gaussian(rng, to_fraction(scale) / Fraction(2) ** k)
