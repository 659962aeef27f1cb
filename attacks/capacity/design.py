"""Weight design for the capacity attack: what one binary log-loss score can carry, and how to carry it.

A row with prediction ``p`` adds ``-ln(1-p)`` to the summed loss when its label is 0 and ``-ln p`` when it is
1; the difference ``d = ln((1-p)/p)`` is at most ``A = ln((1-eps)/eps)`` in magnitude, and a row at
``p = 1/2`` adds ``ln 2`` whatever its label. The released score is the mean over ``N`` rows, so one query
reveals ``sum(d_j for the 1-labelled rows)`` to within a window of width about ``N·δ`` (``δ`` the released
resolution). With weights on the integer lattice ``d_j = k_j·u`` (``u`` just above the window) a row may
carry any integer weight ``|k_j| <= W = floor(A/u)``.

This module holds the bounds (the counting bound ``2^m <= m·M + 1`` with ``M = A/(N·δ)``), the two classic
designs it is measured against (scaled powers of two, Conway–Guy sets), the unit ``u`` and weight cap ``W``
for a server, and the small "digit" realizations used to resolve a carried ambiguity in a later query.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations

import numpy as np

from attacks import server_model
from attacks.capacity.search import REFERENCE, search_realization, search_realization_reference
from attacks.result import AttackFailed

LN2 = math.log(2.0)
FLOAT64_SUM_ERROR = 1e-10
"""The summed-loss error FIELD_NOTES assumes for a full-float64 server when quoting the counting bound."""


def max_weight_real(eps: float) -> float:
    """``A = ln((1-eps)/eps)``: the largest label-dependent change one row can make to the summed loss."""
    return math.log1p(-eps) - math.log(eps)


def counting_bound(
    n_rows: int, decimals: int | None, *, eps: float = 1e-15, noise_bound: float = 0.0, classes: int = 2,
    spread: float | None = None,
) -> int:
    """Largest ``m`` with ``2^m <= m·M + 1``, ``M = A / resolution`` (FIELD_NOTES, "How much a score can carry");
    for ``classes = K`` the K-ary bound ``K^m <= m·M + 1`` (``m`` labels of ``K`` classes, each row's loss
    spanning at most ``A``: ``K^m`` labelings share at most ``m·M + 1`` distinguishable sums).

    ``spread`` replaces ``A`` by another metric's label spread (the most one row's loss moves when its label
    changes: 2 for K-class Brier, α for the norm-like loss, ``≈ 1/eps`` for Itakura–Saito).

    ``resolution`` is the summed-loss resolution: ``N·(10^-decimals + 2·noise_bound)``, or, for a float64
    release (``decimals=None``), ``1e-10 + 2·N·noise_bound`` as FIELD_NOTES assumes.

    >>> [counting_bound(n, 5) for n in (306, 569, 2201, 25000)]
    [17, 16, 14, 10]
    >>> [counting_bound(n, 8) for n in (306, 569, 2201, 25000)]
    [28, 27, 25, 21]
    >>> counting_bound(25000, None)
    43
    >>> [counting_bound(2201, 5, classes=k) for k in (3, 6, 10)]
    [8, 5, 3]
    """
    big_m = (max_weight_real(eps) if spread is None else spread) / sum_resolution(n_rows, decimals, noise_bound)
    m = 1
    while classes ** (m + 1) <= (m + 1) * big_m + 1:
        m += 1
    return m


def sum_resolution(n_rows: int, decimals: int | None, noise_bound: float = 0.0) -> float:
    """The nominal resolution of the summed loss used by :func:`counting_bound` and the two baselines."""
    if decimals is None:
        return FLOAT64_SUM_ERROR + 2.0 * n_rows * noise_bound
    return n_rows * (10.0**-decimals + 2.0 * noise_bound)


def powers_of_two_per_query(n_rows: int, decimals: int | None, *, eps: float = 1e-15) -> int:
    """Labels per query of scaled powers of two: weights ``u·2^j <= A`` with ``u`` the resolution."""
    ratio = max_weight_real(eps) / sum_resolution(n_rows, decimals)
    return math.floor(math.log2(ratio)) + 1 if ratio >= 1 else 0


@lru_cache(maxsize=1)
def conway_guy_sequence(length: int = 80) -> tuple[int, ...]:
    """``u_0 = 0, u_1 = 1, u_{n+1} = 2·u_n - u_{n-r}`` with ``r = round(sqrt(2n))``.

    >>> conway_guy_sequence()[:12]
    (0, 1, 2, 4, 7, 13, 24, 44, 84, 161, 309, 594)
    """
    u = [0, 1]
    for n in range(1, length - 1):
        r = math.floor(math.sqrt(2 * n) + 0.5)
        u.append(2 * u[n] - u[n - r])
    return tuple(u)


def conway_guy_set(n: int) -> tuple[int, ...]:
    """The Conway–Guy set of size ``n``: ``{u_n - u_i : i < n}`` (distinct subset sums, largest ``u_n``).

    >>> conway_guy_set(4)
    (7, 6, 5, 3)
    """
    u = conway_guy_sequence()
    return tuple(u[n] - u[i] for i in range(n))


def conway_guy_per_query(n_rows: int, decimals: int | None, *, eps: float = 1e-15) -> int:
    """Labels per query of Conway–Guy sets scaled by the resolution (largest element ``u_n <= A/u``)."""
    ratio = max_weight_real(eps) / sum_resolution(n_rows, decimals)
    u = conway_guy_sequence()
    n = 0
    while n + 1 < len(u) and u[n + 1] <= ratio:
        n += 1
    return n


# ---------------------------------------------------------------------------------------------------------
# The lattice for a server: the unit u and the weight cap W, sized from the one server model's error bound.


@dataclass(frozen=True)
class ServerModel(server_model.ServerModel):
    """The server model (:class:`attacks.server_model.ServerModel`, a float64 server) and the lattice the
    attacker designs for it: ``unit`` is the lattice step ``u`` of the summed loss and ``cap`` the largest
    integer weight ``W`` (``W·u < A``). ``n_scored`` rows enter the mean (``N``, or the public-split size);
    ``noise_bound`` is the assumed max ``|released - true|`` before rounding.
    """

    n_scored: int = 0
    unit: float = 0.0
    cap: int = 0

    @classmethod
    def build(
        cls,
        n_rows: int,
        eps: float,
        decimals: int | None,
        noise_bound: float = 0.0,
        n_scored: int | None = None,
        batch_weight: float = 8.0,
        releases: int = 1,
        max_real: float | None = None,
        min_unit: float = 0.0,
        classes: int | None = None,
    ) -> ServerModel:
        """The lattice for a server. ``releases`` scores are added per observation (the split attack's mask
        phase adds a query and its mirror image, doubling the window); ``max_real`` caps the real weight of
        a row (default ``A``); ``min_unit`` floors the step; ``classes`` (``K``) models a multiclass log-loss
        server (rows renormalised, free rows at ``1/K``) instead of binary log loss."""
        scored = n_rows if n_scored is None else n_scored
        width = releases * window_width(scored, decimals, noise_bound, eps, batch_weight, classes)
        unit = max(float(width * (1.0 + 1e-6) + 1e-300), min_unit)
        a_max = (max_weight_real(eps) if max_real is None else max_real) - 1e-9
        cap = math.floor(a_max / unit)
        if cap < 1:
            raise AttackFailed(
                f"the released precision cannot separate one label: window {width:.3g} exceeds A = {a_max:.4g}"
            )
        return cls(
            n_rows=n_rows, n_classes=classes or 2, eps=eps, decimals=decimals, noise_bound=noise_bound,
            n_scored=scored, unit=unit, cap=cap,
        )


def window_width(
    n_scored: int, decimals: int | None, noise_bound: float, eps: float, batch_weight: float = 8.0,
    classes: int | None = None,
) -> float:
    """Width of the summed-loss window one release leaves: twice the server model's
    :meth:`~attacks.server_model.ServerModel.error_bound` for a design query.

    A design query has its scored rows at ``1/2`` (``ln 2`` each) except a batch of at most 64 rows whose
    losses add up to at most ``batch_weight·A + 64·ln 2``; each row's logarithm is within the model's
    :meth:`~attacks.server_model.ServerModel.row_error`. Mirrors :func:`attacks.capacity.decoder.sum_window`.
    """
    model = server_model.ServerModel(n_scored, eps=eps, decimals=decimals, noise_bound=noise_bound)
    a_max = max_weight_real(eps)
    free = LN2 if classes is None else math.log(classes)  # a free row's loss: at 1/2, or at 1/K
    total = n_scored * (free + 1e-12) + batch_weight * a_max + 64 * free
    rows = n_scored * model.row_error(free, classes) + 64 * model.row_error(a_max + 1.0, classes)
    return float(2 * model.error_bound(total, rows))


# ---------------------------------------------------------------------------------------------------------
# Digit realizations: integer weights on a group's rows that give its candidate patterns distinct sums.

# For "exactly c of the K rows are 1" (the ambiguity a count digit leaves) the smallest-span weight vectors
# with distinct c-subset sums, found by exhaustive search (tests re-check them). Complements (K - c) reuse
# the same weights. span = (largest c-sum) - (smallest c-sum) + 1; C(K, c) patterns.
COUNT_REALIZATIONS: dict[tuple[int, int], tuple[int, ...]] = {
    (2, 1): (0, 1),
    (3, 1): (0, 1, 2),
    (4, 1): (0, 1, 2, 3),
    (4, 2): (0, 1, 2, 4),
    (5, 1): (0, 1, 2, 3, 4),
    (5, 2): (0, 1, 2, 4, 7),
    (6, 1): (0, 1, 2, 3, 4, 5),
    (6, 2): (0, 1, 2, 4, 7, 12),
    (6, 3): (0, 3, 5, 6, 7, 14),
    (7, 1): (0, 1, 2, 3, 4, 5, 6),
    (7, 2): (0, 5, 7, 9, 10, 13, 21),
    (7, 3): (0, 3, 5, 6, 7, 14, 25),
}


SPLIT_KEEP = 6
"""A count group larger than the table is split: binary weights on all but ``SPLIT_KEEP`` rows first."""


def digit_values(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The integer contribution of each candidate pattern (rows = patterns, columns = group rows)."""
    return patterns.astype(np.int64) @ weights.astype(np.int64)


def count_of(patterns: np.ndarray) -> int | None:
    """``c`` if ``patterns`` is exactly the set of all 0/1 vectors with ``c`` ones, else ``None``."""
    k = patterns.shape[1]
    counts = patterns.sum(axis=1)
    c = int(counts[0])
    if not np.all(counts == c) or len(patterns) != math.comb(k, c):
        return None
    if len({row.tobytes() for row in patterns}) != len(patterns):
        return None
    return c


def realize(patterns: np.ndarray, max_span: int, max_weight: int | None = None) -> np.ndarray | None:
    """Weights (one per group row, ``>= 0``) for a carried group's digit with span at most ``max_span``.

    Preference: the injective realization from :data:`COUNT_REALIZATIONS` for "c of k" (k <= 7); for a
    larger count group, binary weights on its first rows; otherwise the searched weights that waste the least
    range per bit resolved (:func:`search_realization`: candidates may share a value, the decoder then keeps
    the sharing ones and a later query separates them); ``None`` if nothing useful fits. Every weight stays
    at most ``max_weight`` (default ``max_span``).
    """
    cap_w = max_span if max_weight is None else max_weight
    n, k = patterns.shape
    if n <= 1:
        return np.zeros(k, dtype=np.int64)
    c = count_of(patterns)
    if c is not None and (k, min(c, k - c)) in COUNT_REALIZATIONS:
        weights = np.array(COUNT_REALIZATIONS[(k, min(c, k - c))], dtype=np.int64)
        values = digit_values(patterns, weights)
        span = int(values.max() - values.min()) + 1
        if span <= max_span and int(weights.max()) <= cap_w:
            return weights
    if c is not None and k > SPLIT_KEEP:
        # "c of k" with k large: binary weights on the first rows (their sub-pattern is nearly uniform, so
        # little range is wasted); the rest, now "c' of SPLIT_KEEP", goes to the table in a later query.
        bits = min(k - SPLIT_KEEP, max(min(max_span, 2 * cap_w), 1).bit_length() - 1)
        if bits >= 1:
            weights = np.zeros(k, dtype=np.int64)
            weights[:bits] = 1 << np.arange(bits, dtype=np.int64)
            return weights
    if n == 2:
        return partial_realization(patterns, 2) if max_span >= 2 else None
    search = search_realization_reference if REFERENCE.get() else search_realization
    found = search(patterns.tobytes(), patterns.shape, min(max_span, 1 << 20), min(cap_w, 1 << 20))
    return None if found is None else np.array(found, dtype=np.int64)


def partial_realization(patterns: np.ndarray, max_span: int) -> np.ndarray:
    """Binary weights on as many varying rows as ``max_span`` allows (some patterns may share a sum: the
    decoder then keeps the colliding ones and they are resolved later)."""
    k = patterns.shape[1]
    varying = np.flatnonzero(patterns.min(axis=0) != patterns.max(axis=0))
    bits = max(0, max(max_span, 1).bit_length() - 1)
    weights = np.zeros(k, dtype=np.int64)
    for i, row in enumerate(varying[:bits]):
        weights[row] = 1 << i
    return weights


def check_count_realizations() -> None:
    """Raise if a table entry does not give distinct sums (used by the tests)."""
    for (k, c), weights in COUNT_REALIZATIONS.items():
        sums = [sum(s) for s in combinations(weights, c)]
        if len(set(sums)) != len(sums):
            raise AssertionError(f"count realization {(k, c)} has colliding sums")


@cache
def count_span(k: int, c: int) -> int:
    """Span of the realization of "exactly ``c`` of ``k`` rows are 1" (1 when there is nothing to resolve)."""
    if c in (0, k):
        return 1
    weights = COUNT_REALIZATIONS[(k, min(c, k - c))]
    sums = [sum(s) for s in combinations(weights, c)]
    return max(sums) - min(sums) + 1


# Fresh groups of 1-4 rows with the most informative subset sums for each span 2..16 (exhaustive search
# over weights 1..15): a span-s group lets the packer fill a factor s of the lattice, wasting at most 0.085
# bits (``log2 s - H``); rows whose subset sums collide are carried like any other ambiguity.
FRESH_GROUPS: dict[int, tuple[int, ...]] = {
    2: (1,),
    3: (1, 1),
    4: (1, 2),
    5: (1, 1, 2),
    6: (1, 1, 3),
    7: (1, 2, 3),
    8: (1, 2, 4),
    9: (1, 1, 2, 4),
    10: (1, 1, 2, 5),
    11: (1, 1, 3, 5),
    12: (1, 1, 3, 6),
    13: (1, 2, 3, 6),
    14: (1, 2, 3, 7),
    15: (1, 2, 4, 7),
    16: (1, 2, 4, 8),
}


@cache
def fresh_entropy(span: int) -> float:
    """Entropy (bits) of the subset sum of the fresh group :data:`FRESH_GROUPS` ``[span]``."""
    weights = FRESH_GROUPS[span]
    sums = [sum(c) for r in range(len(weights) + 1) for c in combinations(weights, r)]
    counts = np.bincount(sums)
    probs = counts[counts > 0] / len(sums)
    return float(-(probs * np.log2(probs)).sum())


@lru_cache(maxsize=4096)
def fresh_fill(room: int, fresh: int) -> tuple[tuple[int, ...], ...]:
    """Weight vectors of the fresh digits (singles ``(1,)`` and at most two groups from
    :data:`FRESH_GROUPS`) that best fill a factor ``room`` of the lattice with at most ``fresh`` rows:
    maximise the total entropy subject to the product of spans being at most ``room``.

    >>> fresh_fill(138, 100)  # 2^7 = 128 <= 138
    ((1, 2, 4, 8), (1,), (1,), (1,))
    >>> fresh_fill(23, 100)  # 11·2 = 22 <= 23: subset sums of (1, 1, 3, 5) fill 11 values
    ((1, 1, 3, 5), (1,))
    """
    if room < 2 or fresh < 1:
        return ()
    spans = [s for s in FRESH_GROUPS if s % 2 == 1 or s in (2,)]
    best: tuple[float, tuple[int, ...]] = (-1.0, ())

    def consider(groups: tuple[int, ...]) -> None:
        nonlocal best
        product = math.prod(groups)
        rows = sum(len(FRESH_GROUPS[g]) for g in groups)
        if product > room or rows > fresh:
            return
        singles = min((room // product).bit_length() - 1, fresh - rows)
        info = sum(fresh_entropy(g) for g in groups) + singles
        if info > best[0] + 1e-9:
            best = (info, groups + (2,) * singles)

    consider(())
    for a in spans:
        consider((a,))
        for b in spans:
            if b >= a:
                consider((a, b))
    groups = sorted(best[1], key=lambda g: -g)
    merged: list[tuple[int, ...]] = []
    singles = sum(1 for g in groups if g == 2)
    odd = [g for g in groups if g != 2]
    # Fold runs of singles into (1, 2, 4, 8) blocks: same information, fewer digits.
    while singles >= 4 and not odd:
        merged.append(FRESH_GROUPS[16])
        singles -= 4
    merged.extend(FRESH_GROUPS[g] for g in odd)
    merged.extend([(1,)] * singles)
    return tuple(merged)


# ---------------------------------------------------------------------------------------------------------
# The subset-sum top digit: m fresh rows with distinct weights in [V/2, V] on top of the mixed-radix part.
# Its value is nearly Gaussian with variance ~ m·V²/6, so it carries about log2 V + ½·log2 m + 0.5 bits —
# more than a count digit (½·log2 m + 1.05 bits at weight 1) because every row is heavy — while the labelings
# sharing a value stay few (about 2^m / (σ·sqrt(2π)), a handful for m ≈ log2 V + 4); they are carried.

TOP_V_MAX = 1 << 12
TOP_ROWS_MAX = 18


@lru_cache(maxsize=32)
def all_patterns(m: int) -> np.ndarray:
    """Every 0/1 vector of length ``m`` (row ``i`` = the bits of ``i``), read-only."""
    idx = np.arange(1 << m, dtype=np.int64)[:, None]
    out = ((idx >> np.arange(m, dtype=np.int64)) & 1).astype(np.uint8)
    out.setflags(write=False)
    return out


def subset_sum_entropy(weights: tuple[int, ...]) -> tuple[float, float]:
    """Entropy (bits) of the subset sum of ``weights`` under uniform labels, and the expected number of
    labelings sharing the observed sum."""
    sums = np.zeros(1, dtype=np.int64)
    for w in weights:
        sums = np.concatenate([sums, sums + w])
    if min(weights, default=0) < 0 or sum(weights) > 4 * len(sums) + 1024:
        _, counts = np.unique(sums, return_counts=True)  # sparse or negative sums: sorted
    else:
        counts = np.bincount(sums)  # small non-negative integers: counted, not sorted (same ascending order)
        counts = counts[counts > 0]
    probs = counts / len(sums)
    return float(-(probs * np.log2(probs)).sum()), float((counts.astype(np.float64) ** 2).sum() / len(sums))


@lru_cache(maxsize=256)
def top_weights(v_max: int, m: int, draws: int = 24) -> tuple[int, ...]:
    """Seeded search for ``m`` distinct weights in ``[v_max/2, v_max]`` whose subset sum has the most
    entropy (the subset-sum top digit)."""
    rng = np.random.default_rng(v_max * 1_000_003 + m)
    low = max(1, v_max // 2)
    if v_max - low + 1 < m:
        low = max(1, v_max - m + 1)
    best: tuple[float, tuple[int, ...]] = (-1.0, ())
    for _ in range(draws):
        size = min(m, v_max - low + 1)
        chosen: set[int] = set()
        while len(chosen) < size:
            chosen.update(int(w) for w in rng.integers(low, v_max + 1, size=size - len(chosen)))
        weights = tuple(sorted(chosen, reverse=True))
        entropy, _ = subset_sum_entropy(weights)
        if entropy > best[0]:
            best = (entropy, weights)
    return best[1]


def top_rows_for(v_max: int, extra: int = 4) -> int:
    """How many rows the subset-sum top digit gets for weights up to ``v_max``."""
    return max(1, min(TOP_ROWS_MAX, v_max.bit_length() - 1 + extra))
