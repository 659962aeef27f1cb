"""One model of the server every attack plans and decodes with: what a participant knows about how a score
is computed and released, and one rigorous bound on how far a released score can sit from the exact one.

The server (``scoring``) scores ``N`` rows (``n_scored``: the public split's size when only that is
released): every row's loss is a logarithm of a clipped prediction, the losses are summed and divided by
``N``, the chain may add noise, and the result is released at ``decimals`` places (or every digit). It
computes in IEEE float64 (``numpy.mean``, a pairwise sum) or in φ-bit MPFR (``scoring.metrics.logloss_mpfr``,
a sequential sum). Attacks reason on the *N-scale*: a released score ``r`` says that the exact summed loss
``Σ_i loss_i`` lies within :meth:`ServerModel.error_bound` of ``N·r``. The bound adds up

* the rows: each loss as the server evaluates it is within :meth:`ServerModel.row_error` of the exact value
  of the prediction it read (4 ulp for numpy's float64 logarithms; one rounding of ``1 − p`` and one of the
  logarithm at φ bits), plus, for predictions the server reads at its own precision, :meth:`read_error`;
* the sum: every row's loss goes through at most :meth:`summation_depth` roundings (numpy's pairwise
  summation in 8-way unrolled blocks of 128: ``⌈log2 N⌉ + 13``; MPFR adds the rows one by one: ``N + 2``),
  each of relative size ``u = 2^-φ`` (φ = 53 for float64), so at most ``depth·u·Σ|loss_i|``;
* the division by ``N``: ``2u·N·|mean|``; and writing a full-precision φ-bit mean as decimal text
  (:meth:`text_error`);
* the release: half a unit of the released decimals per row, ``N/2 × 10^-decimals`` (nothing when every
  digit is released), read back exactly by :meth:`observe`;
* the noise: ``N ×`` the assumed bound on what the chain adds to the mean (``noise_bound``; 0 = none).

A decoder that vouches for a unique labeling multiplies the roundings (not the released decimals nor the
noise bound) by :data:`CERTIFIED_MARGIN` (paper 000's probes and paper 004's decoders do); the capacity
lattice plans with the bound as it is and checks its claims with a confirmation query. The families add only
what is theirs: paper 000 and 004 their own working precision and submitted digits, the capacity attack its
lattice (unit and weight cap).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, Self

from attacks.catalogue import BoardFacts
from attacks.exact import local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed
from scoring import Arithmetic

Big = Any  # an MPFR value (gmpy2 ships no usable stubs)

FLOAT64_BITS = 53
PAIRWISE_DEPTH = 13
"""Roundings numpy's pairwise summation adds to ``⌈log2 N⌉`` (8-way unrolled blocks of 128 rows)."""
LOG_ULPS = 4
"""numpy's float64 logarithms are within this many ulp of the exact value."""
FORMULA_OPERATIONS = 16
"""The most elementary operations a paper-001 Bregman loss spends on one row (see ``formula_row_error``)."""
CERTIFIED_MARGIN = 2
"""A decoder that vouches for a unique labeling doubles every rounding bound (paper 000's and 004's)."""


@dataclass(frozen=True)
class ServerModel:
    """What a participant knows about the server: ``n_rows`` (N), ``n_classes``, the clipping ``eps``, the
    released ``decimals`` (``None``: every digit), the arithmetic (``bits=None``: IEEE float64, else the
    MPFR mantissa width φ), an assumed bound on the noise added to the released mean, and ``n_scored``, the
    rows the released mean is over (``None``: all N)."""

    n_rows: int
    n_classes: int = 2
    eps: float = 1e-15
    decimals: int | None = None
    bits: int | None = None
    noise_bound: float = 0.0
    n_scored: int | None = None

    @classmethod
    def of(
        cls, oracle: Oracle, *, noise_bound: float = 0.0, bits: int | None = None, n_scored: int | None = None
    ) -> Self:
        """Read the model off ``oracle``: its public facts, its arithmetic (``"float64"`` or ``"mpfr:φ"``,
        public like its decimals) and its released precision. ``bits`` makes the attacker assume a φ-bit
        MPFR server (e.g. when only a lower bound on φ is known)."""
        if noise_bound < 0:
            raise ValueError("noise_bound must be non-negative")
        arithmetic = Arithmetic.parse(BoardFacts.of(oracle).arithmetic)
        return cls(
            n_rows=oracle.n_rows,
            n_classes=oracle.n_classes,
            eps=float(oracle.eps),
            decimals=oracle.decimals,
            bits=arithmetic.bits if bits is None else bits,
            noise_bound=float(noise_bound),
            n_scored=n_scored,
        )

    def with_noise_bound(self, noise_bound: float) -> Self:
        return replace(self, noise_bound=float(noise_bound))

    @property
    def is_float64(self) -> bool:
        return self.bits is None

    @property
    def phi(self) -> int:
        """Mantissa bits of the server's arithmetic (53 for float64)."""
        return FLOAT64_BITS if self.bits is None else self.bits

    @property
    def scored(self) -> int:
        """Rows in the released mean."""
        return self.n_rows if self.n_scored is None else self.n_scored

    @property
    def bound_bits(self) -> int:
        """Precision the bounds are computed at (they never underflow: MPFR's exponent range is huge)."""
        return max(128, self.phi + 64)

    def roundoff(self) -> Big:
        """The server's unit roundoff ``u = 2^-φ``, as an MPFR number."""
        with local_precision(self.bound_bits):
            return mpfr(2) ** (-self.phi)

    def release_half_unit(self) -> float:
        """Half a unit of the released decimals (0 when the full value is released)."""
        return 0.0 if self.decimals is None else 0.5 * 10.0 ** (-self.decimals)

    def summation_depth(self) -> int:
        """The most roundings one row's loss goes through in the server's sum of the scored rows."""
        n = self.scored
        if self.is_float64:
            return math.ceil(math.log2(max(n, 2))) + PAIRWISE_DEPTH
        return n + 2

    def row_error(self, loss: Any, classes: int | None = None) -> Big:
        """Bound on the server's error in one row's loss of (about) ``loss``, from the prediction it read.

        A binary log-loss row (``classes=None``): float64 logarithms within :data:`LOG_ULPS` ulp; at φ bits
        one rounding of ``1 − p`` and one of the logarithm. A row of ``classes`` probabilities, clipped and
        renormalised before the logarithm: ``(2K + 8)·u`` more in float64, one more rounding at φ bits."""
        with local_precision(self.bound_bits):
            u = self.roundoff()
            magnitude = abs(mpfr(loss))
            if self.is_float64:
                ulps = LOG_ULPS * mpfr(math.ulp(float(magnitude)))
                return ulps if classes is None else (2 * classes + 8) * u + ulps
            return u * (magnitude + (2 if classes is None else 4))

    def formula_row_error(self, terms: Any, classes: int | None = None) -> Big:
        """Bound on the server's error in one row's loss computed by a short formula of elementary operations
        (reciprocals, logarithms, powers, a few sums: the Bregman losses of paper 001) whose parts add up to
        ``terms`` in absolute value: each operation within :data:`LOG_ULPS` ulp, 16 of them at most, plus, for
        a row of ``classes`` probabilities renormalised first (the parser's and the metric's rule), ``2K`` more
        roundings of relative size ``u`` on every part."""
        with local_precision(self.bound_bits):
            operations = FORMULA_OPERATIONS + (0 if classes is None else 2 * classes)
            return operations * LOG_ULPS * 2 * self.roundoff() * abs(mpfr(terms)) + mpfr(2) ** -1074

    def rows_error(self, magnitude: Any, count: int, classes: int | None = None) -> Big:
        """Bound on the sum of :meth:`row_error` over ``count`` rows whose losses add up to at most
        ``magnitude`` (an ulp of ``x`` is at most ``2u·|x|``)."""
        with local_precision(self.bound_bits):
            u = self.roundoff()
            total = abs(mpfr(magnitude))
            if self.is_float64:
                fixed = (2 * classes + 8) * u * count if classes is not None else mpfr(0)
                return fixed + LOG_ULPS * (2 * u * total + count * mpfr(2) ** -1074)
            return u * (total + (2 if classes is None else 4) * count)

    def read_error(self, sensitivity: Any) -> Big:
        """Bound on what reading predictions at the server's precision moves the summed loss by, for
        ``sensitivity = Σ max(1, x/(1−x))`` over the rows (a relative error ``u`` of ``x`` moves ``ln x`` by
        ``u`` and ``ln(1−x)`` by ``u·x/(1−x)``; computing ``1 − x`` rounds once more)."""
        with local_precision(self.bound_bits):
            return 2 * self.roundoff() * mpfr(sensitivity)

    def arithmetic_error(self, magnitude: Any, rows: Any = 0, mean: Any = None) -> Big:
        """Bound on ``|N·mean − Σ loss_i|`` from the server's arithmetic: ``rows`` (the rows' own errors,
        :meth:`row_error`), the sum (``depth·u`` of ``magnitude ≥ Σ|loss_i|``) and the division by N of a
        mean of at most ``|mean|`` (default ``magnitude / N``)."""
        with local_precision(self.bound_bits):
            u = self.roundoff()
            total = mpfr(magnitude)
            return mpfr(rows) + self.summation_depth() * u * total * mpfr(1.001) + 2 * u * self._n_mean(total, mean)

    def text_error(self, magnitude: Any, mean: Any = None) -> Big:
        """Bound on ``N·|released − mean|`` from how the released value is written and read back: a
        full-precision φ-bit mean as its shortest decimal text (within one ulp of it), a release at more
        decimals than a double carries (> 15) as the nearest double; 0 otherwise (:meth:`observe` reads a
        float64 or a decimal of at most 15 places exactly)."""
        if self.decimals is None and not self.is_float64:
            ulp = 2 * self.roundoff()
        elif self.decimals is not None and self.decimals > 15:
            ulp = mpfr(2) ** (1 - FLOAT64_BITS)
        else:
            return mpfr(0)
        with local_precision(self.bound_bits):
            return ulp * self._n_mean(mpfr(magnitude), mean)

    def release_error(self) -> Big:
        """Bound on ``N·|released − mean|`` from the released decimals (both ends of the rounding interval
        included; 0 when every digit is released)."""
        if self.decimals is None:
            return mpfr(0)
        with local_precision(self.bound_bits):
            return self.scored * mpfr(10) ** (-self.decimals) / 2 * (1 + mpfr(2) ** -50)

    def noise_error(self) -> Big:
        """``N ×`` the assumed bound on the noise added to the released mean."""
        with local_precision(self.bound_bits):
            return self.scored * mpfr(self.noise_bound)

    def error_bound(self, magnitude: Any, rows: Any = 0, *, mean: Any = None, margin: int = 1) -> Big:
        """The bound on ``|N·released − Σ_i exact loss_i|`` (see the module docstring) for scored rows whose
        losses add up to at most ``magnitude`` in absolute value, whose own evaluation errors add up to
        ``rows``, and whose mean is at most ``|mean|`` (default ``magnitude / N``): the server's roundings
        (:meth:`arithmetic_error`, :meth:`text_error`), times ``margin`` (:data:`CERTIFIED_MARGIN` for a
        decoder that certifies a unique labeling), plus the released decimals and the noise bound."""
        with local_precision(self.bound_bits):
            roundings = self.arithmetic_error(magnitude, rows, mean) + self.text_error(magnitude, mean)
            return margin * roundings + self.release_error() + self.noise_error()

    def _n_mean(self, total: Big, mean: Any) -> Big:
        return total if mean is None else self.scored * abs(mpfr(mean))

    def observe(self, released: float | Decimal | None, bits: int | None = None) -> Big:
        """The released score, exactly, as an MPFR number (at ``bits``, default :attr:`bound_bits`): a
        ``Decimal`` as given; a float released at ``decimals`` places is the decimal its shortest text shows
        (the float is only that decimal's nearest double); a full-precision float is itself. Nothing released
        is a failure of the attack's assumptions."""
        if released is None:
            raise AttackFailed("the leaderboard released no score for a probe; this attack needs every score")
        with local_precision(bits or self.bound_bits):
            if isinstance(released, Decimal):
                return mpfr(str(released))
            value = float(released)
            if self.decimals is not None and self.decimals <= 15 and math.isfinite(value):
                return mpfr(str(Decimal(repr(value))))
            return mpfr(value)
