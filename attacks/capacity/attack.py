"""The capacity attack's query loop: pack carried groups, fresh fill digits and a top digit into each query.

Each query is a mixed-radix number on the lattice ``d = k·u`` (see :mod:`attacks.capacity.decoder`); every
row's weight ``w·R`` stays within the cap ``W = floor(A/u)``:

1. the ambiguities carried from earlier queries, oldest first, each as a digit whose candidates get distinct
   (or few shared) values — e.g. weights ``0, 1, 2, 4`` for "two of these four rows are 1";
2. fresh *fill* digits: single rows (span 2) and small fresh groups whose subset sums fill any span 3..16
   (:data:`~attacks.capacity.design.FRESH_GROUPS`), so the product ``P`` of the spans gets close to its room;
3. the *top digit*, whose span costs no weight (only its rows' weights must stay within ``W``):

   * ``"subset"`` (default with rounded releases): ``m ≈ log2 V + 5`` fresh rows with distinct weights in
     ``[V/2, V]``, ``V = W // P`` (at most 4096, so the top is enumerated over at most ``2^18`` labelings).
     Its sum is nearly Gaussian, carrying about ``log2 V + ½·log2 m + 0.5`` bits, and the few labelings
     that share the observed sum (a handful on average) are carried to the next queries — "non-distinct
     subset sums with small collision sets".
   * ``"count"`` (default for float64 releases): ``K <= 6`` fresh rows at equal weight ``P``, carrying
     ``H(Binomial(K, 1/2))`` bits; "c of these K rows are 1" is carried as an injective digit.

A query thus carries about ``log2 W + 2.5`` bits (subset top) or ``log2 W + 2.2`` (count top), beyond the
one-shot distinct-subset-sum designs (scaled powers of two: ``log2 W + 1``; Conway–Guy about one more),
because ambiguity is resolved by later queries instead of being forbidden. The last query has no top: all
that is left goes in injectively, with one row riding on top for free. No labeling is ever guessed: a label
is reported only when every candidate still consistent with all released scores agrees on it.

Queries go out in *rounds* (:func:`run_rounds`): up to ``round_size`` queries are planned from the same
knowledge and sent together through :func:`attacks.oracle.submit_many` (a live oracle has them in flight at
once), and the ambiguity each leaves is carried by a query of the next round. The round size depends only on
public facts (:func:`default_round_size`: 1 on small boards, up to 32 at N = 25,000), so a board gives the same
queries in process and live, whatever the live oracle's window; it costs about 1 % more queries.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from attacks.capacity.decoder import (
    BatchModel,
    Digit,
    Group,
    Query,
    VectorPool,
    batch_model,
    lattice_range,
    predictions,
    sum_window,
)
from attacks.capacity.design import (
    TOP_ROWS_MAX,
    TOP_V_MAX,
    ServerModel,
    all_patterns,
    count_span,
    counting_bound,
    fresh_fill,
    partial_realization,
    realize,
    top_rows_for,
    top_weights,
)
from attacks.capacity.kary import kary_capacity_attack
from attacks.capacity.row_loss import RowLoss
from attacks.capacity.search import REFERENCE, reference_code
from attacks.capacity.state import CapacityState
from attacks.catalogue import BoardFacts
from attacks.confirm import check_claims
from attacks.oracle import Oracle, round_sizes, submit_many
from attacks.result import AttackFailed, AttackResult

#: The most queries the capacity attack plans from the same knowledge (:func:`default_round_size`): a live
#: oracle keeps them in flight together; the carried ambiguity then waits one round instead of one query.
ROUND_SIZE = 32
#: Rounds a run should have at least: the last round's carried ambiguity costs up to about one round of
#: queries, so a run of Q queries keeps its rounds to Q/50 (≈ 2 % more queries at most; measured +1.2 % at
#: N = 25,000, 5 decimals, 2,722 queries against 2,689 sequentially).
MIN_ROUNDS = 50


def default_round_size(n_rows: int, decimals: int | None, *, eps: float = 1e-15, noise_bound: float = 0.0) -> int:
    """Queries per round for a run on ``n_rows``: ``Q/50`` for the ``Q ≈ N / counting bound`` queries it will
    make, between 1 (small boards stay purely sequential, with no query lost) and :data:`ROUND_SIZE`. It
    depends only on public facts, so the same board gives the same queries offline and live, whatever the
    live oracle's in-flight window.

    >>> [default_round_size(n, 5) for n in (306, 2201, 25000)]
    [1, 3, 32]
    """
    expected_queries = n_rows / max(counting_bound(n_rows, decimals, eps=eps, noise_bound=noise_bound), 1)
    return int(min(max(expected_queries // MIN_ROUNDS, 1), ROUND_SIZE))


def default_top(cap: int) -> int:
    """The count-digit size ``K`` (at most 6): the largest whose carried "c of K" digit (span from
    :data:`~attacks.capacity.design.COUNT_REALIZATIONS`) stays within a quarter of the weight cap."""
    best_k = 1
    for k in range(2, 7):
        if max(count_span(k, c) for c in range(k + 1)) * 4 <= cap:
            best_k = k
    return best_k


def plan_query(
    state: CapacityState,
    model: ServerModel,
    top: int,
    max_rows: int = 96,
    mode: str = "subset",
    extra: int = 5,
    max_carried: int | None = None,
) -> Query:
    """Pack one query: carried groups (oldest first, at most ``max_carried`` of them), fresh fill digits, then
    the top digit — a subset-sum digit (``mode="subset"``: ``top_rows_for(V, extra)`` rows, or ``top`` if
    positive, weights in ``[V/2, V]``) or a count digit (``mode="count"``: ``top`` rows at equal weight)."""
    cap = model.cap
    position = 1
    digits: list[Digit] = []
    rows_used = 0
    deferred: list[Group] = []
    while state.carried and (max_carried is None or len(digits) < max_carried or not state.fresh):
        group = state.carried.popleft()
        room = cap // position
        weights = realize(group.patterns, room, room)
        if weights is None or rows_used + len(group.rows) > max_rows:
            if digits:
                deferred.append(group)
                continue
            weights = partial_realization(group.patterns, room)
        digit = Digit.place(group, weights, position)
        digits.append(digit)
        rows_used += len(group.rows)
        position *= digit.span
    state.carried.extendleft(reversed(deferred))
    fresh = state.fresh
    room = cap // position
    rows_left = max(0, max_rows - rows_used)
    final = len(fresh) <= rows_left and len(fresh) < 64 and 2 ** max(len(fresh) - 1, 0) <= room
    if final:
        fill: tuple[tuple[int, ...], ...] = ((1,),) * max(len(fresh) - 1, 0)  # everything left, injectively;
        k_top = min(len(fresh), 1)  # the last row rides on top for free
    elif mode == "subset":
        v_target = min(room, TOP_V_MAX)
        k_top = min(top if top > 0 else top_rows_for(v_target, extra), len(fresh), rows_left)
        fill = fresh_fill(room // v_target, min(len(fresh) - k_top, rows_left - k_top))
    else:
        k_top = min(top, len(fresh), rows_left)
        fill = fresh_fill(room, min(len(fresh) - k_top, rows_left - k_top))
    for fill_weights in fill:
        group = Group.fresh([fresh.popleft() for _ in range(len(fill_weights))])
        digit = Digit.place(group, np.array(fill_weights, dtype=np.int64), position)
        digits.append(digit)
        position *= digit.span
    if k_top > 0 and position <= cap:
        rows = np.array([fresh.popleft() for _ in range(k_top)], dtype=np.int64)
        if final or mode != "subset":
            top_w = np.ones(k_top, dtype=np.int64)
        else:
            top_w = np.array(top_weights(cap // position, k_top), dtype=np.int64)
            if len(top_w) < k_top:  # fewer distinct weights than rows: keep the rest fresh
                fresh.extendleft(reversed(rows[len(top_w) :].tolist()))
                rows = rows[: len(top_w)]
        group = Group(rows, all_patterns(len(rows)))
        digits.append(Digit.place(group, top_w, position))
    if not digits:
        raise AttackFailed("the design produced an empty query")
    return Query(digits)


def submit_query(oracle: Oracle, query: Query, model: ServerModel) -> tuple[range, BatchModel]:
    """Send the query and turn the released score into the window of lattice totals ``t``."""
    return submit_queries(oracle, [query], model)[0]


def submit_queries(
    oracle: Oracle, queries: list[Query], model: ServerModel, pool: VectorPool | None = None
) -> list[tuple[range, BatchModel]]:
    """Send independent queries together (:func:`attacks.oracle.submit_many`: a live oracle has them in flight
    at once) and turn each released score, in order, into its window of lattice totals ``t``. With ``pool``
    the prediction vectors are pooled (:class:`~attacks.capacity.decoder.VectorPool`), same values."""
    vectors = []
    for query in queries:
        rows, ks = query.row_weights()
        if pool is None or REFERENCE.get():
            pred = predictions(model.n_rows, rows, ks, model.unit)
        else:
            pred = pool.vector(rows, ks, model.unit)
        vectors.append((rows, ks, pred[rows], pred))
    released_scores = submit_many(oracle, [pred for *_, pred in vectors])
    batches = [(rows, ks, sent) for rows, ks, sent, _ in vectors]
    del vectors
    if pool is not None:
        pool.reclaim()
    windows = []
    for (rows, ks, sent), released in zip(batches, released_scores, strict=True):
        if released is None:
            raise AttackFailed("the leaderboard released nothing for a query; the capacity attack needs every score")
        batch = batch_model(sent, ks, model.unit, model.eps)
        lo, hi = sum_window(float(released), model, model.n_scored - len(rows), batch)
        windows.append((lattice_range(lo, hi, model.unit), batch))
    return windows


def run_rounds(
    oracle: Oracle,
    state: CapacityState,
    model: ServerModel,
    top: int,
    observe: Callable[[list[Query]], list[range]],
    budget: int | None = None,
    mode: str = "subset",
    extra: int = 5,
    round_size: int = 1,
) -> list[list[int]]:
    """Plan, submit (through ``observe``, which returns each query's window of lattice totals, in order) and
    decode queries until every row of ``state`` is resolved; returns the digit spans of each query.

    ``round_size`` > 1 plans up to that many queries from the same knowledge (:func:`round_sizes`'s slow
    start) and decodes them together: they do not depend on one another's answers, so a live oracle can have
    them in flight at once. The ambiguity a query leaves is then carried by a query of the next round instead
    of the very next query, which costs a few queries over the whole attack (``round_size=1`` is the purely
    sequential design)."""
    queries_before = oracle.queries
    spans: list[list[int]] = []
    sizes = round_sizes(round_size)
    while state.fresh or state.carried:
        wanted = next(sizes)
        if budget is not None:
            wanted = min(wanted, budget - (oracle.queries - queries_before))
            if wanted <= 0:
                break
        planned: list[Query] = []
        # The previous round's carried groups are spread over this round's queries, about as many per query as
        # the sequential design carries (one query's ambiguity into the next), so each keeps room for fresh rows.
        share = -(-len(state.carried) // wanted) if wanted > 1 else None
        while len(planned) < wanted and (state.fresh or state.carried):
            planned.append(plan_query(state, model, top, mode=mode, extra=extra, max_carried=share))
        for query, window in zip(planned, observe(planned), strict=True):
            masks = query.decode(window)
            resolved = sum(state.absorb(d.group, m) for d, m in zip(query.digits, masks, strict=True))
            state.per_query.append(resolved)
            spans.append([d.span for d in query.digits])
    return spans


def capacity_attack(
    oracle: Oracle,
    *,
    noise_bound: float = 0.0,
    top: int | None = None,
    check: bool = True,
    budget: int | None = None,
    top_mode: str | None = None,
    extra: int = 5,
    round_size: int | None = None,
    reference: bool = False,
) -> AttackResult:
    """Run the capacity construction against ``oracle`` (all rows scored). See :mod:`attacks.capacity`; a
    multiclass log-loss board goes to the K-ary construction (:mod:`attacks.capacity.kary`).

    ``reference``: run the code as first written (:func:`attacks.capacity.search.reference_code`: the same
    queries and labels, slower), for the benchmark's same-run baseline and the equivalence tests.

    ``round_size``: at most this many queries planned from the same knowledge and sent together
    (:func:`run_rounds`; default :func:`default_round_size`); 1 is the purely sequential design (binary boards;
    the K-ary construction sends one query at a time)."""
    if reference and not REFERENCE.get():
        with reference_code():
            return capacity_attack(
                oracle, noise_bound=noise_bound, top=top, check=check, budget=budget, top_mode=top_mode,
                extra=extra, round_size=round_size, reference=True,
            )
    classes, loss = require_capacity_metric(oracle, noise_bound)
    fraction = BoardFacts.of(oracle).public_fraction
    if fraction is not None and float(fraction) < 1.0:
        raise AttackFailed(
            f"the board releases only the public-split score ({float(fraction):.0%} of the rows); use the "
            "'capacity_split' attack"
        )
    if classes is not None:
        return kary_capacity_attack(oracle, noise_bound=noise_bound, check=check, budget=budget, loss=loss)
    started = time.perf_counter()
    queries_before = oracle.queries
    n = oracle.n_rows
    mode = top_mode or ("subset" if oracle.decimals is not None else "count")
    if mode not in ("subset", "count"):
        raise AttackFailed(f"top_mode must be 'subset' or 'count', not {mode!r}")
    weight = float(TOP_ROWS_MAX + 4) if mode == "subset" else float((top or 6) + 4)
    model = ServerModel.build(n, oracle.eps, oracle.decimals, noise_bound, batch_weight=weight)
    k_top = top if top is not None else (0 if mode == "subset" else default_top(model.cap))
    if round_size is None:
        round_size = default_round_size(n, oracle.decimals, eps=oracle.eps, noise_bound=noise_bound)
    state = CapacityState(labels=np.full(n, -1, dtype=np.int64), fresh=deque(range(n)))
    pool = VectorPool(n)
    spans = run_rounds(
        oracle, state, model, k_top, lambda qs: [w for w, _ in submit_queries(oracle, qs, model, pool)], budget,
        mode, extra, round_size,
    )
    design_queries = oracle.queries - queries_before
    if check and (state.labels >= 0).all() and (budget is None or design_queries < budget):
        check_claims(oracle, state.labels, slack=noise_bound)
    seconds = time.perf_counter() - started
    recovered = int((state.labels >= 0).sum())
    return AttackResult(
        attack="capacity",
        labels=state.labels,
        queries=oracle.queries - queries_before,
        seconds=seconds,
        details={
            "construction": "mixed-radix lattice digits + carried count digit",
            "unit": model.unit,
            "weight_cap": model.cap,
            "top": k_top,
            "top_mode": mode,
            "design_queries": design_queries,
            "labels_per_query": recovered / max(design_queries, 1),
            "counting_bound": counting_bound(n, oracle.decimals, eps=oracle.eps, noise_bound=noise_bound),
            "bits_per_query_design": math.log2(model.cap),
            "spans": spans[:20],
            "round_size": round_size,
        },
    )


def require_capacity_metric(oracle: Oracle, noise_bound: float = 0.0) -> tuple[int | None, RowLoss | None]:
    """:func:`require_logloss` widened to paper 001's Bregman losses: ``(None, None)`` for a binary log-loss
    (or binary ``kl``, the same loss) board, else ``(K, row model)`` for the K-ary construction — multiclass log
    loss and ``kl`` with ``None`` as the row model, ``brier``, ``norm_like``, ``itakura_saito`` (``K >= 2``)
    with theirs (:class:`~attacks.capacity.row_loss.RowLoss`)."""
    try:
        return require_logloss(oracle, noise_bound), None
    except AttackFailed:
        if oracle.metric in LOG_METRICS or not (isinstance(noise_bound, int | float) and noise_bound >= 0):
            raise
    loss = RowLoss.for_metric(oracle.metric, int(oracle.n_classes), float(oracle.eps))
    return int(oracle.n_classes), loss


LOG_METRICS = ("binary_logloss", "multiclass_logloss", "kl")


def require_logloss(oracle: Oracle, noise_bound: float = 0.0) -> int | None:
    """Refuse (:class:`AttackFailed`, with the reason) a board the capacity attacks cannot model, or a noise
    bound that is not a finite non-negative number; ``None`` for binary log loss (or ``kl``, the same loss),
    ``K`` for multiclass log loss or K-class ``kl`` (the K-ary construction, any ``K >= 2``)."""
    if not (isinstance(noise_bound, int | float) and math.isfinite(noise_bound) and noise_bound >= 0):
        raise AttackFailed(f"noise_bound must be a finite number >= 0, not {noise_bound!r}")
    arithmetic = BoardFacts.of(oracle).arithmetic
    if arithmetic != "float64":
        raise AttackFailed(
            f"the capacity attacks model a float64 server, not {arithmetic!r} arithmetic (use prime_batched)"
        )
    if oracle.metric in ("binary_logloss", "kl") and oracle.n_classes == 2:
        return None
    if oracle.metric in ("multiclass_logloss", "kl") and oracle.n_classes >= 2:
        return int(oracle.n_classes)
    raise AttackFailed(
        f"the capacity attacks need a log-loss board (binary_logloss or multiclass_logloss), not "
        f"{oracle.metric!r} with {oracle.n_classes} classes"
    )
