"""``capacity_split``: the capacity attack against a leaderboard that releases only the public-split score.

Only the ``n_pub`` public rows enter the released mean, so a row at ``p != 1/2`` has three states: private
(no effect), public with label 0 (adds ``-ln(1-p) - ln 2``) or public with label 1 (adds ``-ln p - ln 2``).
Whatever ``p``, one of the two public states moves the score by less than ``ln 2``, so "private" and
"label 0" cannot be told apart row by row from one score.

With a rounded release (``decimals`` set) the attack treats every row as a three-valued digit and decodes
single queries exactly by enumeration (:mod:`attacks.capacity.ternary`): about ``N·(H(f) + f) /
log2(A/window)`` queries for a public fraction ``f`` — e.g. 25 for N = 306, 214 for N = 2,201 and about
3,100 for N = 25,000 with 5 decimals and a 30 % split (the mirrored pairs below: 38, 318, 4,804). With the
float64 value (``decimals=None``) the window is too narrow for that enumeration and the mirrored-pair
construction is used; it works in two phases:

1. **Mask** (mirrored pairs). Submit ``p`` and then its mirror ``1 - p`` (``p`` a multiple of ``2^-53``, so
   ``1 - p`` is exact). A public row adds ``-ln p - ln(1-p)`` to the *sum* of the two summed losses
   whatever its label, a private row nothing: the pair's total is ``2·ln 2·n_pub + Σ_public c_j`` with the
   label-free weight ``c_j = -ln(4p(1-p))``. Choosing ``c_j = k_j·u`` on a lattice (``u`` just above the
   doubled window) turns the public bits into exactly the capacity attack's problem — same mixed-radix
   digits, top digit and exact decoder — at two queries per observation.
2. **Labels**. With the mask known, each pair's two scores also pin ``Σ y_j·d_j`` over its public rows
   (``d_j = ln((1-p_j)/p_j)``; the query adds ``l0_j + y_j·d_j``, its mirror ``l1_j - y_j·d_j``), and the
   labelings of those few rows are enumerated: a label is kept when every labeling inside both windows
   agrees. The public rows left open (equal-weight rows can swap labels) are an ordinary capacity instance
   with ``N = n_pub`` — private rows and rows at ``1/2`` cost nothing.

Queries (mirrored pairs): about ``2·N / (log2 W' + 2.5)`` for the mask (``W'`` the cap at the doubled window)
plus a few for the labels left open — e.g. 38 queries for N = 306 with 5 decimals and a 30 % public split.
Result (either construction): labels of public rows, ``-1`` for private rows, and ``details["public_mask"]``.
Precision: as :mod:`attacks.capacity`; with ``decimals=None`` the mask phase uses a coarser step, because
``p`` must sit on the ``2^-53`` grid.
"""

from __future__ import annotations

import math
import time
from collections import deque

import numpy as np

from attacks.capacity.attack import (
    capacity_attack,
    default_top,
    require_capacity_metric,
    run_rounds,
    submit_queries,
)
from attacks.capacity.decoder import PRECISION_BITS, Query, lattice_range, loss_window
from attacks.capacity.design import (
    LN2,
    TOP_ROWS_MAX,
    ServerModel,
    all_patterns,
    counting_bound,
    max_weight_real,
)
from attacks.capacity.public_count import estimate_public_count
from attacks.capacity.row_loss import RowLoss
from attacks.capacity.state import CapacityState
from attacks.capacity.ternary import ternary_split_attack
from attacks.catalogue import BoardFacts
from attacks.confirm import check_claims
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle, left_of, limited, submit_many
from attacks.result import AttackFailed, AttackResult

GRID = 2.0**-53
CALIBRATION_QUERIES = 80
"""At most this many queries measure the public count (2–26 are used at N = 2,201 without noise). Under a noise
bound far above the release, a weak pair (Brier: at most ``2/K`` a row) cannot pin the count: 400 did not at
Brier K = 3, bound 1.6e-3, where the likelihood decoders are the tool, not a worst-case bound."""


def mirrored_predictions(n_rows: int, rows: np.ndarray, ks: np.ndarray, unit: float) -> np.ndarray:
    """``p`` on the ``2^-53`` grid with ``-ln(4p(1-p)) ≈ k·u`` for the batch rows, ``1/2`` elsewhere."""
    out = np.full(n_rows, 0.5)
    if len(rows):
        c = ks.astype(np.float64) * unit
        ideal = np.exp(-c) / (2.0 * (1.0 + np.sqrt(-np.expm1(-c))))
        out[rows] = np.maximum(np.round(ideal / GRID), 1.0) * GRID
    return out


def mask_window(released: tuple[float, float], model: ServerModel, p: np.ndarray, ks: np.ndarray, n_free: int) -> range:
    """Window of lattice totals ``Σ_public k_j`` from a query and its mirror image."""
    with local_precision(PRECISION_BITS):
        u = mpfr(model.unit)
        one = mpfr(1)
        deviation = mpfr(0)
        loss_bound = n_free * (LN2 + 1e-12)
        for pj, kj in zip(p.tolist(), ks.tolist(), strict=True):
            q = mpfr(pj)
            pair = -gmpy2.log(q) - gmpy2.log(one - q)
            deviation += abs(pair - 2 * gmpy2.log(mpfr(2)) - kj * u)
            loss_bound += float(-gmpy2.log(q)) * (1 + 1e-12)
        row_ulps = float(n_free * model.row_error(LN2) + len(p) * model.row_error(max_weight_real(model.eps) + 1.0))
        lo1, hi1 = loss_window(released[0], model, loss_bound, row_ulps)
        lo2, hi2 = loss_window(released[1], model, loss_bound, row_ulps)
        constant = 2 * gmpy2.log(mpfr(2)) * model.n_scored
        lo = lo1 + lo2 - constant - deviation
        hi = hi1 + hi2 - constant + deviation
    return lattice_range(lo, hi, model.unit)


def pair_labels(
    known: np.ndarray,
    mask: np.ndarray,
    rows: np.ndarray,
    p: np.ndarray,
    released: tuple[float, float],
    model: ServerModel,
    max_open: int = 14,
) -> None:
    """Fill ``known`` with the labels one mirrored pair fixes once the public ``mask`` is known.

    Query ``p`` adds ``Σ_public (l0_j + y_j·d_j)`` and its mirror ``Σ_public (l1_j - y_j·d_j)`` to the free
    rows' ``ln 2`` each (``l0 = -ln(1-p)``, ``l1 = -ln p``, ``d = l1 - l0``), so both windows bound
    ``T = Σ y_j·d_j``. Every labeling of the still-unknown public rows is tried; a row is set only if all
    labelings inside the window agree on it.
    """
    public = mask[rows]
    rows, p = rows[public], p[public]
    if len(rows) == 0:
        return
    fixed = known[rows] >= 0
    n_open = int((~fixed).sum())
    if n_open == 0 or n_open > max_open:
        return
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        l0 = [-gmpy2.log(one - mpfr(v)) for v in p.tolist()]
        l1 = [-gmpy2.log(mpfr(v)) for v in p.tolist()]
        d = [b - a for a, b in zip(l0, l1, strict=True)]
        free = (model.n_scored - len(rows)) * gmpy2.log(mpfr(2))
        bound = model.n_scored * (LN2 + 1e-12) + sum(float(v) for v in l1) * (1 + 1e-12)
        ulps = 4.0 * (model.n_scored * math.ulp(LN2) + len(rows) * math.ulp(max_weight_real(model.eps) + 1.0))
        lo1, hi1 = loss_window(released[0], model, bound, ulps)
        lo2, hi2 = loss_window(released[1], model, bound, ulps)
        ones_fixed = np.flatnonzero(fixed & (known[rows] == 1)).tolist()
        fixed_part = sum((d[i] for i in ones_fixed), mpfr(0))
        sum_l0, sum_l1 = sum(l0, mpfr(0)), sum(l1, mpfr(0))
        t_lo = max(lo1 - free - sum_l0, free + sum_l1 - hi2) - fixed_part
        t_hi = min(hi1 - free - sum_l0, free + sum_l1 - lo2) - fixed_part
        open_idx = np.flatnonzero(~fixed)
        d_open = np.array([float(d[i]) for i in open_idx.tolist()])
        margin = 1e-12 * (float(np.abs(d_open).sum()) + 1.0)
        lo_f, hi_f = float(t_lo) - margin, float(t_hi) + margin
    patterns = all_patterns(n_open)
    sums = patterns.astype(np.float64) @ d_open
    inside = patterns[(sums >= lo_f) & (sums <= hi_f)]
    if len(inside) == 0:
        raise AttackFailed("a mirrored pair admits no labeling of its public rows: the observations are inconsistent")
    agree = inside.min(axis=0) == inside.max(axis=0)
    known[rows[open_idx[agree]]] = inside[0, agree]


def capacity_split_attack(
    oracle: Oracle,
    *,
    noise_bound: float = 0.0,
    top: int | None = None,
    n_public: int | None = None,
    check: bool = True,
    budget: int | None = None,
    hidden_split: bool = False,
    count_bound: float | None = None,
    stated_count: bool = True,
) -> AttackResult:
    """Recover the public mask and the public labels (``-1`` for private rows). ``budget`` (submissions) cuts
    the run and keeps what it decoded — on every split but a float64 release's, whose mirrored design cannot
    stop early: it fails (:class:`AttackFailed`) rather than submit past the budget.
    ``count_bound`` (default ``noise_bound``) is the noise bound of the public count's calibration pairs alone:
    under noise a count is pinned at a bound the decoding cannot use (Brier, K = 3, Laplace 1e-4: the count at
    4e-4, the labels at 1.6e-3); a count a tail draw made wrong fails the decoding loudly.

    ``stated_count``: take the public count the page states (``round(fraction·N)``) on a board without noise;
    ``False`` on a board seen to score a fresh subset of the rows (the stated count is not what is scored there).

    ``n_public``: the number of public rows if known; by default it is measured
    (:func:`attacks.capacity.public_count.estimate_public_count`, 2 queries on a small split). A board that scores
    every row (no split, or a public fraction of 1) is the plain capacity attack, unless ``hidden_split`` says
    the board scores fewer rows than it states (the fingerprint saw rows that never move): the count is then
    measured whatever the metadata says. Multiclass log loss, and paper 001's Brier, norm-like and
    Itakura–Saito losses (binary or K-class, on their own row losses): the ``K + 1``-state construction of
    :func:`~attacks.capacity.ternary.ternary_split_attack`, the public count from reciprocal pairs of the
    metric (:func:`~attacks.capacity.public_count.reciprocal_row`)."""
    classes, loss = require_capacity_metric(oracle, noise_bound)
    general = loss is not None and not loss.is_log
    fraction = BoardFacts.of(oracle).public_fraction
    n = oracle.n_rows
    if n_public is None:  # an oracle that knows it (a MutNet hash board: its buckets are virtual rows)
        n_public = BoardFacts.of(oracle).n_public
    if n_public is None and (fraction is None or float(fraction) >= 1.0) and not hidden_split:
        return _every_row(oracle, noise_bound=noise_bound, top=top, check=check, budget=budget)
    wasted = 0
    if n_public is None and not hidden_split and stated_count and noise_bound == 0:
        # Read, not measured: a page that states its public fraction draws round(fraction·N) public rows
        # (scoring.public_split_mask), so the count costs no calibration query. A count that is not the board's
        # contradicts the releases (AttackFailed); then it is measured after all. Not under a noise bound: there a
        # design fails for the noise too (fresh flips), and each retry would spend its queries before failing.
        stated = BoardFacts.of(oracle).stated_public_count
        if stated is not None and 0 < stated < n:
            started = oracle.queries
            try:
                result = _design(oracle, stated, classes, loss if general else None, noise_bound=noise_bound,
                                 top=top, check=check, budget=budget)
            except AttackFailed:
                wasted = oracle.queries - started
                budget = left_of(budget, wasted)
                if budget is not None and budget <= 0:
                    raise
            else:
                result.details["calibration_queries"] = 0
                result.details["public_count"] = "stated"
                return result
    calibration = 0
    if n_public is None:
        limit = CALIBRATION_QUERIES if budget is None else min(CALIBRATION_QUERIES, budget)
        bound = noise_bound if count_bound is None else count_bound
        n_public, calibration = estimate_public_count(oracle, classes, noise_bound=bound, budget=limit,
                                                      loss=loss if general else None)
    if not 0 < n_public <= n:
        raise AttackFailed(f"n_public = {n_public} is not between 1 and the {n} rows: no public row to attack")
    result = _design(oracle, n_public, classes, loss if general else None, noise_bound=noise_bound, top=top,
                     check=check, budget=left_of(budget, calibration))
    result.queries += calibration + wasted
    result.details["calibration_queries"] = calibration
    if wasted:
        result.details["public_count"] = f"measured ({wasted} queries on the stated count failed)"
    return result


def _design(
    oracle: Oracle, n_public: int, classes: int | None, loss: RowLoss | None, *, noise_bound: float,
    top: int | None, check: bool, budget: int | None,
) -> AttackResult:
    """The split design for ``n_public`` public rows: every row scored, the ternary (or K + 1-state) queries,
    or, for binary log loss at float64, the mirrored pairs."""
    if n_public == oracle.n_rows:
        return _every_row(oracle, noise_bound=noise_bound, top=top, check=check, budget=budget)
    if oracle.decimals is not None or classes is not None:
        # Every metric but binary log loss at float64 (whose window the mirrored pairs suit better).
        return ternary_split_attack(oracle, n_public, noise_bound=noise_bound, check=check, budget=budget,
                                    classes=classes, loss=loss)
    return mirrored_split_attack(limited(oracle, budget), n_public, noise_bound=noise_bound, top=top, check=check,
                                 budget=budget)


def _every_row(
    oracle: Oracle, *, noise_bound: float, top: int | None, check: bool, budget: int | None
) -> AttackResult:
    """Every row is public: the plain capacity attack, reported as ``capacity_split`` with a full mask."""
    result = capacity_attack(oracle, noise_bound=noise_bound, top=top, check=check, budget=budget)
    result.attack = "capacity_split"
    result.details["public_mask"] = np.ones(oracle.n_rows, dtype=bool)
    result.details["n_public"] = oracle.n_rows
    return result


def mirrored_split_attack(
    oracle: Oracle,
    n_pub: int,
    *,
    noise_bound: float = 0.0,
    top: int | None = None,
    check: bool = True,
    round_size: int = 1,
    budget: int | None = None,
) -> AttackResult:
    """The mirrored-pair construction (used for float64 releases, whose window is too narrow for the
    enumerating decoder of :func:`ternary_split_attack`). ``round_size`` > 1 sends that many submissions of
    independent queries together (:func:`~attacks.capacity.attack.run_rounds`). It cannot stop early (the mask
    needs every pair): the caller bounds the oracle (:func:`attacks.oracle.limited`); ``budget`` only decides
    whether the final ``check`` still fits."""
    started = time.perf_counter()
    queries_before = oracle.queries
    n = oracle.n_rows
    # Phase 1: the mask, from mirrored pairs. c = -ln(4p(1-p)) is kept where the 2^-53 grid of p moves c
    # by well under a step: relative grid error 2^-53/p ≈ 2^-51·e^c per row.
    # With at most 64 batch rows the grid error stays under u/32 when e^c <= 2^41·u.
    mode = "subset" if oracle.decimals is not None else "count"
    weight = float(TOP_ROWS_MAX + 4) if mode == "subset" else float((top or 6) + 4)
    single = ServerModel.build(
        n, oracle.eps, oracle.decimals, noise_bound, n_scored=n_pub, releases=2, batch_weight=weight
    )
    c_max = max(4.0, min(max_weight_real(oracle.eps) - 2 * LN2, math.log(single.unit * 2.0**41)))
    mask_model = ServerModel.build(
        n,
        oracle.eps,
        oracle.decimals,
        noise_bound,
        n_scored=n_pub,
        releases=2,
        max_real=c_max,
        min_unit=2.0**-41 * math.exp(c_max),
        batch_weight=weight,
    )
    k_top = top if top is not None else (0 if mode == "subset" else default_top(mask_model.cap))
    mask_state = CapacityState(labels=np.full(n, -1, dtype=np.int64), fresh=deque(range(n)))

    pairs: list[tuple[np.ndarray, np.ndarray, float, float]] = []

    def observe_pairs(queries: list[Query]) -> list[range]:
        planned = []
        for query in queries:
            rows, ks = query.row_weights()
            planned.append((rows, ks, mirrored_predictions(n, rows, ks, mask_model.unit)))
        # Each query is a mirrored pair, sent in order (the pair's two vectors, then the next pair's).
        released = submit_many(oracle, [v for _, _, pred in planned for v in (pred, 1.0 - pred)])
        windows = []
        for (rows, ks, pred), first, second in zip(planned, released[::2], released[1::2], strict=True):
            if first is None or second is None:
                raise AttackFailed("the leaderboard released nothing for a query; the attack needs every score")
            pairs.append((rows, pred[rows], float(first), float(second)))
            windows.append(mask_window((float(first), float(second)), mask_model, pred[rows], ks, n_pub))
        return windows

    # A round of r mirrored pairs is 2·r submissions.
    run_rounds(oracle, mask_state, mask_model, k_top, observe_pairs, mode=mode, round_size=max(round_size // 2, 1))
    mask = mask_state.labels == 1
    mask_queries = oracle.queries - queries_before
    if int(mask.sum()) != n_pub:
        raise AttackFailed(f"the recovered public mask has {int(mask.sum())} rows, the split has {n_pub}")
    # The pairs also carry labels: with the mask known, each pair's two scores pin Σ y_j·d_j over its public
    # rows; rows whose labels that leaves unique are done without another query.
    known = np.full(n, -1, dtype=np.int64)
    for _ in range(2):
        for rows, p, first, second in pairs:
            pair_labels(known, mask, rows, p, (first, second), mask_model)
    free_labels = int((known[mask] >= 0).sum())
    # Phase 2: the remaining public labels, an ordinary capacity instance on those rows.
    label_model = ServerModel.build(n, oracle.eps, oracle.decimals, noise_bound, n_scored=n_pub, batch_weight=weight)
    k2 = top if top is not None else (0 if mode == "subset" else default_top(label_model.cap))
    open_rows = np.flatnonzero(mask & (known < 0))
    label_state = CapacityState(labels=known.copy(), fresh=deque(open_rows.tolist()))
    run_rounds(oracle, label_state, label_model, k2, lambda qs: [w for w, _ in submit_queries(oracle, qs, label_model)],
               mode=mode, round_size=round_size)
    labels = np.where(mask, label_state.labels, -1)
    design_queries = oracle.queries - queries_before
    if check and n_pub > 0 and (budget is None or design_queries < budget):
        check_claims(oracle, labels, scored=mask, slack=noise_bound)
    return AttackResult(
        attack="capacity_split",
        labels=labels,
        queries=oracle.queries - queries_before,
        seconds=time.perf_counter() - started,
        details={
            "construction": "mirrored pairs for the mask, then the capacity construction on the public rows",
            "public_mask": mask,
            "n_public": n_pub,
            "mask_queries": mask_queries,
            "labels_from_mask_phase": free_labels,
            "label_queries": design_queries - mask_queries,
            "design_queries": design_queries,
            "mask_unit": mask_model.unit,
            "mask_weight_cap": mask_model.cap,
            "label_unit": label_model.unit,
            "label_weight_cap": label_model.cap,
            "counting_bound_public": counting_bound(n_pub, oracle.decimals, eps=oracle.eps, noise_bound=noise_bound),
        },
    )
