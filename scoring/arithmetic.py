"""The server's arithmetic: IEEE float64 (what real servers do) or φ-bit binary floating point (MPFR).

Paper 000 models a server that computes the log loss with φ-bit floats; ``mpfr:φ`` reproduces that model
(and, with a large φ, the arbitrary-precision model of its Theorem 1). In that mode the submitted decimal
strings are read at φ bits, every logarithm, sum and division is rounded to φ bits, and the result is a
:class:`decimal.Decimal` that carries every digit of the φ-bit value.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from scoring.errors import ConfigurationError

FLOAT64 = "float64"
_MPFR = re.compile(r"^mpfr:(\d+)$")
MAX_BITS = 1_000_000

#: Seconds one φ-bit logarithm of a submitted value takes (a row's costliest step; reading the value at φ bits is
#: cheaper) on the reference machine, rounded up: ``python -m benchmarks.mpfr_cap --table`` measures them.
#: Between two points the cost is interpolated on a log–log scale; below the first it is the first.
LOG_SECONDS = (
    (53, 1.2e-5), (256, 2.2e-5), (1_000, 3.5e-5), (3_000, 2.0e-4), (10_000, 8.0e-4), (30_000, 7.0e-3),
    (100_000, 4.0e-2), (300_000, 0.55), (1_000_000, 2.3),
)
#: The most a submission's φ-bit scoring may cost by that estimate (a quarter of the worker's default 120 s soft
#: time limit). A competition past it is refused at creation; a submission past it (a competition created before
#: the limit) fails before any label is read.
MAX_SCORING_SECONDS = 30.0


class ScoringWorkExceeded(ConfigurationError):
    """A submission's φ-bit scoring would cost more than :data:`MAX_SCORING_SECONDS`: decided from the shape of
    the submission and the competition's settings alone, so the message says nothing about the labels."""


def log_seconds(bits: int) -> float:
    """The estimated seconds of one ``bits``-bit logarithm (:data:`LOG_SECONDS`).

    >>> log_seconds(1_000) == 3.5e-5 and log_seconds(2) == log_seconds(53)
    True
    """
    if bits <= LOG_SECONDS[0][0]:
        return LOG_SECONDS[0][1]
    for (b0, s0), (b1, s1) in itertools.pairwise(LOG_SECONDS):
        if bits <= b1:
            t = (math.log(bits) - math.log(b0)) / (math.log(b1) - math.log(b0))
            return math.exp(math.log(s0) + t * (math.log(s1) - math.log(s0)))
    (b0, s0), (b1, s1) = LOG_SECONDS[-2:]
    slope = (math.log(s1) - math.log(s0)) / (math.log(b1) - math.log(b0))
    return s1 * (bits / b1) ** slope


@dataclass(frozen=True)
class Arithmetic:
    """``bits`` is ``None`` for IEEE float64, else the MPFR mantissa width φ."""

    bits: int | None = None

    @classmethod
    def parse(cls, spec: str) -> Arithmetic:
        """``"float64"`` or ``"mpfr:φ"`` with 2 ≤ φ ≤ 1,000,000."""
        if spec == FLOAT64:
            return cls(None)
        match = _MPFR.match(spec)
        if not match:
            raise ConfigurationError(f"unknown arithmetic {spec!r}; use 'float64' or 'mpfr:BITS' (e.g. mpfr:200)")
        bits = int(match.group(1))
        if not 2 <= bits <= MAX_BITS:
            raise ConfigurationError(f"MPFR precision must be between 2 and {MAX_BITS} bits, got {bits}")
        return cls(bits)

    @property
    def is_float64(self) -> bool:
        return self.bits is None

    def scoring_seconds(self, values: int) -> float:
        """The estimated worker seconds to score ``values`` submitted numbers (rows × columns × φ-bit metrics) in
        this arithmetic: 0 for float64 (vectorised, never the bottleneck)."""
        return 0.0 if self.bits is None else values * log_seconds(self.bits)

    def check_work(self, values: int, *, what: str, limit: float = MAX_SCORING_SECONDS) -> None:
        """Raise :class:`ScoringWorkExceeded` when scoring ``values`` numbers would cost more than ``limit``
        seconds (:meth:`scoring_seconds`); ``what`` says what was counted. Reads nothing but these numbers.

        >>> Arithmetic(1_000_000).check_work(400, what="400 rows × 1 column")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        scoring.arithmetic.ScoringWorkExceeded: mpfr:1000000 ... 400 values ... about 920 s ... mpfr:130145 ...
        >>> Arithmetic(200).check_work(25_000, what="25,000 rows × 1 column")  # 0.6 s: fine
        """
        seconds = self.scoring_seconds(values)
        if seconds <= limit:
            return
        raise ScoringWorkExceeded(
            f"{self} arithmetic on {values:,} values ({what}) takes about {seconds:,.0f} s of a worker per "
            f"submission (estimated), over the limit of {limit:g} s; {_fits(values, limit)}"
        )

    def __str__(self) -> str:
        return FLOAT64 if self.bits is None else f"mpfr:{self.bits}"


def _fits(values: int, limit: float) -> str:
    """What would fit the limit: the most bits for these values (bisection on the monotone estimate)."""
    if values * log_seconds(2) > limit:
        return "only float64 fits this many values"
    low, high = 2, MAX_BITS
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if values * log_seconds(middle) <= limit else (low, middle - 1)
    return f"at most mpfr:{low} fits these rows"
