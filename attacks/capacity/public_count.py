"""How many rows the public split holds, measured from released scores (``capacity_split`` needs it exactly:
the released mean is a sum divided by it).

A *reciprocal pair* is a submission ``q`` on a set ``R`` of rows (the others at ``1/K``) followed by
``q' ∝ 1/q`` on the same rows: a row's two losses then add up to ``s = ln Z + ln Z'`` (``Z = Σ q``,
``Z' = Σ 1/q``) *whatever its label* (for binary log loss, ``q' = 1 - q``: the mirrored pair of
:mod:`attacks.capacity.split`). The two released means add up to ``2·ln K + x·(s - 2·ln K)/n_pub`` with
``x = |R ∩ public|``, so:

1. *scan*: pairs on ``PAIR_ROWS`` fresh rows, each at its own gap ``g_j`` (pair sum ``s_j``): a count ``n``
   fits a pair when some subset of its rows (the public ones) sums to ``n·T`` within the bounds; the counts
   near the board's stated fraction are tried first (all of them again if none fits). A small split is
   usually pinned by the first pair that moves (2–4 queries at N = 40..2,201);
2. *sets*, when the scan leaves a bracket ``[lo, hi]`` (large splits: the bracket is about ``n_pub²·δ/s``
   wide, ``δ`` the released resolution): a random set ``R`` at one gap, small enough that
   ``x = |R ∩ public|`` is pinned by the bracket, is paired; the exact ``x`` narrows the bracket ``x``-fold.

Every bound is rigorous (losses at 128 bits from the floats sent, both ends of the released rounding, the
assumed noise bound and a float64 allowance); a contradiction or no result within ``budget`` raises
:class:`AttackFailed`.
"""

from __future__ import annotations

import math

import numpy as np

from attacks.capacity.decoder import PRECISION_BITS
from attacks.capacity.kary import to_submission
from attacks.capacity.row_loss import RowLoss
from attacks.catalogue import BoardFacts
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed

PAIR_GAP = 24.0
"""``-ln`` of the small probability of a paired row (``s ≈ PAIR_GAP``)."""
PAIR_ROWS = 6
"""Rows per pair in the scan, each at its own gap (their subset sums tell which of them are public)."""
SCAN_PAIRS = 6
"""Scan pairs before the set phase takes over (a large split, whose count one public row cannot pin)."""


def pair_predictions(
    n_rows: int, classes: int | None, rows: np.ndarray, gaps: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A reciprocal pair on ``rows`` (row ``j`` at gap ``gaps[j]``, default :data:`PAIR_GAP`): binary
    ``p = 2^-round(g/ln 2)`` and ``1 - p`` (both exact), or for K classes ``q ∝ (1, e^-g, …, e^-g)`` and
    ``q' ∝ (e^-g, 1, …, 1)``."""
    g = np.full(len(rows), PAIR_GAP) if gaps is None else np.asarray(gaps, dtype=np.float64)
    if classes is None:
        first = np.full(n_rows, 0.5)
        first[rows] = 2.0 ** -np.round(g / math.log(2))
        return first, 1.0 - first
    first = np.full((n_rows, classes), 1.0 / classes)
    second = first.copy()
    q = np.ones((len(rows), classes))
    q[:, 1:] = np.exp(-g)[:, None]
    first[rows] = q / q.sum(axis=1, keepdims=True)
    second[rows] = (1.0 / q) / (1.0 / q).sum(axis=1, keepdims=True)
    return to_submission(first)[0], to_submission(second)[0]


#: The scan's pair rows of another metric step down from the strongest by this share of it
#: (:func:`metric_pair_rows`).
PAIR_MIX_STEP = 0.12


PAIR_FLOOR = 1.0 / 64.0
"""A loss that grows without bound as a probability falls (Itakura–Saito's ``≈ 1/q``) keeps its pair rows at
least this: a pair sum of about 100 moves the score plenty, and its float64 rounding stays far below the release."""


def reciprocal_row(loss: RowLoss, q: np.ndarray) -> np.ndarray | None:
    """The row ``q'`` (summing to 1) with ``φ(q_c) + φ(q'_c)`` the same for every class ``c`` (paper 001's
    losses are ``H(q) + φ(q_c)``, so a row's two losses then add up to the same whatever its label): ``q'_c =
    φ⁻¹(C − φ(q_c))``, ``C`` found by bisection (``Σ q'`` falls as ``C`` grows). ``None`` when no such row has
    every probability in ``[smallest, 1]`` (Brier: ``q'_c = 2/K − q_c`` needs ``q_c <= 2/K``)."""
    phi = loss.phi_values(q)

    def total(c: float) -> float:
        return float(loss.inverse_values(c - phi).sum())

    lo = hi = float(phi.max())
    step = 1.0
    while total(lo) <= 1.0 or total(hi) >= 1.0:  # widen until Σ q'(lo) > 1 > Σ q'(hi)
        if total(lo) <= 1.0:
            lo -= step
        if total(hi) >= 1.0:
            hi += step
        step *= 2.0
        if step > 1e300:
            return None
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if total(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    c = 0.5 * (lo + hi)
    out = loss.inverse_values(c - phi)
    out = out / out.sum()
    smallest = max(loss.lowest, loss.eps if loss.clipped else 0.0) * 1.000001
    if np.any(~np.isfinite(out)) or np.any(out < smallest) or np.any(out > 1.0):
        return None
    # φ⁻¹ clips outside φ's range; a clipped class would lose the constant pair sum.
    if np.max(np.abs(loss.phi_values(out) + phi - c)) > 1e-9 * (1.0 + abs(c)):
        return None
    return out


def metric_pair_rows(loss: RowLoss, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` reciprocal pairs of a :class:`~attacks.capacity.row_loss.RowLoss` metric, strongest first: row
    ``j`` is ``1/K`` moved by ``±t_j/K`` on half the classes each (``t_0`` the largest whose reciprocal row
    exists, then falling by :data:`PAIR_MIX_STEP` of it), as ``(first, second)`` uploads (``count × K``, or
    ``p`` and the exact mirror ``1 − p`` on a 2-class board, whose reciprocal is always the mirror)."""
    k = loss.classes
    uniform = np.full(k, 1.0 / k)
    # Half the classes up, half down (one at 1/K when K is odd): for Brier the pair sum is 2·Σ(q_c − 1/K)²,
    # largest for this direction (2/K at full stretch, against 2/(K(K − 1)) for one class up).
    direction = np.zeros(k)
    direction[: k // 2], direction[k - k // 2 :] = 1.0 / k, -1.0 / k
    lo, hi = 0.0, 1.0
    floor = PAIR_FLOOR if loss.clipped else 0.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        row = uniform + mid * direction
        other = reciprocal_row(loss, row)
        if other is not None and min(row.min(), other.min()) >= floor:
            lo = mid
        else:
            hi = mid
    shares = lo * (1.0 - 1e-6) * (1.0 - PAIR_MIX_STEP * np.arange(count))
    if k == 2:  # p on the 2^-53 grid below 1/2: 1 − p is exact, and so is the server's 1 − (1 − p)
        p = np.round((0.5 - 0.5 * shares) * 2.0**53) * 2.0**-53
        return p, 1.0 - p
    first = uniform[None, :] + shares[:, None] * direction[None, :]
    second = np.array([reciprocal_row(loss, row) for row in first])
    return first, second


def pair_sums(first: np.ndarray, second: np.ndarray, eps: float, loss: RowLoss | None = None) -> tuple[float, float]:
    """The smallest and largest (over labels) of a paired row's two losses added up, minus ``2·ln K``
    (exact, 128 bits, after clipping and renormalisation as the server does; a 1-D row reads ``(1 - p, p)``).
    Another metric's ``loss``: its exact row losses, minus twice the free row's (a row at ``1/K``)."""
    rows = [first, second]
    if loss is not None and not loss.is_log:
        with local_precision(PRECISION_BITS):
            free = loss.free_loss()
            a, b = loss.exact_losses(first), loss.exact_losses(second)
            sums = [x + y - 2 * free for x, y in zip(a, b, strict=True)]
            return float(min(sums)), float(max(sums))
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        lo_clip, hi_clip = mpfr(eps), one - mpfr(eps)
        losses = []
        for row in rows:
            values = [1.0 - float(row), float(row)] if np.ndim(row) == 0 else [float(v) for v in row]
            clipped = [min(max(mpfr(v), lo_clip), hi_clip) for v in values]
            total = sum(clipped, mpfr(0))
            losses.append([gmpy2.log(total) - gmpy2.log(v) for v in clipped])
        k = len(losses[0])
        sums = [losses[0][c] + losses[1][c] - 2 * gmpy2.log(mpfr(k)) for c in range(k)]
        return float(min(sums)), float(max(sums))


def subset_sums(values: np.ndarray) -> np.ndarray:
    """Every subset sum of ``values`` (``2^len`` of them, the empty one first)."""
    sums = np.zeros(1)
    for v in values.tolist():
        sums = np.concatenate([sums, sums + v])
    return sums


def estimate_public_count(
    oracle: Oracle, classes: int | None, *, noise_bound: float = 0.0, budget: int = 80, seed: int = 0,
    loss: RowLoss | None = None,
) -> tuple[int, int]:
    """``(n_pub, queries spent)`` measured with reciprocal pairs (see the module); ``classes=None`` for a
    binary log-loss board, ``loss`` for another metric's (Brier, norm-like, Itakura–Saito: its pairs from
    :func:`metric_pair_rows`). The board's public fraction, when it says one, only orders the search: counts
    near it are tried first, and every count is reconsidered if none of them fits."""
    n = oracle.n_rows
    started = oracle.queries
    decimals = oracle.decimals
    half = (0.5 * 10.0**-decimals if decimals is not None else 0.0) + noise_bound
    general = loss is not None and not loss.is_log
    if general:
        assert loss is not None
        with local_precision(PRECISION_BITS):
            k_log = 2.0 * float(loss.free_loss())
        pair_first, pair_second = metric_pair_rows(loss, PAIR_ROWS)
        one_first, one_second = pair_first, pair_second
    else:
        k_log = 2.0 * math.log(classes or 2)
        one_first, one_second = pair_predictions(PAIR_ROWS, classes, np.arange(PAIR_ROWS),
                                                 PAIR_GAP - 1.3 * np.arange(PAIR_ROWS))
    gaps = PAIR_GAP - 1.3 * np.arange(PAIR_ROWS)
    row_lo, row_hi = np.zeros(PAIR_ROWS), np.zeros(PAIR_ROWS)
    for j in range(PAIR_ROWS):
        row_lo[j], row_hi[j] = pair_sums(one_first[j], one_second[j], oracle.eps, loss)

    def predictions(rows: np.ndarray, row_gaps: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        if not general:
            return pair_predictions(n, classes, rows, row_gaps)
        assert loss is not None  # row j of the scan at pair j's strength; the sets phase at the strongest
        index = np.arange(len(rows)) if row_gaps is not None else np.zeros(len(rows), dtype=np.int64)
        first = np.tile(loss.free_row(), (n, 1)) if loss.classes > 2 else np.full(n, 0.5)
        second = first.copy()
        first[rows], second[rows] = pair_first[index], pair_second[index]
        return to_submission(first)[0] if first.ndim == 2 else first, (
            to_submission(second)[0] if second.ndim == 2 else second)

    def observe(rows: np.ndarray, row_gaps: np.ndarray | None) -> tuple[float, float]:
        """Bounds on ``Σ_{public rows} s_j / n_pub`` from one pair on ``rows``."""
        first, second = predictions(rows, row_gaps)
        a, b = oracle.submit(first), oracle.submit(second)
        if a is None or b is None:
            raise AttackFailed("the leaderboard released nothing for a calibration query; capacity_split needs "
                               "every score")
        total = float(a) + float(b) - k_log
        slack = 2 * half * (1 + 1e-9) + 1e-11 * (abs(float(a)) + abs(float(b)) + 1.0)
        return total - slack, total + slack

    def spend_check() -> None:
        if oracle.queries - started + 2 > budget:
            raise AttackFailed(f"the number of public rows is still open after {oracle.queries - started} "
                               "calibration queries")

    # Scan: pairs on PAIR_ROWS fresh rows at distinct gaps. A count n fits a pair when some subset of its rows
    # (the public ones) sums to n·T within the bounds.
    everything = np.arange(1, n + 1, dtype=np.float64)
    fraction = BoardFacts.of(oracle).public_fraction
    candidates = everything
    if fraction is not None and 0 < float(fraction) < 1:
        centre, width = float(fraction) * n, max(3.0, 0.02 * n)
        candidates = everything[np.abs(everything - centre) <= width]
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    seen: list[tuple[np.ndarray, np.ndarray, float, float]] = []
    scanned = 0
    moved = False

    def fits(counts: np.ndarray, lo_sums: np.ndarray, hi_sums: np.ndarray, t_lo: float, t_hi: float) -> np.ndarray:
        ok = (lo_sums[None, :] <= counts[:, None] * t_hi) & (hi_sums[None, :] >= counts[:, None] * t_lo)
        return np.asarray(ok.any(axis=1))

    while scanned < n and len(seen) < SCAN_PAIRS:
        spend_check()
        rows = order[scanned : scanned + PAIR_ROWS]
        scanned += len(rows)
        t_lo, t_hi = observe(rows, gaps[: len(rows)])
        lo_sums, hi_sums = subset_sums(row_lo[: len(rows)]), subset_sums(row_hi[: len(rows)])
        seen.append((lo_sums, hi_sums, t_lo, t_hi))
        moved |= t_lo > 0
        candidates = candidates[fits(candidates, lo_sums, hi_sums, t_lo, t_hi)]
        if len(candidates) == 0 and len(everything) > 0:  # the fraction misled: every count again
            candidates = everything
            for past in seen:
                candidates = candidates[fits(candidates, *past)]
            everything = np.zeros(0)
        if len(candidates) == 0:
            raise AttackFailed("the calibration pairs contradict each other: the board does not score as modelled")
        if moved and len(candidates) == 1:
            return int(candidates[0]), oracle.queries - started
    if not moved:
        raise AttackFailed("no calibration row moved the public score: the board scores none of them")
    # Sets: the count lies in [lo, hi]. A random set R at one gap (pair sum s each) moves the pair by x·s/n_pub,
    # x = |R ∩ public| pinned by the bracket when |R| = N / (2·(hi - lo)); the exact x narrows it x-fold.
    s_lo, s_hi = float(row_lo[0]), float(row_hi[0])
    lo, hi = float(candidates.min()), float(candidates.max())
    while True:
        low, high = math.ceil(lo - 1e-9), math.floor(hi + 1e-9)
        if low == high:
            return low, oracle.queries - started
        if low > high:
            raise AttackFailed("no whole number of public rows fits the calibration pairs")
        spend_check()
        size = max(1, min(n, int(0.5 * n / max(hi - lo, 1e-9))))
        rows = rng.choice(n, size=size, replace=False)
        t_lo, t_hi = observe(rows, None)
        r_lo, r_hi = t_lo / s_hi, t_hi / s_lo
        # x is a count of the set's rows: at most |R| (a wide bracket under noise leaves r·[lo, hi] spanning
        # several counts, and a set of one row is then pinned only by this).
        x_lo, x_hi = max(math.ceil(r_lo * lo - 1e-9), 0), min(math.floor(r_hi * hi + 1e-9), size)
        if x_lo != x_hi or x_lo == 0:
            continue
        lo, hi = max(lo, x_lo / r_hi), min(hi, x_lo / r_lo)
