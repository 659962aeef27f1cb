"""The one module that imports gmpy2 (the big-number backend), as SymPy's ``external/gmpy.py`` does.

Everything that needs arbitrary-precision integers or MPFR floats — the φ-bit server arithmetic of the
scoring core and the exact arithmetic of the attacks — goes through these names, so the backend can be
swapped or pinned in one place.
"""

from __future__ import annotations

import gmpy2
from gmpy2 import mpfr, mpq, mpz

__all__ = [
    "gmpy2",
    "local_precision",
    "mpfr",
    "mpfr_from_text",
    "mpfr_to_decimal_text",
    "mpq",
    "mpz",
]


def local_precision(bits: int) -> gmpy2.context:
    """A context manager in which MPFR arithmetic uses ``bits`` of mantissa, rounding to nearest."""
    return gmpy2.context(gmpy2.get_context(), precision=bits, round=gmpy2.RoundToNearest)


def mpfr_from_text(text: str, bits: int) -> mpfr:
    """Parse a decimal string into a ``bits``-bit binary float, correctly rounded."""
    return mpfr(text, bits)


def mpfr_to_decimal_text(value: mpfr) -> str:
    """The shortest decimal string that reads back to exactly ``value`` at its precision."""
    bits = value.precision
    digits = int(bits * 0.30103) + 2
    return format(value, f".{digits}g")
