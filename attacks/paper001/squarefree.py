"""CloSqFree (paper 001, §3.2, Algorithm 1): the nearest square-free integer whose prime factors are among
the first m primes — the decoder of Construction 2, where a labeling is the integer ``Π_{σ_i = 1} p_i``.

``SqFree(m)`` is the set of square-free integers with largest prime factor at most ``p_m`` (1, the empty
product, included). We generalise it to K classes: ``Free(m, K)`` holds the products ``Π p_i^{e_i}`` with every
exponent below K (K = 2 is ``SqFree(m)``), the integers Construction 2's prime powers produce.

Two corrections to Algorithm 1 as printed: its step 1 returns 2 whenever ``x ≤ 2`` or ``m = 2``, which
forgets 1 (the all-zero labeling) and the other members of ``SqFree(2) = {1, 2, 3, 6}``; and its loop tries
``⌊x⌋ − k`` before ``⌈x⌉ + k``, which returns the farther one when x's fractional part exceeds 1/2. Here
candidates are tried in order of their distance to x (ties to the smaller), so the answer is the nearest
member, as its definition ``argmin_{y ∈ SqFree(m)} |x − y|`` says; ``radius`` bounds the search (the decoder
only looks where the released score's window allows).

>>> closest_free(164.7, (2, 3, 5, 7, 11))
165
>>> closest_free(8.2, (2, 3, 5, 7, 11)), closest_free(8.2, (2, 3, 5, 7, 11), k=4)
(7, 8)
>>> closest_free(1e9, (2, 3, 5)), closest_free(0.3, (2, 3, 5))
(30, 1)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from attacks.exact import gmpy2, local_precision, mpfr


def free_exponents(n: int, primes: Sequence[int], k: int = 2) -> list[int] | None:
    """The exponents of ``primes`` in ``n`` if ``n ∈ Free(m, K)`` (each below ``k``, no other factor), else
    ``None``. Trial division by the m known primes: O(m·K) big-integer divisions.

    >>> free_exponents(165, (2, 3, 5, 7, 11)), free_exponents(12, (2, 3, 5)), free_exponents(12, (2, 3, 5), k=3)
    ([0, 1, 1, 0, 1], None, [2, 1, 0])
    """
    if n < 1:
        return None
    remaining = int(n)
    exponents = []
    for p in primes:
        e = 0
        while remaining % p == 0:
            remaining //= p
            e += 1
            if e >= k:
                return None
        exponents.append(e)
    return exponents if remaining == 1 else None


def free_product(primes: Sequence[int], k: int = 2) -> int:
    """The largest member of ``Free(m, K)``: ``Π p_i^(K−1)`` (for K = 2 the primorial ``P`` of Theorem 2)."""
    return math.prod(p ** (k - 1) for p in primes)


def closest_free(x: Any, primes: Sequence[int], k: int = 2, *, radius: Any = None, bits: int = 256) -> int | None:
    """``CloSqFree(x, m)`` (Algorithm 1; ``k`` > 2: the K-class generalisation): the member of
    ``Free(m, K)`` nearest to the real ``x`` (a float, an int or an MPFR number), ties to the smaller; ``None``
    when none lies within ``radius`` of x.

    Step 2 of the algorithm: ``P = Π p^(K−1)`` is the largest member, so any ``x ≥ P`` answers P. Otherwise
    the loop walks outward from x; members of ``SqFree(m)`` have density ``Π(1 − 1/p²)·…`` among the
    smooth numbers, so near the products a labeling produces the walk is short. Without a radius the walk
    stops at 1 at the latest (1 is always a member).
    """
    with local_precision(bits):
        value = mpfr(x)
        top = free_product(primes, k)
        limit = None if radius is None else mpfr(radius)

        def within(candidate: int) -> bool:
            return limit is None or abs(mpfr(candidate) - value) <= limit

        if value >= top:
            return top if within(top) else None
        if value <= 1:
            return 1 if within(1) else None
        below = int(gmpy2.floor(value))
        above = below if mpfr(below) == value else below + 1
        while True:
            down = abs(value - below) if below >= 1 else None
            up = abs(mpfr(above) - value) if above <= top else None
            if down is None and up is None:
                return None
            take_down = up is None or (down is not None and down <= up)
            candidate = below if take_down else above
            if not within(candidate):
                return None
            if free_exponents(candidate, primes, k) is not None:
                return candidate
            if take_down:
                if below == above:
                    above += 1
                below -= 1
            else:
                above += 1


def closest_free_brute(x: float, primes: Sequence[int], k: int = 2) -> int:
    """Reference for tests: every member of ``Free(m, K)`` enumerated, the nearest to x (ties to the smaller)."""
    members = sorted(math.prod(p**e for p, e in zip(primes, es, strict=True))
                     for es in itertools.product(range(k), repeat=len(primes)))
    return min(members, key=lambda y: (abs(y - x), y))
