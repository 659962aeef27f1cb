"""Paper 001's Constructions 1 and 2 as queries: the prediction rows of one batch, each row's loss under every
label computed exactly from the floats the server will read, the window the server's arithmetic, released
decimals and noise bound put around the summed loss (the one server model, :mod:`attacks.server_model`), and
the certificate that every two labelings of the batch score more than twice that window apart
(Proposition 1: ``Λ_θ(f) ≥ 2τ`` is what τ-robust inference needs).

* **Construction 1** (powers, Theorem 1): row i's offset (label 1 over label 0) is ``2^i·s`` — here built
  *sequentially* from the offsets the previous rows actually got, ``d_i = Σ_{j<i} d_j + s``, so the float64
  rounding of a row's prediction never accumulates; K classes use base-K digits, ``d_{i,k} = k·(Σ_{j<i}
  d_{j,K−1} + s)``. Any superincreasing set decodes digit by digit (:mod:`attacks.paper001.decode`).
* **Construction 2** (log primes, Theorem 2): row i's offset is ``s·ln p_i`` (K classes: ``k·s·ln p_i``), so
  a labeling's summed offsets are ``s·ln Q`` with ``Q = Π p_i^{σ_i}``; distinct Q differ by at least
  ``s·ln(1 + 1/P)`` (P the largest Q, Theorem 2's ``P = Π p_i``), so ``s ≥ 2W/ln(1 + 1/P) ≈ 2W·P`` —
  Theorem 2's ``g(θ_i) = 3Pτ·ln p_i``, with τ the whole window.
* **Theorem 3** (``theorem3``, τ-robust multiclass cross-entropy): row n's class k gets the log-weight
  ``ln ϑ_{n,k} = c·2^((n−1)K+k)``, so the labeling-dependent part of the summed loss is ``c·Σ_n 2^(e_n)`` with
  one exponent from each row's own block of K: distinct labelings differ by at least ``2c``. The theorem's
  ``c = N·τ·ln 3`` becomes ``c = s/2`` with s the spacing that covers the whole window (released decimals,
  N·τ and the rounding). Class 0 takes the largest weight (exponent ``nK``) so the offsets increase with the
  class, and the superincreasing decoder reads the binary digits back (:mod:`attacks.paper001.decode`).

The spacing s starts from the window's fixed part (released decimals, noise bound) and grows to cover the
server's roundings of the loss, which scale with s; ``headroom`` (≥ 1) asks for a gap ``headroom`` times
larger than the certificate needs, so noise beyond the assumed bound is more likely to leave the released
score consistent with no labeling (what the doubling trick tests).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from attacks.exact import first_primes, gmpy2, local_precision, mpfr
from attacks.paper000.probes import Probe, ServerModel
from attacks.paper001.losses import LossFamily, exact_read

Big = Any  # an MPFR value
MAX_SPACING_ROUNDS = 40
#: Constructions whose offsets are superincreasing (certified by :func:`powers_gap`, decoded digit by digit).
SUPERINCREASING = frozenset({"powers", "theorem3"})


@dataclass(frozen=True)
class Plan:
    """One batch's query: the probe (its rows at offset 0), the spacing s, the certified gap between any two
    labelings' summed losses, the window for planning, and for Construction 2 its primes and the deviation of
    the actual offsets from ``k·s·ln p_i``."""

    construction: str
    probe: Probe
    model: ServerModel
    family: LossFamily
    spacing: float
    gap: Big
    window: Big
    primes: tuple[int, ...] = ()
    deviation: Big = 0

    @property
    def size(self) -> int:
        return self.probe.size

    def offsets(self) -> list[list[Big]]:
        return self.probe.offsets(self.model.work_bits)


def _row(model: ServerModel, family: LossFamily, targets: list[float]) -> tuple[Any, list[Big]] | None:
    """The cell (a float, or a tuple of K floats) whose label k scores ``targets[k−1]`` more than label 0,
    and the probabilities the server reads from it; ``None`` when the loss cannot reach the targets."""
    if model.n_classes == 2:
        theta = family.design_binary(targets[0], model.eps)
        if theta is None:
            return None
        read = exact_read([theta], model.work_bits)
        with local_precision(model.work_bits):
            return float(theta), [1 - read[0], read[0]]
    row = family.design_row(targets, model.eps)
    if row is None or min(row) < family.lowest(model.eps):
        return None
    return tuple(float(q) for q in row), exact_read(row, model.work_bits)


def _neutral(model: ServerModel) -> tuple[Any, list[Big]]:
    """A row every label scores the same on (θ = 1/2; 1/K on every class): §3.2's rows outside the batch."""
    if model.n_classes == 2:
        with local_precision(model.work_bits):
            return 0.5, [mpfr(0.5), mpfr(0.5)]
    cell = tuple([1.0 / model.n_classes] * model.n_classes)
    return cell, exact_read(list(cell), model.work_bits)


def _probe(model: ServerModel, family: LossFamily, cells: list[Any], reads: list[list[Big]]) -> Probe:
    binary = model.n_classes == 2
    other_cell, other_read = _neutral(model)
    with local_precision(model.work_bits):
        others = model.n_rows - len(cells)
        other_losses = family.row_losses(other_read, binary=binary)
        other_error = family.row_error(model, other_read, binary=binary)
        table = [family.row_losses(read, binary=binary) for read in reads]
        row_error = others * other_error + sum(
            (family.row_error(model, read, binary=binary) for read in reads), mpfr(0))
        max_total = others * max(abs(x) for x in other_losses) + sum(
            (max(abs(x) for x in losses) for losses in table), mpfr(0))
        return Probe(model.n_rows, np.arange(len(cells)), tuple(cells), other_cell, tuple(tuple(t) for t in table),
                     others * other_losses[0], row_error, max_total)


def _powers_probe(model: ServerModel, family: LossFamily, size: int, spacing: float) -> Probe | None:
    cells: list[Any] = []
    reads: list[list[Big]] = []
    below = mpfr(0)  # Σ_{j<i} d_{j,K−1}: the most the rows below can add
    binary = model.n_classes == 2
    with local_precision(model.work_bits):
        for _ in range(size):
            step = float(below) + spacing
            made = _row(model, family, [k * step for k in range(1, model.n_classes)])
            if made is None:
                return None
            cell, read = made
            losses = family.row_losses(read, binary=binary)
            cells.append(cell)
            reads.append(read)
            below += losses[-1] - losses[0]
    return _probe(model, family, cells, reads)


def _theorem3_probe(model: ServerModel, family: LossFamily, size: int, spacing: float) -> Probe | None:
    """Theorem 3's rows: row i (0-based) class k scores ``c·(2^(iK+K) − 2^(iK+K−k))`` more than class 0, with
    ``c = spacing/2`` (the loss of class k is ``ln Σ_j ϑ_{i,j} − c·2^(iK+K−k)``)."""
    k = model.n_classes
    c = spacing / 2.0
    cells: list[Any] = []
    reads: list[list[Big]] = []
    for i in range(size):
        top = 2.0 ** (i * k + k)
        made = _row(model, family, [c * (top - 2.0 ** (i * k + k - j)) for j in range(1, k)])
        if made is None:
            return None
        cells.append(made[0])
        reads.append(made[1])
    return _probe(model, family, cells, reads)


def powers_gap(model: ServerModel, probe: Probe) -> Big:
    """The certified gap of a superincreasing probe: ``min_{i,k} (d_{i,k+1} − d_{i,k} − Σ_{j<i} d_{j,K−1})``
    (negative if the offsets are not superincreasing); any two labelings' sums are at least this far apart."""
    with local_precision(model.work_bits):
        below = mpfr(0)
        gap = None
        for row in probe.offsets(model.work_bits):
            for low, high in itertools.pairwise(row):
                step = high - low - below
                gap = step if gap is None else min(gap, step)
            below += max(row)
        return mpfr("inf") if gap is None else gap


def _primes_probe(model: ServerModel, family: LossFamily, primes: tuple[int, ...], spacing: float) -> Probe | None:
    cells: list[Any] = []
    reads: list[list[Big]] = []
    for p in primes:
        made = _row(model, family, [k * spacing * math.log(p) for k in range(1, model.n_classes)])
        if made is None:
            return None
        cells.append(made[0])
        reads.append(made[1])
    return _probe(model, family, cells, reads)


def primes_deviation(model: ServerModel, probe: Probe, primes: tuple[int, ...], spacing: float) -> Big:
    """``Σ_i max_k |d_{i,k} − k·s·ln p_i|``: how far the actual offsets sit from Construction 2's."""
    with local_precision(model.work_bits):
        total = mpfr(0)
        for row, p in zip(probe.offsets(model.work_bits), primes, strict=True):
            log_p = mpfr(spacing) * gmpy2.log(p)
            total += max(abs(d - k * log_p) for k, d in enumerate(row))
        return total


def primes_gap(model: ServerModel, primes: tuple[int, ...], spacing: float) -> Big:
    """``s·ln(1 + 1/P)``, P the largest product ``Π p_i^(K−1)``: how far apart two labelings' targets are."""
    with local_precision(model.work_bits):
        largest = mpfr(1)
        for p in primes:
            largest *= mpfr(p) ** (model.n_classes - 1)
        return mpfr(spacing) * gmpy2.log1p(1 / largest)


@lru_cache(maxsize=256)
def plan_batch(
    model: ServerModel, family: LossFamily, size: int, construction: str, *, headroom: float = 1.0
) -> Plan | None:
    """The certified plan for a batch of ``size`` rows, or ``None`` when this server cannot carry it: the
    loss cannot reach the offsets (a bounded loss such as Brier, or the clipping ``eps``), or the server's
    rounding grows with the spacing as fast as the spacing does (the float64 limit). Cached: a plan depends
    only on the server's public facts, the loss and the batch."""
    if size < 1:
        return None
    with local_precision(model.work_bits):
        fixed = float(model.release_error() + model.noise_error())
        neutral = _probe(model, family, [], [])
        floor = float(model.window(neutral))
        primes = first_primes(size) if construction == "primes" else ()
        spacing = 2.0 * headroom * max(fixed, floor, 1e-300) * 1.01
        if construction == "primes":
            spacing /= float(primes_gap(model, primes, 1.0))
        for _ in range(MAX_SPACING_ROUNDS):
            if not math.isfinite(spacing) or spacing > 1e300:
                return None
            if construction == "powers":
                probe = _powers_probe(model, family, size, spacing)
            elif construction == "theorem3":
                probe = _theorem3_probe(model, family, size, spacing)
            else:
                probe = _primes_probe(model, family, primes, spacing)
            if probe is None:
                return None
            window = model.window(probe)
            if construction in SUPERINCREASING:
                deviation = mpfr(0)
                gap = powers_gap(model, probe)
            else:
                deviation = primes_deviation(model, probe, primes, spacing)
                gap = primes_gap(model, primes, spacing)
            need = 2 * headroom * (window + deviation)
            if gap > need:
                return Plan(construction, probe, model, family, spacing, gap, window, primes, deviation)
            ratio = float(need / gap) if gap > 0 else 2.0
            spacing *= max(1.05, ratio * 1.01)
        return None
