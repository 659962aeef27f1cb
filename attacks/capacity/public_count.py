"""How many rows the public split holds, measured from released scores (``capacity_split`` needs it exactly:
the released mean is a sum divided by it).

A *reciprocal pair* is a submission ``q`` on a set ``R`` of rows (the others at ``1/K``) followed by
``q' ∝ 1/q`` on the same rows: a row's two losses then add up to ``s = ln Z + ln Z'`` (``Z = Σ q``,
``Z' = Σ 1/q``) *whatever its label* (for binary log loss, ``q' = 1 - q``: the mirrored pair of
:mod:`attacks.capacity.split`). The two released means add up to ``2·ln K + x·(s - 2·ln K)/n_pub`` with
``x = |R ∩ public|``, so:

1. single rows are paired until one is public (its pair's total moves): that brackets ``n_pub`` to within
   about ``n_pub²·δ/s`` (``δ`` the released resolution) — exact up to a few thousand public rows at 5 decimals;
2. while the bracket holds more than one integer, a random set ``R`` small enough that ``x`` is pinned by
   the bracket is paired; the exact ``x`` narrows the bracket ``x``-fold.

Every bound is rigorous (losses at 128 bits from the floats sent, both ends of the released rounding, the
assumed noise bound and a float64 allowance); a contradiction or no result within ``max_queries`` raises
:class:`AttackFailed`. Expected cost about ``2/f`` queries for a public fraction ``f`` (7 at 30 %).
"""

from __future__ import annotations

import math

import numpy as np

from attacks.capacity.decoder import PRECISION_BITS
from attacks.capacity.kary import to_submission
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed

PAIR_GAP = 24.0
"""``-ln`` of the small probability of a paired row (``s ≈ PAIR_GAP``)."""


def pair_predictions(n_rows: int, classes: int | None, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A reciprocal pair on ``rows``: binary ``p = 2^-35`` and ``1 - p`` (both exact), or for K classes
    ``q ∝ (1, e^-g, …, e^-g)`` and ``q' ∝ (e^-g, 1, …, 1)``."""
    if classes is None:
        first = np.full(n_rows, 0.5)
        first[rows] = 2.0**-35
        second = 1.0 - first
        return first, second
    small = math.exp(-PAIR_GAP)
    q = np.array([1.0] + [small] * (classes - 1))
    first = np.full((n_rows, classes), 1.0 / classes)
    second = first.copy()
    first[rows] = q / q.sum()
    second[rows] = (1.0 / q) / (1.0 / q).sum()
    return to_submission(first)[0], to_submission(second)[0]


def pair_sums(first: np.ndarray, second: np.ndarray, eps: float) -> tuple[float, float]:
    """The smallest and largest (over labels) of a paired row's two losses added up, minus ``2·ln K``
    (exact, 128 bits, after clipping and renormalisation as the server does)."""
    rows = [first, second]
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        lo_clip, hi_clip = mpfr(eps), one - mpfr(eps)
        losses = []
        for row in rows:
            values = [1.0 - float(row), float(row)] if np.ndim(row) == 0 else [float(v) for v in row]
            clipped = [min(max(mpfr(v), lo_clip), hi_clip) for v in values]
            total = sum(clipped, mpfr(0))
            losses.append([gmpy2.log(total) - gmpy2.log(v) for v in clipped])
        k = len(losses[0])
        sums = [losses[0][c] + losses[1][c] - 2 * gmpy2.log(mpfr(k)) for c in range(k)]
        return float(min(sums)), float(max(sums))


def estimate_public_count(
    oracle: Oracle, classes: int | None, *, noise_bound: float = 0.0, max_queries: int = 80, seed: int = 0
) -> tuple[int, int]:
    """``(n_pub, queries spent)`` measured with reciprocal pairs (see the module); ``classes=None`` for a
    binary log-loss board."""
    n = oracle.n_rows
    started = oracle.queries
    decimals = oracle.decimals
    half = (0.5 * 10.0**-decimals if decimals is not None else 0.0) + noise_bound
    k_log = 2.0 * math.log(classes or 2)
    probe_first, probe_second = pair_predictions(1, classes, np.array([0]))
    s_lo, s_hi = pair_sums(probe_first[0], probe_second[0], oracle.eps)  # a 1-D pair reads (1 - p, p)

    def observe(rows: np.ndarray) -> tuple[float, float]:
        """Bounds on ``x / n_pub`` from one pair on ``rows``."""
        first, second = pair_predictions(n, classes, rows)
        a, b = oracle.submit(first), oracle.submit(second)
        if a is None or b is None:
            raise AttackFailed("the leaderboard released nothing for a calibration query; capacity_split needs "
                               "every score")
        total = float(a) + float(b) - k_log
        slack = 2 * half * (1 + 1e-9) + 1e-11 * (abs(float(a)) + abs(float(b)) + 1.0)
        return (total - slack) / s_hi, (total + slack) / s_lo

    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    lo, hi = 1.0, float(n)
    found_public = False
    scanned = 0
    while True:
        if oracle.queries - started + 2 > max_queries:
            raise AttackFailed(f"the number of public rows is still between {math.ceil(lo)} and {math.floor(hi)} "
                               f"after {oracle.queries - started} calibration queries")
        if not found_public:
            if scanned >= n:
                raise AttackFailed("no row moved the public score: the board scores none of the rows")
            r_lo, r_hi = observe(order[scanned : scanned + 1])
            scanned += 1
            if r_lo <= 0.0:  # the pair's total did not move: this row is private (x = 0), or the move is unseen
                if r_hi * hi < 0.5:
                    continue
                raise AttackFailed("a calibration pair is too coarse for this board's released precision")
            found_public = True
            lo, hi = max(lo, 1.0 / r_hi), min(hi, 1.0 / r_lo)
        else:
            # x = |R ∩ public| lies in [r_lo·lo, r_hi·hi], of width about (x/n_pub)·(hi - lo) with
            # x ≈ |R|·n_pub/N: |R| = N / (2·(hi - lo)) keeps it under one half.
            size = max(1, min(n, int(0.5 * n / max(hi - lo, 1e-9))))
            rows = rng.choice(n, size=size, replace=False)
            r_lo, r_hi = observe(rows)
            x_lo, x_hi = math.ceil(r_lo * lo - 1e-9), math.floor(r_hi * hi + 1e-9)
            if x_lo != x_hi:
                continue
            if x_lo == 0:
                continue
            lo, hi = max(lo, x_lo / r_hi), min(hi, x_lo / r_lo)
        if lo > hi + 1e-9:
            raise AttackFailed("the calibration pairs contradict each other: the board does not score as modelled")
        low, high = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
        if low == high:
            return low, oracle.queries - started
        if low > high:
            raise AttackFailed("no whole number of public rows fits the calibration pairs")
