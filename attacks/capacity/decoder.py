"""Exact decoding of one capacity query: groups, mixed-radix digits and the rigorous summed-loss window.

A *group* is a set of rows with a list of candidate label patterns (a fresh row: ``{0, 1}``; the rows of an
earlier count digit: every pattern with the observed count). A *digit* gives each row of a group an integer
weight so that the pattern values ``v = pattern·weights`` lie in ``[0, span)``; digits sit at mixed-radix
positions ``R_i = span_0·…·span_{i-1}``, and the row with weight ``w`` in digit ``i`` gets the prediction
``p = 1/(1 + exp(w·R_i·u))``, i.e. the lattice label difference ``d = w·R_i·u``. The released score then
fixes the integer ``t = Σ_i R_i·v_i`` (an interval of ``t`` values when the window is wider than ``u``), and
``t`` splits into one value per digit: each group keeps exactly the candidates with that value.

Soundness: the window accounts for the released rounding (``ROUND_HALF_EVEN``, both ends included), the
assumed noise bound, the float64 rounding of every logarithm (4 ulp), numpy's pairwise summation, the
division by ``N``, and the gap between each row's real ``d`` (computed at 128 bits from the float ``p``
actually sent) and its lattice value. A candidate is dropped only if no ``t`` in the window allows it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np

from attacks import server_model
from attacks.capacity.design import LN2, ServerModel, all_patterns, digit_values, max_weight_real
from attacks.capacity.search import REFERENCE
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.result import AttackFailed

PRECISION_BITS = 128


@dataclass
class Group:
    """Rows whose joint labels are one of ``patterns`` (shape ``(n_candidates, len(rows))``)."""

    rows: np.ndarray
    patterns: np.ndarray

    @classmethod
    def fresh(cls, rows: list[int] | np.ndarray) -> Group:
        rows = np.asarray(rows, dtype=np.int64)
        return cls(rows, fresh_patterns(len(rows)))


@lru_cache(maxsize=64)
def fresh_patterns(k: int) -> np.ndarray:
    """Every 0/1 pattern of ``k`` fresh rows in ``itertools.product`` order, read-only (shared by groups)."""
    patterns = np.array(list(product((0, 1), repeat=k)), dtype=np.uint8).reshape(-1, k)
    patterns.setflags(write=False)
    return patterns


@dataclass
class Digit:
    """A group placed at mixed-radix position ``position`` with per-row integer ``weights``; ``values`` are
    the candidates' contributions minus ``low`` (the smallest one), all in ``[0, span)``."""

    group: Group
    weights: np.ndarray
    position: int
    values: np.ndarray
    low: int
    span: int

    @classmethod
    def place(cls, group: Group, weights: np.ndarray, position: int) -> Digit:
        if np.any(weights < 0):
            raise ValueError("digit weights must be non-negative")
        m = len(weights)
        if weights.ndim == 2:
            # K classes (:mod:`attacks.capacity.kary`): one weight per row and class, the value of a labeling
            # is the sum of its rows' weights at their labels.
            raw = weights[np.arange(m)[None, :], group.patterns].sum(axis=1, dtype=np.int64)
        elif m >= 8 and group.patterns is all_patterns(m):
            # Every labeling of m fresh rows (row i of the table = the bits of i): subset sums by doubling,
            # shared by every query with the same top weights (read-only; the smallest sum is 0).
            raw = subset_sums(tuple(weights.tolist()))
            return cls(group, weights.astype(np.int64), position, raw, 0, int(raw.max()) + 1)
        else:
            raw = digit_values(group.patterns, weights)
        low = int(raw.min())
        values = raw - low
        return cls(group, weights.astype(np.int64), position, values, low, int(values.max()) + 1)


@lru_cache(maxsize=64)
def subset_sums(weights: tuple[int, ...]) -> np.ndarray:
    """The sum of every subset of non-negative ``weights`` (entry ``i``: the subset with the bits of ``i``),
    read-only."""
    raw = np.zeros(1, dtype=np.int64)
    for w in weights:
        if w < 0:
            raise ValueError("digit weights must be non-negative")
        raw = np.concatenate([raw, raw + w])
    raw.setflags(write=False)
    return raw


@dataclass
class Query:
    """One designed submission: its digits (lowest position first) and the rows it touches."""

    digits: list[Digit]

    def row_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows with a non-zero lattice weight and their integer weights ``w·R``."""
        rows: list[np.ndarray] = []
        ks: list[np.ndarray] = []
        for digit in self.digits:
            nz = digit.weights != 0 if digit.weights.ndim == 1 else digit.weights.any(axis=1)
            rows.append(digit.group.rows[nz])
            ks.append(digit.weights[nz] * digit.position)
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.concatenate(rows), np.concatenate(ks)

    def offset(self) -> int:
        return sum(d.low * d.position for d in self.digits)

    def split(self, t: int) -> list[np.ndarray] | None:
        """The candidate masks of every digit for the lattice total ``t`` (``None`` if ``t`` is impossible)."""
        rem = t - self.offset()
        if rem < 0:
            return None
        masks: list[np.ndarray] = []
        for i, digit in enumerate(self.digits):
            last = i == len(self.digits) - 1
            if last:
                v = rem
            else:
                v, rem = rem % digit.span, rem // digit.span
            mask = digit.values == v
            if not mask.any():
                return None
            masks.append(mask)
        return masks

    def decode(self, t_values: range) -> list[np.ndarray]:
        """Union over the window's ``t`` values of the candidate masks (sound, possibly coarser)."""
        union: list[np.ndarray] | None = None
        for t in t_values:
            masks = self.split(t)
            if masks is None:
                continue
            union = masks if union is None else [a | b for a, b in zip(union, masks, strict=True)]
        if union is None:
            raise AttackFailed(
                "no labeling is consistent with the released score: the server's noise exceeds the assumed "
                "noise_bound, or it does not score as modelled (float64 binary log loss, mean over the rows)"
            )
        return union


def predictions(n_rows: int, rows: np.ndarray, ks: np.ndarray, unit: float) -> np.ndarray:
    """``1/2`` everywhere except the batch rows, which get ``p = 1/(1 + exp(k·u))`` (so ``d ≈ k·u``)."""
    out = np.full(n_rows, 0.5)
    if len(rows):
        out[rows] = 1.0 / (1.0 + np.exp(ks.astype(np.float64) * unit))
    return out


class VectorPool:
    """Prediction vectors for one attack, reused from round to round.

    A fresh 25,000-row vector per query costs more than building it (the allocator hands big blocks back to
    the system, so every new one page-faults); the pool keeps one per query of a round and rewrites only the
    rows a query changed. A vector is reused only once the oracle has answered and holds no reference to it
    (CPython's reference count: an oracle that keeps what it was sent keeps its own, untouched, vector).
    """

    def __init__(self, n_rows: int) -> None:
        self.n_rows = n_rows
        self.free: list[np.ndarray] = []
        self.lent: list[tuple[np.ndarray, np.ndarray]] = []

    def vector(self, rows: np.ndarray, ks: np.ndarray, unit: float) -> np.ndarray:
        """:func:`predictions` for one query, in a pooled vector (valid until :meth:`reclaim`)."""
        out = self.free.pop() if self.free else np.full(self.n_rows, 0.5)
        if len(rows):
            out[rows] = 1.0 / (1.0 + np.exp(ks.astype(np.float64) * unit))
        self.lent.append((out, rows))
        return out

    def reclaim(self) -> None:
        """Take back the vectors lent since the last call (the caller has dropped its own references)."""
        for out, rows in self.lent:
            # Referenced here (the tuple, the loop variable) and by getrefcount's argument: nobody else.
            if sys.getrefcount(out) <= 3:
                out[rows] = 0.5
                self.free.append(out)
        self.lent.clear()


@dataclass(frozen=True)
class BatchModel:
    """The exact (128-bit) quantities of a batch: label-0 loss sum, and the lattice deviation budget."""

    base: mpfr
    deviation: mpfr
    loss_bound: float
    row_ulps: float


@lru_cache(maxsize=1 << 16)
def row_terms(pj: float, kj: int, unit: float, eps: float) -> tuple[mpfr, mpfr, float]:
    """One batch row's exact terms for :func:`batch_model` (cached: the same weights recur across queries):
    its label-0 loss ``l0`` and ``|d − k·u|`` at 128 bits for the float ``pj`` sent, and ``max(l0, l1)``
    with a relative margin as a float."""
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        q = min(max(mpfr(pj), mpfr(eps)), one - mpfr(eps))
        l0 = -gmpy2.log(one - q)
        l1 = -gmpy2.log(q)
        return l0, abs((l1 - l0) - kj * mpfr(unit)), float(max(l0, l1)) * (1 + 1e-12)


def batch_model(p: np.ndarray, ks: np.ndarray, unit: float, eps: float) -> BatchModel:
    """For batch predictions ``p`` (floats actually sent) and lattice weights ``ks``: the sum of their label-0
    losses and ``Σ|d_j - k_j·u|`` at 128 bits, plus float64 error inputs for :func:`sum_window`."""
    with local_precision(PRECISION_BITS):
        base = mpfr(0)
        deviation = mpfr(0)
        loss_bound = 0.0
        terms = row_terms.__wrapped__ if REFERENCE.get() else row_terms
        for pj, kj in zip(p.tolist(), ks.tolist(), strict=True):
            l0, gap, largest = terms(pj, kj, unit, eps)
            base += l0
            deviation += gap
            loss_bound += largest
    return BatchModel(base, deviation, loss_bound, float(len(p) * batch_row_error(len(p), eps)))


@lru_cache(maxsize=256)
def batch_row_error(rows: int, eps: float) -> mpfr:
    """The server model's error bound for one batch row (the largest loss it can have), cached."""
    return server_model.ServerModel(rows, eps=eps).row_error(max_weight_real(eps) + 1.0)


@lru_cache(maxsize=64)
def free_row_error(model: ServerModel) -> mpfr:
    """The server model's error bound for one row at ``1/2`` (loss ``ln 2``), cached per model."""
    return model.row_error(LN2)


def loss_window(released: float, model: ServerModel, loss_bound: float, row_ulps: float) -> tuple[mpfr, mpfr]:
    """Rigorous bounds on the exact summed loss ``Σ l_i`` over the scored rows, from one released score:
    ``N·released`` within the server model's :meth:`~attacks.server_model.ServerModel.error_bound` — scored
    rows whose losses add up to at most ``loss_bound``, whose logarithms are off by at most ``row_ulps`` in
    total, summed pairwise in float64, divided by ``N``, rounded half-even to ``decimals`` places (both ends
    of the rounding interval included) after at most ``noise_bound`` of noise.
    """
    n = model.scored
    with local_precision(PRECISION_BITS):
        center = n * model.observe(released, PRECISION_BITS)
        half = model.error_bound(loss_bound, row_ulps)
        slack = mpfr(2) ** -100 * (n + 1) * 64
        return center - half - slack, center + half + slack


def sum_window(released: float, model: ServerModel, n_free: int, batch: BatchModel) -> tuple[mpfr, mpfr]:
    """Rigorous bounds on ``Σ_j y_j·k_j·u`` (the batch's label-dependent part of the summed loss, on the
    lattice) when ``n_free`` scored rows sit at ``1/2`` and the batch is described by ``batch``."""
    loss_bound = n_free * (LN2 + 1e-12) + batch.loss_bound
    row_ulps = batch.row_ulps + float(n_free * free_row_error(model))
    lo, hi = loss_window(released, model, loss_bound, row_ulps)
    with local_precision(PRECISION_BITS):
        constant = n_free * gmpy2.log(mpfr(2)) + batch.base
        return lo - constant - batch.deviation, hi - constant + batch.deviation


def lattice_range(lo: mpfr, hi: mpfr, unit: float, limit: int = 4096) -> range:
    """The integers ``t`` with ``t·u`` in ``[lo, hi]``."""
    with local_precision(PRECISION_BITS):
        u = mpfr(unit)
        t_lo = int(gmpy2.ceil(lo / u))
        t_hi = int(gmpy2.floor(hi / u))
    if t_hi - t_lo + 1 > limit:
        raise AttackFailed(f"the released score leaves {t_hi - t_lo + 1} lattice values open; the design is broken")
    return range(t_lo, t_hi + 1)


def brute_force(
    n_rows: int,
    rows: np.ndarray,
    pred: np.ndarray,
    released: float,
    eps: float,
    decimals: int | None,
    candidates: Iterable[tuple[int, ...]] | None = None,
) -> list[tuple[int, ...]]:
    """Every labeling of ``rows`` (from ``candidates``, default all ``2^len(rows)``; other rows fixed to 0,
    they sit at 1/2) whose float64 score, computed exactly as the server does and rounded half-even, equals
    ``released``. The reference the tests hold the decoder to (``len(rows) <= 16``)."""
    from scoring.metrics import get_metric
    from scoring.pipeline import release_text

    metric = get_metric("binary_logloss")
    found: list[tuple[int, ...]] = []
    labels = np.zeros(n_rows, dtype=np.int64)
    for bits in candidates if candidates is not None else product((0, 1), repeat=len(rows)):
        labels[rows] = bits
        value, _ = release_text(metric.score(pred, labels, eps), decimals)
        if value == released:
            found.append(tuple(bits))
    return found


def query_labelings(query: Query, masks: list[np.ndarray] | None = None) -> tuple[np.ndarray, set[tuple[int, ...]]]:
    """The query's weighted rows and every labeling of them its digits allow (``masks`` keeps only the
    candidates a decode left; default: all the candidates carried into the query)."""
    rows, _ = query.row_weights()
    position = {int(r): i for i, r in enumerate(rows.tolist())}
    pools = []
    for i, digit in enumerate(query.digits):
        patterns = digit.group.patterns if masks is None else digit.group.patterns[masks[i]]
        pools.append([(digit.group.rows.tolist(), pattern.tolist()) for pattern in patterns])
    out: set[tuple[int, ...]] = set()
    for combo in product(*pools):
        bits = [0] * len(rows)
        for group_rows, pattern in combo:
            for r, v in zip(group_rows, pattern, strict=True):
                if r in position:
                    bits[position[r]] = int(v)
        out.add(tuple(bits))
    return rows, out
