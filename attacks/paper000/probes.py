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

from attacks import server_model
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed
from attacks.server_model import CERTIFIED_MARGIN

Big = Any  # an MPFR value (gmpy2 ships no usable stubs)


@dataclass(frozen=True)
class ServerModel(server_model.ServerModel):
    """The server model (:class:`attacks.server_model.ServerModel`) as paper 000's probes use it: the noise
    bound is called ``tau``, the attacker works at :attr:`work_bits` and submits :attr:`text_digits`-digit
    strings to an MPFR server, and :meth:`window` bounds a probe's summed loss."""

    @classmethod
    def of(
        cls,
        oracle: Oracle,
        *,
        tau: float = 0.0,
        noise_bound: float | None = None,
        bits: int | None = None,
        n_scored: int | None = None,
    ) -> ServerModel:
        bound = tau if noise_bound is None else noise_bound
        return super().of(oracle, noise_bound=bound, bits=bits, n_scored=n_scored)

    @property
    def tau(self) -> float:
        """The assumed bound on the noise added to the released mean."""
        return self.noise_bound

    def with_tau(self, tau: float) -> ServerModel:
        return replace(self, noise_bound=float(tau))

    @property
    def work_bits(self) -> int:
        """The attacker's own working precision: comfortably above the server's."""
        return max(160, self.phi + 96)

    @property
    def text_digits(self) -> int:
        """Significant digits of the decimal strings submitted to an MPFR server."""
        return math.ceil(self.phi * 0.30103) + 3

    def observe(self, released: float | Decimal | None, bits: int | None = None) -> Big:
        """The released score as an MPFR number at the attacker's precision."""
        return super().observe(released, bits or self.work_bits)

    def window(self, probe: Probe, score: Big | None = None) -> Big:
        """Bound ``W`` on ``|N·released − Σ_i loss_i(σ_i)|`` for the true labeling σ, given the released
        ``score`` (or, for planning, the largest score the probe can produce): the server model's
        :meth:`~attacks.server_model.ServerModel.error_bound` for the probe's rows, with the certified
        decoders' margin, plus the attacker's own rounding."""
        with local_precision(self.work_bits):
            top = probe.max_total / self.n_rows if score is None else abs(score)
            bound = self.error_bound(probe.max_total, probe.row_error, mean=top, margin=CERTIFIED_MARGIN)
            own = mpfr(2) ** (16 - self.work_bits) * (probe.max_total + 1)
            return bound + own


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
        row_error = mpfr(0)
        max_total = mpfr(0)
        for value in probabilities:
            cell, read = _read_binary(model, value)
            losses = (-gmpy2.log(1 - read), -gmpy2.log(read))
            cells.append(cell)
            table.append(losses)
            row_error += model.row_error(max(losses))
            max_total += max(losses)
        others = model.n_rows - len(probabilities)
        other_row = -gmpy2.log(half)
        row_error += others * model.row_error(other_row)
        max_total += others * other_row
        other_loss = others * other_row
        return Probe(model.n_rows, rows, tuple(cells), half_cell, tuple(table), other_loss, row_error, max_total)


def multiclass_probe(model: ServerModel, weights: list[list[Big]], rows: np.ndarray | None = None) -> Probe:
    """A K-class probe: row ``rows[r]`` gets probabilities proportional to ``weights[r]``, the others 1/K.

    The server renormalises every row (Kaggle's rule); the table holds ``ln(Σ_c q_c) − ln q_c`` for the
    probabilities ``q`` it reads. Clipping would break the construction, so a probability below ``eps``
    fails loudly.
    """
    k = model.n_classes
    rows = np.arange(len(weights)) if rows is None else np.asarray(rows, dtype=np.int64)
    with local_precision(model.work_bits):
        uniform = [mpfr(1) / k] * k
        other_cell, other_losses, other_error = _multiclass_row(model, uniform)
        others = model.n_rows - len(weights)
        cells: list[Any] = []
        table: list[tuple[Big, ...]] = []
        row_error = others * other_error
        max_total = others * max(other_losses)
        for row_weights in weights:
            total = sum(row_weights, mpfr(0))
            cell, losses, error = _multiclass_row(model, [w / total for w in row_weights])
            cells.append(cell)
            table.append(losses)
            row_error += error
            max_total += max(losses)
        return Probe(
            model.n_rows, rows, tuple(cells), other_cell, tuple(table), others * other_losses[0], row_error, max_total
        )


def _multiclass_row(model: ServerModel, probabilities: list[Big]) -> tuple[Any, tuple[Big, ...], Big]:
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
        return cell, losses, model.row_error(max(losses), classes=k)
    with local_precision(model.work_bits):
        texts = tuple(format(p, f".{model.text_digits}e") for p in probabilities)
    with local_precision(model.bits):
        read = [mpfr(t) for t in texts]
    total = sum(read, mpfr(0))
    losses = tuple(gmpy2.log(total) - gmpy2.log(q) for q in read)
    return texts, losses, model.row_error(max(losses), classes=k)
