"""What paper 004's attacks may assume about the server: how far a released log loss can be from the exact
one, how to submit predictions at the server's precision, and how to read a released score back.

The paper assumes the exact score (Sections 2.1–2.3) or φ significant digits (Section 3). A real or emulated
server releases ``decimals`` places of a float64 or φ-bit MPFR computation, so every decoder here works with
an interval: ``N × released`` lies within :meth:`ServerModel.sum_tolerance` of the exact summed loss of the
submitted values. The bound is deliberately pessimistic (worst-case rounding, not typical rounding), so a
decoder that finds exactly one labeling in the interval can vouch for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from attacks.exact import local_precision, mpfr
from attacks.oracle import Oracle, Released
from attacks.result import AttackFailed
from scoring import Arithmetic

FLOAT64_BITS = 53
# numpy's pairwise sum adds blocks of up to 128 values one by one, then combines blocks pairwise.
_NUMPY_BLOCK = 128


@dataclass(frozen=True)
class ServerModel:
    """The public facts an attacker plans with: rows, clipping ``eps``, released ``decimals`` (``None`` =
    every digit), the server's mantissa bits (53 for float64, φ for ``mpfr:φ``) and an assumed bound on
    noise added to the released mean (0 for the paper's noiseless oracle)."""

    n_rows: int
    eps: float
    decimals: int | None
    bits: int
    is_float64: bool
    noise_bound: float = 0.0

    @classmethod
    def of(cls, oracle: Oracle, *, noise_bound: float = 0.0, bits: int | None = None) -> ServerModel:
        """Read the model off ``oracle``; its arithmetic (``"float64"`` or ``"mpfr:φ"``) is public like its
        decimals. ``bits`` overrides the mantissa width (e.g. when only a lower bound on φ is known)."""
        if oracle.metric != "binary_logloss":
            raise AttackFailed(f"paper 004's attacks read binary log loss; this leaderboard reports {oracle.metric!r}")
        if oracle.n_classes != 2:
            raise AttackFailed(f"paper 004's binary attacks need 2 classes, the leaderboard has {oracle.n_classes}")
        if noise_bound < 0:
            raise ValueError("noise_bound must be non-negative")
        arithmetic = Arithmetic.parse(str(getattr(oracle, "arithmetic", "float64")))
        server_bits = FLOAT64_BITS if arithmetic.bits is None else arithmetic.bits
        return cls(
            n_rows=oracle.n_rows,
            eps=float(oracle.eps),
            decimals=oracle.decimals,
            bits=server_bits if bits is None else bits,
            is_float64=arithmetic.is_float64,
            noise_bound=noise_bound,
        )

    @property
    def work_bits(self) -> int:
        """Precision for the attacker's own arithmetic: well beyond the server's."""
        return self.bits + 128

    @property
    def digits(self) -> int:
        """Significant digits of a submitted decimal string (MPFR servers): finer than the server reads."""
        return math.ceil(self.bits * math.log10(2)) + 6

    def sum_tolerance(self, loss_magnitude: Any, read_sensitivity: Any) -> Any:
        """An upper bound (an ``mpfr``) on ``|N × released − Σ exact row losses|``.

        ``loss_magnitude`` bounds ``Σ |row loss|`` over every labeling; ``read_sensitivity`` is
        ``Σ max(1, x/(1-x))`` over the rows, which turns the relative error of reading a prediction ``x`` at
        the server's precision into an error of its log. Terms: rounding to ``decimals`` places (``N/2 ×
        10^-d``), the server's rounding of logs, sum and division (worst case, doubled), the reading of the
        predictions, and ``N ×`` the assumed noise bound.
        """
        n = self.n_rows
        unit = mpfr(2) ** -self.bits
        accumulate = (_NUMPY_BLOCK + math.log2(max(n, 2)) + 8) if self.is_float64 else (n + 8)
        arithmetic = 2 * unit * (accumulate * mpfr(loss_magnitude) + 2 * mpfr(read_sensitivity))
        release = mpfr(n) * mpfr(10) ** -self.decimals / 2 * (1 + mpfr(2) ** -40) if self.decimals is not None else 0
        return release + arithmetic + n * mpfr(self.noise_bound)

    def encode(self, values: Sequence[Any]) -> list[Any]:
        """Predictions to submit: float64 values, or decimal strings finer than φ bits for an MPFR server."""
        if self.is_float64:
            return [float(v) for v in values]
        spec = f".{self.digits}e"
        return ["0.5" if v == mpfr("0.5") else format(v, spec) for v in values]

    def summed_loss(self, released: Released) -> Any:
        """``N × released`` at the attacker's precision; raises when nothing was released."""
        if released is None:
            raise AttackFailed("the leaderboard released no score for a probe, so the attack cannot decode it")
        with local_precision(self.work_bits):
            exact = mpfr(str(released)) if isinstance(released, Decimal) else mpfr(float(released))
            return exact * self.n_rows

    def logit_limit(self) -> float:
        """The largest ``|logit|`` a prediction may have without being clipped (with a factor-2 margin)."""
        return math.log((1 - 2 * self.eps) / (2 * self.eps))


def batches(n_rows: int, size: int) -> list[range]:
    """Consecutive row ranges of ``size`` (the last one may be shorter)."""
    return [range(start, min(start + size, n_rows)) for start in range(0, n_rows, size)]


