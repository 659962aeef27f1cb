"""The server's arithmetic: IEEE float64 (what real servers do) or φ-bit binary floating point (MPFR).

Paper 000 models a server that computes the log loss with φ-bit floats; ``mpfr:φ`` reproduces that model
(and, with a large φ, the arbitrary-precision model of its Theorem 1). In that mode the submitted decimal
strings are read at φ bits, every logarithm, sum and division is rounded to φ bits, and the result is a
:class:`decimal.Decimal` that carries every digit of the φ-bit value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scoring.errors import ConfigurationError

FLOAT64 = "float64"
_MPFR = re.compile(r"^mpfr:(\d+)$")


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
        if not 2 <= bits <= 1_000_000:
            raise ConfigurationError(f"MPFR precision must be between 2 and 1000000 bits, got {bits}")
        return cls(bits)

    @property
    def is_float64(self) -> bool:
        return self.bits is None

    def __str__(self) -> str:
        return FLOAT64 if self.bits is None else f"mpfr:{self.bits}"
