"""Exact and high-precision arithmetic for the attacks: primes, big integers, MPFR logs and exps.

The attacks import their number theory from here; this module in turn takes gmpy2 only through
``leaderboard.scoring.bignum``, the one module that imports it.
"""

from __future__ import annotations

from functools import lru_cache

from leaderboard.scoring.bignum import gmpy2, local_precision, mpfr, mpq, mpz

__all__ = ["first_primes", "gmpy2", "is_prime", "local_precision", "mpfr", "mpq", "mpz", "next_prime"]


def is_prime(n: int) -> bool:
    """Primality (deterministic below 2^64, BPSW-probable above, as gmpy2 documents)."""
    return bool(gmpy2.is_prime(n))


def next_prime(n: int) -> int:
    """The smallest prime strictly greater than ``n``."""
    return int(gmpy2.next_prime(n))


@lru_cache(maxsize=64)
def first_primes(count: int) -> tuple[int, ...]:
    """The first ``count`` primes.

    >>> first_primes(5)
    (2, 3, 5, 7, 11)
    """
    primes: list[int] = []
    p = 1
    while len(primes) < count:
        p = next_prime(p)
        primes.append(p)
    return tuple(primes)
