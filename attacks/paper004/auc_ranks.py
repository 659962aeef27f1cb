"""Paper 004, Section 3, taken further: the AUC read as a second linear code (a rank sum) beside the log loss.

``auc_logloss`` uses the AUC only to split log-loss windows; at float64 its window is 1 and the AUC adds nothing.
By Mann–Whitney the AUC numerator is ``U = Σ_{positives} rank − P(P+1)/2``: a subset sum of the ranks, that is
a linear code in the labels whose weights the attacker sets by where it ranks each row. Every row tied at exactly
1/2 (the undecoded rest, whatever its labels) shares one mid-rank ``r̄``, so once ``P`` is known a row ranked
at ``r`` adds ``y·(r − r̄)`` to ``U`` and the tied block adds a constant. Each query carries two groups:

* **A, the log-loss rows**: predictions ``σ(−step·2^i)`` below 1/2 as in ``auc_logloss`` with window 1, so the
  log loss alone names their code (``step = 2.02 × (log-loss tolerance + the B rows' logits)``). The tolerance
  is the server model's bound for the query's real magnitude (:func:`query_tolerance`), so 2–4 more rows fit
  than in ``auc_logloss``.
* **B, the rank rows**: predictions ``1/2 + t·2^-53`` just above the tied block, at positions ``t = g·s_j``
  (``s`` = :data:`SIZE_DISTINCT` where the block is wide enough, else powers of two);
  decoded rows fill the positions in between (*spacers*, labels known, so their share of ``U`` is known). A B
  row at position ``t`` weighs ``t + (T−1)/2`` in ``U`` (``T`` the tied block's size); the subset sums are
  checked by enumeration to lie more than twice the AUC's tolerance apart (``g`` is that tolerance's gap).
  B grows with the decoded rows ``K``: 2 rows on the first query, ``⌊log2 K⌋ + 1`` or so later (15 at
  N = 25,000). Their logits, at most ``4·t·2^-53``, are folded into A's tolerance.

The decoded rows that are not spacers either go to the extremes (``eps`` for a negative, ``1 − eps`` for a
positive: they then add about ``eps`` to the loss, so the log-loss tolerance shrinks as decoding proceeds) or
stay pooled in the tied block (a wider block separates rank sums of different sizes better, which matters
under rounding to decimals); each query takes whichever carries more rows.

The decoder takes the A codes the log loss allows (one, by the step), and for each the B codes whose rank sum
fits the released AUC; it then checks every surviving pair against both released values exactly and raises
unless exactly one labeling fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import MultiMetricOracle, Oracle, limited, require_budget
from attacks.paper004.auc import _released_pair, _sigmoid_neg, auc_tolerance, count_positives
from attacks.paper004.fit import auc_fallbacks, auc_fits, never_alone
from attacks.paper004.server import ServerModel
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

MAX_RANK_ROWS = 16  # 2^16 subset sums to enumerate per plan
# Greedy positions whose subset sums of equal size are all distinct (1, 2, 3, 5, 8, 14, …): when the block's
# offset (T−1)/2 exceeds their total, the rank sum's size separates sums of different sizes, so these need
# about 3.7 times fewer spacers than powers of two (≈ 2 more rank rows a query).
SIZE_DISTINCT = (1, 2, 3, 5, 8, 14, 25, 45, 85, 162, 310, 595, 1165, 2285, 4485, 8808)
ABOVE_HALF = 2.0**-53  # the float64 spacing just above 1/2: position t is the float 1/2 + t·2^-53


@dataclass(frozen=True)
class Layout:
    """One query: ``a`` log-loss rows with logits ``step·2^i``; rank rows at ``positions`` (ascending, within
    ``1..span``); the other positions up to ``span`` hold spacers; ``block`` rows stay at exactly 1/2."""

    a: int
    step: float
    positions: tuple[int, ...]
    span: int
    block: int
    tolerance: float = 0.0  # the summed-loss tolerance ``step`` was made for (rank rows' logits aside)

    @property
    def spacers(self) -> int:
        return self.span - len(self.positions)

    def rank_weights(self) -> np.ndarray:
        """Each rank row's weight in ``U``: its rank minus the tied block's mid-rank."""
        return np.asarray(self.positions, dtype=np.float64) + (self.block - 1) / 2

    def log_loss_weights(self) -> np.ndarray:
        """Each log-loss row's weight in ``U`` (ranked below the block; row ``i`` has rank ``a − i``)."""
        return (self.a - np.arange(self.a, dtype=np.float64)) - (self.a + (self.block + 1) / 2)


def subset_sums(weights: np.ndarray) -> np.ndarray:
    """``sums[c] = Σ_j bit_j(c)·weights[j]`` for every code ``c`` (bit ``j`` = label of rank row ``j``).

    >>> subset_sums(np.array([1.0, 2.5])).tolist()
    [0.0, 1.0, 2.5, 3.5]
    """
    sums = np.zeros(1, dtype=np.float64)
    for weight in weights:
        sums = np.concatenate([sums, sums + weight])
    return sums


def separated(sums: np.ndarray, gap: float) -> bool:
    """Whether all values are more than ``gap`` apart."""
    ordered = np.sort(sums)
    return bool(len(ordered) < 2 or np.diff(ordered).min() > gap)


def above_half_logit(position: int) -> float:
    """``|logit(1/2 + t·2^-53)|``, an upper bound (``4·t·2^-53`` plus rounding)."""
    return 4.0 * position * ABOVE_HALF * (1 + 1e-6)


def rank_rows(
    model: ServerModel, positives: int, *, rows: int, known: int, a: int, unknown: int, pooled: bool
) -> tuple[tuple[int, ...], int]:
    """The most rank rows (at most ``rows``) whose positions ``g·2^j`` need at most ``known`` spacers and whose
    rank sums the released AUC separates; returns (positions, span). ``pooled``: the decoded rows that are not
    spacers join the tied block (a wider block, so a larger offset ``(T−1)/2`` between rank sums of different
    sizes) instead of going to the extremes (a smaller log-loss magnitude)."""
    gap = 2 * auc_tolerance(model, positives)
    g = math.floor(gap) + 1
    for b in range(min(rows, MAX_RANK_ROWS), 0, -1):
        for design in (SIZE_DISTINCT[:b], tuple(2**j for j in range(b))):
            positions = tuple(g * t for t in design)
            span = positions[-1]
            block = model.n_rows - a - span if pooled else unknown - a - b
            if span - b > known or block < 0:
                continue
            layout = Layout(a, 0.0, positions, span, block)
            if separated(subset_sums(layout.rank_weights()), gap):
                return positions, span
    return (), 0


def query_tolerance(model: ServerModel, near_half: int, a: int) -> float:
    """The summed-loss tolerance of a query with ``near_half`` rows at or next to 1/2 (the tied block, rank rows
    and spacers), ``a`` log-loss rows and every other row a decoded one at ``eps`` or ``1 − eps``.

    The magnitude is tight where ``auc_logloss``'s is not: the log-loss rows lose at most
    ``Σ (w_i + ln 2) < 2L + a·ln 2`` (their logits are ``step·2^i ≤ L``), not ``a·(L + 1)``; the decoded rows
    lose about ``eps`` each. The server's error bound grows with the magnitude, so this is worth 2–3 rows a
    query at N = 306."""
    ln2 = math.log(2)
    extremes = model.n_rows - near_half - a
    magnitude = near_half * ln2 * 1.001 + 2 * model.logit_limit() + a * ln2 + extremes * 1e-12
    return float(model.sum_tolerance(magnitude, 1.01 * model.n_rows))


def log_loss_rows(model: ServerModel, rows: int, extra: float, near_half: int) -> tuple[int, float, float]:
    """The most log-loss rows (at most ``rows``) whose top logit ``step·2^(a−1)`` is not clipped, with
    ``step = 2.02 × (tolerance + extra)``; ``extra`` bounds the rank rows' share of the summed loss and
    ``near_half`` counts the rows at or next to 1/2 besides the log-loss rows."""
    limit = model.logit_limit()
    best = (0, 0.0, 0.0)
    for a in range(1, rows + 1):
        tolerance = 1.01 * query_tolerance(model, near_half, a)
        step = 2.02 * (tolerance + extra)
        if step * 2 ** (a - 1) > limit:
            break
        best = (a, step, tolerance)
    return best


@lru_cache(maxsize=4096)
def plan(model: ServerModel, positives: int, *, unknown: int, known: int, pooled: bool) -> Layout:
    """This query's layout: the log-loss rows first (at most ``unknown``), then rank rows for what is left.
    Cached (a layout depends only on these public facts): ``auto`` counts the queries ahead of the attack
    (:mod:`attacks.paper004.queries`), and the attack then reuses every layout."""
    # The rank rows' logits widen A's tolerance; bound them by the widest rank design the spacers allow.
    widest, widest_span = rank_rows(
        model, positives, rows=min(unknown, MAX_RANK_ROWS), known=known, a=0, unknown=unknown, pooled=pooled
    )
    # Powers of two bound either design's positions from above, whatever design the final plan picks.
    extra = sum(above_half_logit(widest[0] * 2**j) for j in range(len(widest)))
    near_half = model.n_rows if pooled else unknown + widest_span
    a, step, tolerance = log_loss_rows(model, unknown, extra, near_half)
    if a == 0:
        raise AttackFailed(
            "auc_logloss_ranks: even one log-loss row per query is beyond the released precision "
            f"({model.decimals if model.decimals is not None else 'all'} decimals, N = {model.n_rows})"
        )
    positions, span = rank_rows(
        model, positives, rows=min(unknown - a, len(widest)), known=known, a=a, unknown=unknown, pooled=pooled
    )
    block = model.n_rows - a - span if pooled else unknown - a - len(positions)
    return Layout(a, step, positions, span, block, tolerance)


def predictions_for(layout: Layout) -> tuple[list[float], list[float]]:
    """(log-loss rows' predictions, predictions at positions 1..span)."""
    low = [_sigmoid_neg(layout.step * 2**i) for i in range(layout.a)]
    if len(set(low)) != layout.a or max(low) >= 0.5:
        raise AttackFailed("auc_logloss_ranks: the log-loss rows' predictions are not distinct below 1/2")
    return low, [0.5 + t * ABOVE_HALF for t in range(1, layout.span + 1)]


@dataclass(frozen=True)
class Query:
    """What the decoder needs of one query: the layout, the submitted values, the spacers' labels."""

    layout: Layout
    low: list[float]
    high: list[float]  # predictions at positions 1..span
    spacer_labels: dict[int, int]  # position -> known label
    bottom: int  # decoded negatives at eps, ranked below everything
    top: int  # decoded positives at 1 − eps, ranked above everything
    block_known_positives: int  # decoded positives pooled in the tied block
    block_unknown: int  # undecoded rows in the tied block


def decode_query(loss: object, auc: object, model: ServerModel, query: Query, positives: int) -> tuple[int, int]:
    """The one (A code, B code) that fits both released values; raises otherwise."""
    layout = query.layout
    n, a = model.n_rows, layout.a
    b = len(layout.positions)
    summed = model.summed_loss(loss)  # type: ignore[arg-type]
    eps = model.eps
    with local_precision(model.work_bits):
        low = [mpfr(x) for x in query.low]
        high = {t: mpfr(query.high[t - 1]) for t in range(1, layout.span + 1)}
        zero = gmpy2.fsum([-gmpy2.log(1 - x) for x in low]) + layout.block * gmpy2.log(mpfr(2))
        zero += gmpy2.fsum([-gmpy2.log(1 - high[t]) for t in layout.positions])
        zero += gmpy2.fsum(
            [-gmpy2.log(high[t]) if y else -gmpy2.log(1 - high[t]) for t, y in query.spacer_labels.items()]
        )
        zero += query.bottom * -gmpy2.log(1 - mpfr(eps)) + query.top * -gmpy2.log(mpfr(1.0 - eps))
        w_low = [gmpy2.log((1 - x) / x) for x in low]
        w_high = [gmpy2.log((1 - high[t]) / high[t]) for t in layout.positions]  # tiny, negative
        tolerance = layout.tolerance
        widened = tolerance + sum(abs(float(w)) for w in w_high)
        centre = float((summed - zero) / layout.step)
        reach = widened / layout.step + 2
        codes = range(max(math.floor(centre - reach), 0), min(math.ceil(centre + reach), 2**a - 1) + 1)
        a_codes = [
            c
            for c in codes
            if abs(zero + gmpy2.fsum([w for i, w in enumerate(w_low) if c >> i & 1]) - summed) <= widened
        ]
    if auc is None:
        raise AttackFailed("auc_logloss_ranks: the leaderboard released no AUC for a probe")
    observed = float(auc) * positives * (n - positives)  # type: ignore[arg-type]
    slack = auc_tolerance(model, positives)
    mid = query.bottom + a + (layout.block + 1) / 2
    spacer_positives = [t for t, y in query.spacer_labels.items() if y]
    constant = (
        sum(query.bottom + a + layout.block + t for t in spacer_positives)
        + query.top * (2 * n - query.top + 1) / 2
        + (positives - len(spacer_positives) - query.top) * mid
        - positives * (positives + 1) / 2
    )
    b_sums = subset_sums(layout.rank_weights())
    b_counts = np.bitwise_count(np.arange(2**b, dtype=np.uint64)).astype(np.int64)
    a_weights = layout.log_loss_weights()
    fits: list[tuple[int, int]] = []
    for c in a_codes:
        bits = [(c >> i) & 1 for i in range(a)]
        residue = observed - constant - float(np.dot(bits, a_weights))
        for cb in np.flatnonzero(np.abs(b_sums - residue) <= slack).tolist():
            in_block = positives - len(spacer_positives) - query.top - sum(bits) - int(b_counts[cb])
            if not query.block_known_positives <= in_block <= query.block_known_positives + query.block_unknown:
                continue
            with local_precision(model.work_bits):
                exact = (
                    zero
                    + gmpy2.fsum([w for i, w in enumerate(w_low) if c >> i & 1])
                    + gmpy2.fsum([w for j, w in enumerate(w_high) if cb >> j & 1])
                )
                if abs(exact - summed) > tolerance:
                    continue
            fits.append((c, cb))
    if len(fits) != 1:
        raise AttackFailed(
            f"auc_logloss_ranks: {len(fits)} labelings of a query's {a} + {b} rows fit both released scores "
            "(expected exactly one): the scores are noisier or coarser than the server model says"
        )
    return fits[0]


def build_query(
    labels: np.ndarray, model: ServerModel, positives: int, *, pooled: bool | None = None
) -> tuple[list[float], Query, np.ndarray, np.ndarray]:
    """The next query given the labels decoded so far (``-1`` unknown): (predictions, what the decoder needs,
    the log-loss rows, the rank rows). Spacers are the first decoded rows; ``pooled`` forces where the other
    decoded rows go (default: whichever layout carries more rows)."""
    n = model.n_rows
    unknown = np.flatnonzero(labels < 0)
    known = np.flatnonzero(labels >= 0)
    if pooled is None:
        layouts = [plan(model, positives, unknown=len(unknown), known=len(known), pooled=p) for p in (False, True)]
        carried = [layout.a + len(layout.positions) for layout in layouts]
        pooled = carried[1] > carried[0]
        layout = layouts[pooled]
    else:
        layout = plan(model, positives, unknown=len(unknown), known=len(known), pooled=pooled)
    low, high = predictions_for(layout)
    a_rows = unknown[: layout.a]
    b_rows = unknown[layout.a : layout.a + len(layout.positions)]
    spacer_positions = sorted(set(range(1, layout.span + 1)) - set(layout.positions))
    spacer_rows = known[: len(spacer_positions)]
    predictions = [0.5] * n
    for row, x in zip(a_rows.tolist(), low, strict=True):
        predictions[row] = x
    for row, t in zip(b_rows.tolist(), layout.positions, strict=True):
        predictions[row] = high[t - 1]
    for row, t in zip(spacer_rows.tolist(), spacer_positions, strict=True):
        predictions[row] = high[t - 1]
    # Every other decoded row stays in the block (pooled) or goes to an extreme, where it loses about eps.
    rest = known[len(spacer_positions) :]
    empty = rest[:0]
    top_rows = empty if pooled else rest[labels[rest] == 1]
    bottom_rows = empty if pooled else rest[labels[rest] == 0]
    for row in top_rows.tolist():
        predictions[row] = 1.0 - model.eps
    for row in bottom_rows.tolist():
        predictions[row] = model.eps
    query = Query(
        layout,
        low,
        high,
        {t: int(labels[row]) for row, t in zip(spacer_rows.tolist(), spacer_positions, strict=True)},
        len(bottom_rows),
        len(top_rows),
        int(labels[rest].sum()) if pooled else 0,
        len(unknown) - layout.a - len(layout.positions),
    )
    return predictions, query, a_rows, b_rows


def ranks_queries(model: ServerModel, positives: int) -> int:
    """Queries of ``auc_logloss_ranks``: the positive-counting probe, then its queries as
    :func:`attacks.paper004.auc_ranks.build_query` lays them out (the pooled or the extreme layout, whichever
    carries more rows), each decoding ``a + b`` rows."""
    n = model.n_rows
    if positives in (0, n):
        return 1
    known, queries = 0, 1
    while known < n:
        layouts = [plan(model, positives, unknown=n - known, known=known, pooled=p) for p in (False, True)]
        known += max(layout.a + len(layout.positions) for layout in layouts)
        queries += 1
    return queries


@register("auc_logloss_ranks", fits=auc_fits("auc_logloss_ranks", ranks_queries), fallbacks=auc_fallbacks,
          applies=never_alone, paper="paper 004 §3, the AUC read as a rank-sum code (ours)",
          board="float64 binary log loss with AUC released beside it, every row scored, no noise",
          queries="1 + ⌈N / (a + b)⌉: a log-loss rows and b rank rows a query",
          precision="float64 arithmetic; any released decimals on both scores; no noise beyond noise_bound")
def auc_logloss_ranks(oracle: Oracle, *, noise_bound: float = 0.0, budget: int | None = None) -> AttackResult:
    """Paper 004 (Aggarwal, Xu, Feyisetan, Teissier 2020), Section 3: log loss and AUC of the same submission,
    the log loss coding ``a`` rows by powers of two and the AUC coding ``b`` more by their ranks.

    Needs a leaderboard that reports both (``also_report=("auc",)``), float64 arithmetic, any ``decimals``.
    Queries: one probe counting the positives, then queries of ``a + b`` rows, ``a`` the log loss's own capacity
    (43–45 at float64) and ``b`` the rank rows the decoded rows can space (2 on the first query, up to
    ``MAX_RANK_ROWS``): 49–51 rows a query at float64 once a few queries are decoded, 8 queries at N = 306 and
    45 at N = 2,201 against ``auc_logloss``'s 9 and 57. Time: ``O(2^b)`` per query to plan and
    ``O(a + 2^b)`` MPFR operations to decode. Paper 004 claims ``⌈N/90⌉`` queries; the counting bound
    (``benchmarks/paper004_auc_bound.py``) shows no query can carry 90 rows at these N.

    ``budget``: the submissions it may spend; it cannot stop early (the labels are checked against the count of
    positives), so past the budget it fails (:class:`AttackFailed`) without submitting.

    Raises :class:`AttackFailed` if the oracle does not report AUC, the arithmetic is not float64, a released
    value is missing, not exactly one labeling fits both scores, or the decoded labels do not add up to the
    number of positives.

    Paper 004, Section 3, with the AUC read as a rank-sum code (ours). Precision: float64 arithmetic, any
    released decimals on both scores, no noise beyond ``noise_bound``. Forty rows at 5 decimals: a probe, then
    two queries of 20 rows:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(0).integers(0, 2, 40)
    >>> result = run("auc_logloss_ranks", LocalOracle(labels, decimals=5, also_report=("auc",)), confirm=False)
    >>> bool((result.labels == labels).all()), result.queries, result.details["labels_per_query"]
    (True, 3, [20, 20])
    """
    if not isinstance(oracle, MultiMetricOracle) or "auc" not in oracle.also_report:
        raise AttackFailed("auc_logloss_ranks needs a leaderboard that reports AUC beside the log loss (also_report)")
    model = ServerModel.of(oracle, noise_bound=noise_bound)
    if not model.is_float64:
        raise AttackFailed("auc_logloss_ranks needs a float64 server: AUC has no φ-bit model")
    require_budget("auc_logloss_ranks", 1, budget)
    oracle = cast(MultiMetricOracle, limited(oracle, budget))  # it cannot stop early: never past the budget
    n = model.n_rows
    positives = count_positives(oracle, model)
    labels = np.full(n, -1, dtype=np.int64)
    if positives in (0, n):
        labels[:] = 1 if positives else 0
        return AttackResult("auc_logloss_ranks", labels, 0, 0.0, {"positives": positives, "labels_per_query": [n]})
    per_query: list[int] = []
    while (labels < 0).any():
        predictions, query, a_rows, b_rows = build_query(labels, model, positives)
        layout = query.layout
        loss, auc = _released_pair(oracle, predictions)
        code_a, code_b = decode_query(loss, auc, model, query, positives)
        labels[a_rows] = [(code_a >> i) & 1 for i in range(layout.a)]
        labels[b_rows] = [(code_b >> j) & 1 for j in range(len(layout.positions))]
        per_query.append(layout.a + len(layout.positions))
    if int(labels.sum()) != positives:
        raise AttackFailed(
            f"auc_logloss_ranks: decoded {int(labels.sum())} positives, the first probe counted {positives}"
        )
    return AttackResult(
        "auc_logloss_ranks", labels, 0, 0.0, {"positives": positives, "labels_per_query": per_query},
    )
