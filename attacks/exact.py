"""Exact and high-precision arithmetic for the attacks: primes, big integers, MPFR logs and exps.

The attacks import their number theory from here; this module in turn takes gmpy2 only through
``scoring.bignum``, the one module that imports it.
"""

from __future__ import annotations

from functools import lru_cache

from scoring.bignum import gmpy2, local_precision, mpfr, mpq, mpz

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


# --- Paper 004 (Aggarwal et al., 2020) helpers -------------------------------------------------------------
__all__ += ["lower_twin_primes"]


@lru_cache(maxsize=64)
def lower_twin_primes(count: int, start: int = 5) -> tuple[int, ...]:
    """The first ``count`` primes ``p ≥ start`` with ``p + 2`` also prime (OEIS A001359, from 5 by default,
    as paper 004's Algorithm 1 uses them: from 5 on, ``p + 2`` is never another member, so the fractions
    ``p / (p + 2)`` are in lowest terms and share no factor).

    >>> lower_twin_primes(5)
    (5, 11, 17, 29, 41)
    """
    found: list[int] = []
    p = start - 1
    while len(found) < count:
        p = next_prime(p)
        if is_prime(p + 2):
            found.append(p)
    return tuple(found)
