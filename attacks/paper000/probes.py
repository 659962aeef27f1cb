"""Probes for paper 000's attacks: a prediction vector plus everything the attacker can say about the score
the server will release for it — each batch row's loss under every label, computed exactly from the values
the server will actually read, and a rigorous bound on the server's rounding (the *window*).

The attacker reproduces the server's reading of its own submission (an IEEE float64 is read exactly; under
``mpfr:φ`` a decimal string is rounded to φ bits, which the attacker can do too), so the only unknowns are
the labels, the server's rounding of logarithms, sums and the division by N, the released decimals, and any
noise bound τ. All bounds are kept on the *N-scale* (``N·score``, the summed loss) in MPFR, so a precision of
a million bits does not underflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed

Big = Any  # an MPFR value (gmpy2 ships no usable stubs)

FLOAT64_BITS = 53
SAFETY = 2  # every rounding bound below is doubled


@dataclass(frozen=True)
class ServerModel:
    """What a participant knows about how a score is computed and released: N, K, the clipping ``eps``, the
    released decimals, the arithmetic (``bits=None`` is IEEE float64) and an assumed noise bound ``tau``."""

    n_rows: int
    n_classes: int
    eps: float
    decimals: int | None
    bits: int | None = None
    tau: float = 0.0

    @classmethod
    def of(cls, oracle: Oracle, *, tau: float = 0.0) -> ServerModel:
        arithmetic = str(getattr(oracle, "arithmetic", "float64"))
        bits = None if arithmetic == "float64" else int(arithmetic.split(":", 1)[1])
        return cls(oracle.n_rows, oracle.n_classes, float(oracle.eps), oracle.decimals, bits, float(tau))

    def with_tau(self, tau: float) -> ServerModel:
        return replace(self, tau=float(tau))

    @property
    def phi(self) -> int:
        """Mantissa bits of the server's arithmetic (53 for float64)."""
        return FLOAT64_BITS if self.bits is None else self.bits

    @property
    def work_bits(self) -> int:
        """The attacker's own working precision: comfortably above the server's."""
        return max(160, self.phi + 96)

    @property
    def text_digits(self) -> int:
        """Significant digits of the decimal strings submitted to an MPFR server."""
        return math.ceil(self.phi * 0.30103) + 3

    def unit(self) -> Big:
        """The server's unit roundoff 2^-φ, as an MPFR number (never underflows)."""
        with local_precision(self.work_bits):
            return mpfr(2) ** (-self.phi)

    def release_half_unit(self) -> float:
        """Half a unit of the released decimals (0 when the full value is released)."""
        return 0.0 if self.decimals is None else 0.5 * 10.0 ** (-self.decimals)

    def observe(self, released: float | Decimal | None) -> Big:
        """The released score as an MPFR number; nothing released is a failure of the attack's assumptions."""
        if released is None:
            raise AttackFailed("the leaderboard released no score for a probe; this attack needs every score")
        with local_precision(self.work_bits):
            return mpfr(str(released)) if isinstance(released, Decimal) else mpfr(float(released))

    def window(self, probe: Probe, score: Big | None = None) -> Big:
        """Bound ``W`` on ``|N·released − Σ_i loss_i(σ_i)|`` for the true labeling σ, given the released
        ``score`` (or, for planning, the largest score the probe can produce)."""
        n = self.n_rows
        with local_precision(self.work_bits):
            u = self.unit()
            top = probe.max_total / n if score is None else abs(score)
            if self.bits is None:  # numpy's pairwise summation: ~log2(N) levels plus an 8-way unrolled leaf
                sum_error = (math.ceil(math.log2(max(n, 2))) + 20) * u * probe.max_total
            else:  # logloss_mpfr adds the rows one by one, each partial sum rounded to φ bits
                sum_error = (n + 2) * u * probe.max_total
            division_error = 4 * u * n * top
            release = n * (mpfr(self.release_half_unit()) + 4 * mpfr(2) ** -FLOAT64_BITS * top)
            if self.bits is not None and self.decimals is None:
                release = n * 4 * u * top  # the Decimal carries every digit of the φ-bit value
            own = mpfr(2) ** (16 - self.work_bits) * (probe.max_total + 1)
            noise = n * mpfr(self.tau)
            return SAFETY * (probe.row_error + sum_error + division_error) + release + noise + own


@dataclass(frozen=True)
class Probe:
    """One query: ``cells[r]`` is submitted for row ``rows[r]``, ``other_cell`` for every other row.

    ``table[r][c]`` is batch row r's loss if its label is c, exactly as the server will compute it before
    rounding; the rows outside the batch add ``other_loss`` whatever their labels. ``row_error`` bounds the
    server's per-row rounding summed over all N rows; ``max_total`` is the largest summed loss possible.
    """

    n_rows: int
    rows: np.ndarray
    cells: tuple[Any, ...]
    other_cell: Any
    table: tuple[tuple[Big, ...], ...]
    other_loss: Big
    row_error: Big
    max_total: Big
    cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        return len(self.cells)

    def at(self, rows: np.ndarray) -> Probe:
        """The same probe placed on other rows (the loss is invariant to where the batch sits)."""
        if len(rows) != self.size:
            raise ValueError(f"a probe for {self.size} rows cannot be placed on {len(rows)} rows")
        return replace(self, rows=np.asarray(rows, dtype=np.int64))

    def predictions(self) -> Any:
        """The full prediction vector (or matrix) in row order, as the oracle takes it."""
        if isinstance(self.other_cell, float):
            vector = np.full(self.n_rows, self.other_cell, dtype=np.float64)
            vector[self.rows] = np.asarray(self.cells, dtype=np.float64)
            return vector
        if isinstance(self.other_cell, tuple) and isinstance(self.other_cell[0], float):
            matrix = np.tile(np.asarray(self.other_cell, dtype=np.float64), (self.n_rows, 1))
            if self.size:
                matrix[self.rows] = np.asarray(self.cells, dtype=np.float64)
            return matrix
        out: list[Any] = [self.other_cell] * self.n_rows
        for row, cell in zip(self.rows.tolist(), self.cells, strict=True):
            out[row] = cell
        return out

    def offsets(self, work_bits: int) -> list[list[Big]]:
        """``d[r][c] = table[r][c] − table[r][0]``: what label c adds to the summed loss over label 0."""
        with local_precision(work_bits):
            return [[loss - losses[0] for loss in losses] for losses in self.table]

    def base(self, work_bits: int) -> Big:
        """The summed loss when every batch row has label 0."""
        with local_precision(work_bits):
            total = self.other_loss
            for losses in self.table:
                total += losses[0]
            return total


def _read_binary(model: ServerModel, value: Big) -> tuple[Any, Big]:
    """The cell to submit for probability ``value`` and the clipped probability the server will read."""
    if model.bits is None:
        submitted = float(value)
        clipped = min(max(submitted, model.eps), 1.0 - model.eps)
        with local_precision(model.work_bits):
            return submitted, mpfr(clipped)
    with local_precision(model.work_bits):
        text = format(mpfr(value), f".{model.text_digits}e")
    with local_precision(model.bits):
        eps = mpfr(repr(model.eps))
        read = mpfr(text)
        clipped = min(max(read, eps), mpfr(1) - eps)
    return text, clipped


def binary_probe(model: ServerModel, probabilities: list[Big], rows: np.ndarray | None = None) -> Probe:
    """A binary probe: row ``rows[r]`` gets probability ``probabilities[r]`` of label 1, the others 1/2.

    >>> model = ServerModel(n_rows=3, n_classes=2, eps=1e-15, decimals=None)
    >>> probe = binary_probe(model, [mpfr(2) / 3])
    >>> probe.predictions().tolist()
    [0.6666666666666666, 0.5, 0.5]
    """
    rows = np.arange(len(probabilities)) if rows is None else np.asarray(rows, dtype=np.int64)
    cells: list[Any] = []
    table: list[tuple[Big, ...]] = []
    half_cell, half = _read_binary(model, mpfr(1) / 2)
    with local_precision(model.work_bits):
        u = model.unit()
        row_error = mpfr(0)
        max_total = mpfr(0)
        for value in probabilities:
            cell, read = _read_binary(model, value)
            losses = (-gmpy2.log(1 - read), -gmpy2.log(read))
            cells.append(cell)
            table.append(losses)
            row_error += _binary_row_error(model, u, max(losses))
            max_total += max(losses)
        others = model.n_rows - len(probabilities)
        other_row = -gmpy2.log(half)
        row_error += others * _binary_row_error(model, u, other_row)
        max_total += others * other_row
        other_loss = others * other_row
        return Probe(model.n_rows, rows, tuple(cells), half_cell, tuple(table), other_loss, row_error, max_total)


def _binary_row_error(model: ServerModel, u: Big, loss: Big) -> Big:
    # float64: numpy's log/log1p are within 2 ulp; MPFR: 1 − p and the log each round once at φ bits
    return 2 * u * loss if model.bits is None else u * (loss + 2)


def multiclass_probe(model: ServerModel, weights: list[list[Big]], rows: np.ndarray | None = None) -> Probe:
    """A K-class probe: row ``rows[r]`` gets probabilities proportional to ``weights[r]``, the others 1/K.

    The server renormalises every row (Kaggle's rule); the table holds ``ln(Σ_c q_c) − ln q_c`` for the
    probabilities ``q`` it reads. Clipping would break the construction, so a probability below ``eps``
    fails loudly.
    """
    k = model.n_classes
    rows = np.arange(len(weights)) if rows is None else np.asarray(rows, dtype=np.int64)
    with local_precision(model.work_bits):
        u = model.unit()
        uniform = [mpfr(1) / k] * k
        other_cell, other_losses, other_error = _multiclass_row(model, u, uniform)
        others = model.n_rows - len(weights)
        cells: list[Any] = []
        table: list[tuple[Big, ...]] = []
        row_error = others * other_error
        max_total = others * max(other_losses)
        for row_weights in weights:
            total = sum(row_weights, mpfr(0))
            cell, losses, error = _multiclass_row(model, u, [w / total for w in row_weights])
            cells.append(cell)
            table.append(losses)
            row_error += error
            max_total += max(losses)
        return Probe(
            model.n_rows, rows, tuple(cells), other_cell, tuple(table), others * other_losses[0], row_error, max_total
        )


def _multiclass_row(model: ServerModel, u: Big, probabilities: list[Big]) -> tuple[Any, tuple[Big, ...], Big]:
    k = len(probabilities)
    if min(probabilities) < model.eps * (1 + 1e-9):
        raise AttackFailed(
            f"a class probability {float(min(probabilities)):.3g} is below the clipping eps={model.eps:g}; the "
            "server would clip it and break the prime-power construction — use smaller batches"
        )
    if model.bits is None:
        cell: Any = tuple(float(p) for p in probabilities)
        read = [mpfr(c) for c in cell]
        total = sum(read, mpfr(0))
        losses = tuple(gmpy2.log(total) - gmpy2.log(q) for q in read)
        # the upload's renormalisation, the clip-and-renormalise of the metric, and the log, in float64
        error = (2 * k + 8) * u + 2 * u * max(losses)
        return cell, losses, error
    with local_precision(model.work_bits):
        texts = tuple(format(p, f".{model.text_digits}e") for p in probabilities)
    with local_precision(model.bits):
        read = [mpfr(t) for t in texts]
    total = sum(read, mpfr(0))
    losses = tuple(gmpy2.log(total) - gmpy2.log(q) for q in read)
    return texts, losses, u * (max(losses) + 4)
