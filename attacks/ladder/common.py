"""What the Ladder attacks share: the server's per-row losses, the float tolerance of a predicted score, how a
released value is read back, and the arithmetic-coding split of a block of labels.

Every prediction an attack here submits is evaluated with the server's own row-loss function
(:func:`scoring.metrics.binary_logloss_rows`) and averaged with ``numpy.mean``, as the server does, so a
predicted score is the server's score up to the float64 summation error :func:`score_tolerance` bounds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import expit

from attacks.oracle import Oracle, Released
from attacks.result import AttackFailed
from scoring.metrics import binary_logloss_rows

#: The largest logit a block row is given: beyond it ``1 − p`` loses digits in float64 and the row's loss
#: for label 0 would no longer be the smooth function the design assumes.
LOGIT_CEILING = 10.0


def edge_logit(eps: float) -> float:
    """``A = ln((1 − eps)/eps)``: the clipping edge as a logit (34.54 at 1e-15)."""
    return math.log((1 - eps) / eps)


def row_losses(p: np.ndarray, y: np.ndarray, eps: float) -> np.ndarray:
    """The server's per-row binary log loss."""
    return binary_logloss_rows(np.asarray(p, dtype=np.float64), np.asarray(y), eps)


def loss_pair(logits: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(loss if the label is 1, loss if it is 0) of predictions ``sigmoid(logits)``, as the server computes."""
    p = expit(np.asarray(logits, dtype=np.float64))
    ones = np.ones(p.shape, dtype=np.int64)
    return row_losses(p, ones, eps), row_losses(p, 1 - ones, eps)


def server_score(p: np.ndarray, y: np.ndarray, eps: float) -> float:
    """The mean log loss exactly as the server computes it (``numpy.mean`` of the row losses)."""
    return float(np.mean(row_losses(p, y, eps)))


def score_tolerance(n: int, eps: float) -> float:
    """A bound on |server's mean − our mean of the same rows summed in another order|, with room to spare:
    every row's loss passes through at most ``⌈log2 n⌉ + 13`` roundings of relative 2^-53 (numpy's pairwise
    sum) on values at most ``A``; doubled, and never below 1e-13."""
    depth = math.ceil(math.log2(max(n, 2))) + 13 + 4
    return max(1e-13, 4.0 * depth * 2.0**-53 * (edge_logit(eps) + 1.0))


def release_tolerance(decimals: int | None) -> float:
    """How far a released text can sit from the value it shows: half a unit of the last decimal."""
    return 1e-12 if decimals is None else 0.5 * 10.0 ** (-decimals) + 1e-12


def submit(oracle: Oracle, p: np.ndarray) -> float:
    """One submission; :class:`AttackFailed` if the board releases nothing (the Ladder always releases)."""
    value: Released = oracle.submit(p)
    if value is None:
        raise AttackFailed("the board released nothing: not a Ladder (or a budget ran out)")
    return float(value)


def bernoulli_cdf(t: int, k: int, prior: float) -> float:
    """``P(V < t)`` for ``V = Σ_j z_j 2^(k−1−j)`` with independent ``z_j ~ Bernoulli(prior)`` (arithmetic coding's
    cumulative distribution; ``0 <= t <= 2^k``).

    >>> bernoulli_cdf(2, 2, 0.5), bernoulli_cdf(4, 2, 0.3)
    (0.5, 1.0)
    """
    if t >= 1 << k:
        return 1.0
    total, prefix = 0.0, 1.0
    for j in range(k):
        bit = (t >> (k - 1 - j)) & 1
        if bit:
            total += prefix * (1 - prior)  # every V with this prefix and a 0 here is below t
            prefix *= prior
        else:
            prefix *= 1 - prior
    return total


def split_point(lo: int, hi: int, k: int, prior: float, upper_mass: float) -> int:
    """The ``t`` in ``(lo, hi)`` whose upper part ``[t, hi)`` holds the share of ``P(V ∈ [lo, hi))`` closest to
    ``upper_mass`` (binary search on the cumulative distribution)."""
    base, top = bernoulli_cdf(lo, k, prior), bernoulli_cdf(hi, k, prior)
    mass = top - base
    if hi - lo < 2:
        raise ValueError("nothing to split")
    if mass <= 0:
        return (lo + hi) // 2
    goal = top - upper_mass * mass
    a, b = lo + 1, hi - 1
    while a < b:
        mid = (a + b) // 2
        if bernoulli_cdf(mid, k, prior) < goal:
            a = mid + 1
        else:
            b = mid
    # a is the smallest t with F(t) >= goal; its left neighbour may be closer
    if a - 1 > lo and abs(bernoulli_cdf(a - 1, k, prior) - goal) < abs(bernoulli_cdf(a, k, prior) - goal):
        return a - 1
    return a


def interval_marginals(lo: int, hi: int, k: int, prior: float) -> np.ndarray:
    """``P(z_j = 1 | V ∈ [lo, hi))`` for each bit under the product prior (exact, by prefix decomposition)."""
    def mass_bits(t: int) -> tuple[float, np.ndarray]:
        # P(V < t) and, per bit j, P(V < t and z_j = 1).
        total = 0.0
        ones = np.zeros(k)
        prefix = 1.0
        prefix_bits: list[int] = []
        for j in range(k):
            bit = (t >> (k - 1 - j)) & 1
            if bit:
                block = prefix * (1 - prior)  # prefix, then 0 at j, anything after
                total += block
                for i, b in enumerate(prefix_bits):
                    if b:
                        ones[i] += block
                ones[j + 1:] += block * prior  # free bits after j are 1 with probability prior
                prefix *= prior
            else:
                prefix *= 1 - prior
            prefix_bits.append(bit)
        return total, ones

    total_hi, ones_hi = mass_bits(hi) if hi < 1 << k else (1.0, np.full(k, prior))
    total_lo, ones_lo = mass_bits(lo)
    mass = total_hi - total_lo
    if mass <= 0:
        return np.full(k, prior)
    return np.clip((ones_hi - ones_lo) / mass, 0.0, 1.0)


def bits_of(value: int, k: int) -> np.ndarray:
    """The ``k`` bits of ``value``, most significant first."""
    return np.array([(value >> (k - 1 - j)) & 1 for j in range(k)], dtype=np.int64)


def as_fraction(x: float) -> Fraction:
    return Fraction(x)
