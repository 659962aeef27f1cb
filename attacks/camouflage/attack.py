"""``camouflage``: the capacity attack's exact lattice code, carried in moves of a few rows of an honest-looking
base vector instead of in rows of a constant 1/2 vector (issue 10, item 1; paper 001 §5, "benign looking").

**Why the base cancels.** Let ``b`` be the base (:func:`attacks.camouflage.base.honest_base`) and ``C`` its
unknown summed loss (it depends on every label). A query moves the rows of a set ``J`` to ``p_j``; its summed
loss is ``S = C + Σ_J [l0(p_j) − l0(b_j)] + Σ_J y_j·[d(p_j) − d(b_j)]`` with ``d = l1 − l0 = ln((1−p)/p)``: the
rows outside ``J`` add what they add to ``C``, whatever their labels. The code rows get
``d(p_j) = d(b_j) + k_j·u`` (lattice weight ``k_j``, unit ``u``), so ``S − C − known = u·Σ_J y_j k_j``: exactly
the capacity attack's observation (:mod:`attacks.capacity.attack` plans and decodes the digits), shifted by
the unknown ``C``.

**The unknown constant.** The first query is the base itself: ``C`` is known to within the released
rounding (the one server model, :func:`attacks.capacity.decoder.loss_window`). Every later query leaves an
interval for ``S``; with ``C`` in its interval the lattice total ``t`` is decoded (unit ``u`` just above the sum
of both widths), and then each ``t`` still possible gives ``C`` back within the query's own window, so the
interval for ``C`` shrinks query by query (the rounding boundaries fall at random offsets from ``C``: after
``k`` queries its width is about ``2/(k+1)`` of a rounding step). The first queries lose about one bit to the
wider window, the later ones almost nothing.

**Cover (stealth levels).** Every move is accounted for exactly, so the code survives cover moves:

* level 0: only the code rows move (a handful per query);
* level 1: every row whose label is already known gets a fresh honest-sized logit move each query (its loss
  change is known, so it costs nothing);
* levels 2 and 3: on top, a share of the rows whose label is still unknown moves by ``±jitter_logit`` in
  logit, enough that the queries differ from each other on ``changed_share`` of all rows (20 %, 62 %); those
  moves are unknown label-dependent terms, bounded by ``Σ|Δd|``, which widens the window (this is the cost of
  the cover, paid until enough labels are known for the known rows' free moves to be cover enough).

A refused query (``None`` or :class:`~attacks.result.SubmissionRefused`) is re-planned at the next level:
the attacker adapts. Measured (``benchmarks/probe_detector_rates.py``, 5 decimals, every label exact): 2,201 rows
174 queries undefended (capacity: 171), 193 through the default ``probe_detector`` with ``reject: true``, 277
through a strict one; 25,000 rows 2,746 (capacity 2,691), 3,425 and 10,101.

Labels are exact (confidence 1.0): a label is reported only when every labeling consistent with every released
score agrees on it; float64 error is bounded as in :mod:`attacks.server_model`.
"""

from __future__ import annotations

import copy
import math
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attacks.camouflage.base import fsum_with_error, honest_base, logit, row_losses, sigmoid
from attacks.capacity.attack import default_top, plan_query
from attacks.capacity.decoder import PRECISION_BITS, Query, lattice_range, loss_window
from attacks.capacity.design import TOP_ROWS_MAX, ServerModel, max_weight_real
from attacks.capacity.state import CapacityState
from attacks.catalogue import BoardFacts
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle, Released
from attacks.result import AttackFailed, AttackResult, SubmissionRefused

#: Rows a planned query may touch (``attacks.capacity.attack.plan_query``'s default).
MAX_CODE_ROWS = 96


@dataclass(frozen=True)
class Stealth:
    """The cover of one query: ``move_known`` (std of the fresh logit move of every row whose label is known;
    0 = none), ``changed_share`` (the share of all rows the queries should differ on; reached with known rows
    first, then unknown ones) and ``jitter_logit`` (the logit move of each unknown row used for that)."""

    move_known: float = 0.0
    changed_share: float = 0.0
    jitter_logit: float = 0.0


#: The levels a refused query escalates through. Levels 2 and 3 are set against ``probe_detector``'s
#: ``sparse_change`` (Kerckhoffs: the detector's code is public): moves of 1.5e-3 in logit clear its 1e-3
#: tolerance; 20 % of rows clears its default 10 % threshold, 62 % a strict 50 %, each with room for its row
#: sample's spread (512 rows: a standard deviation of at most 2.2 %).
LEVELS: tuple[Stealth, ...] = (
    Stealth(),
    Stealth(move_known=0.5),
    Stealth(move_known=0.5, changed_share=0.2, jitter_logit=1.5e-3),
    Stealth(move_known=0.5, changed_share=0.62, jitter_logit=1.5e-3),
)


def jitter_fraction(target: float, known_share: float) -> float:
    """The share ``f`` of unknown rows to move by ``±a`` (random sign, fresh each query) so that the query differs
    on ``target`` of all rows from the base and from every earlier query when every known row moves. Against the
    base (or a query without cover) the moved rows differ: ``k + (1 − k)·f``; against another covered query a row
    differs when it moved in exactly one of them or in both with opposite signs, ``2f − 1.5f² >= f`` for
    ``f <= 2/3``. So ``f = (target − k)/(1 − k)``.

    >>> jitter_fraction(0.0, 0.0), jitter_fraction(0.62, 0.0), jitter_fraction(0.62, 0.7)
    (0.0, 0.62, 0.0)
    """
    if known_share >= target or target <= 0:
        return 0.0
    return min(1.0, (target - known_share) / (1.0 - known_share))


@dataclass
class Cover:
    """A query's non-code moves and their exactly-accounted effect on the summed loss."""

    rows: np.ndarray
    values: np.ndarray
    known_shift: float  # Σ over moved rows of the known part of the loss change
    unknown_low: float  # bounds on Σ y_i·Δd_i over moved rows whose label is unknown
    unknown_high: float
    error: float  # float64 error of the three sums above


def draw_cover(
    base: np.ndarray, base_z: np.ndarray, labels: np.ndarray, stealth: Stealth, rng: np.random.Generator, eps: float,
    exclude: np.ndarray | None = None,
) -> Cover:
    """Draw the cover moves for one query (rows in ``exclude`` stay put) and account for them."""
    n = len(base)
    free = np.ones(n, dtype=bool) if exclude is None else ~exclude
    known = (labels >= 0) & free
    unknown = (labels < 0) & free
    moved_known = np.flatnonzero(known) if stealth.move_known > 0 else np.zeros(0, dtype=np.int64)
    f = jitter_fraction(stealth.changed_share, float((labels >= 0).mean())) if stealth.jitter_logit > 0 else 0.0
    candidates = np.flatnonzero(unknown)
    moved_unknown = candidates[rng.random(len(candidates)) < f] if f > 0 else np.zeros(0, dtype=np.int64)
    z_known = np.clip(base_z[moved_known] + rng.normal(0.0, max(stealth.move_known, 0.0), len(moved_known)), -8, 8)
    signs = rng.choice((-1.0, 1.0), size=len(moved_unknown))
    z_unknown = base_z[moved_unknown] + signs * stealth.jitter_logit
    rows = np.concatenate([moved_known, moved_unknown]).astype(np.int64)
    return account(base, labels, rows, sigmoid(np.concatenate([z_known, z_unknown])), eps)


def account(base: np.ndarray, labels: np.ndarray, rows: np.ndarray, values: np.ndarray, eps: float) -> Cover:
    """The exact accounting of cover moves ``rows → values``: a known row's whole loss change is known; an unknown
    row's label-0 change is known and ``y·Δd`` is not (only bounded)."""
    known = labels[rows] >= 0
    n0, n1 = row_losses(values, eps)
    o0, o1 = row_losses(base[rows], eps)
    terms = np.where(known & (labels[rows] == 1), n1 - o1, n0 - o0)
    magnitude = n0 + n1 + o0 + o1
    shift, error = fsum_with_error(terms, magnitude)
    delta_d = np.where(known, 0.0, (n1 - n0) - (o1 - o0))
    high = math.fsum(np.maximum(delta_d, 0.0).tolist())
    low = math.fsum(np.minimum(delta_d, 0.0).tolist())
    error += 4 * 2.0**-52 * float(np.sum(magnitude)) + 2.0**-52 * (abs(high) + abs(low))
    return Cover(rows, values, shift, low, high, error)


@dataclass
class CodeRows:
    """The code rows of a query at 128 bits: Σ of their label-0 loss changes, and the distance of their real
    ``Δd`` from the lattice (summed), for the predictions actually sent."""

    rows: np.ndarray
    values: np.ndarray
    shift: Any
    deviation: Any


def code_rows(query: Query, base: np.ndarray, base_d: np.ndarray, unit: float, eps: float) -> CodeRows:
    """The predictions of the query's code rows (``d(p) = d(b) + k·u``) and their exact accounting."""
    rows, ks = query.row_weights()
    target = base_d[rows] + ks.astype(np.float64) * unit
    values = 1.0 / (1.0 + np.exp(target))
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        lo_clip, hi_clip = mpfr(eps), one - mpfr(eps)
        u = mpfr(unit)
        shift = mpfr(0)
        deviation = mpfr(0)
        for pj, bj, kj in zip(values.tolist(), base[rows].tolist(), ks.tolist(), strict=True):
            q = min(max(mpfr(pj), lo_clip), hi_clip)
            r = min(max(mpfr(bj), lo_clip), hi_clip)
            l0q, l1q = -gmpy2.log(one - q), -gmpy2.log(q)
            l0r, l1r = -gmpy2.log(one - r), -gmpy2.log(r)
            shift += l0q - l0r
            deviation += abs((l1q - l0q) - (l1r - l0r) - kj * u)
    return CodeRows(rows, values, shift, deviation)


def _submit(oracle: Oracle, predictions: np.ndarray) -> Released:
    try:
        return oracle.submit(predictions)
    except SubmissionRefused:
        return None


class Constant:
    """Rigorous bounds ``[lo, hi]`` on the base's summed loss ``C`` (128-bit)."""

    def __init__(self, lo: Any, hi: Any) -> None:
        self.lo, self.hi = lo, hi

    @property
    def width(self) -> float:
        return float(self.hi - self.lo)

    def narrow(self, lo: Any, hi: Any) -> None:
        with local_precision(PRECISION_BITS):
            self.lo, self.hi = max(self.lo, lo), min(self.hi, hi)
        if self.lo > self.hi:
            raise AttackFailed("the released scores contradict each other: the base's loss has no consistent value "
                               "(noise beyond the assumed bound, or a server that does not score as modelled)")


def camouflage_attack(
    oracle: Oracle,
    *,
    seed: int = 0,
    noise_bound: float = 0.0,
    budget: int | None = None,
    level: int = 0,
    max_level: int = len(LEVELS) - 1,
    top_mode: str | None = None,
    extra: int = 5,
    scale: float = 1.5,
    check: bool = True,
) -> AttackResult:
    """Recover every label with camouflaged queries (see the module docstring). ``level`` is the starting
    stealth level (:data:`LEVELS`), ``max_level`` the highest a refused query escalates to; ``scale`` the
    base's logit spread; ``noise_bound`` an assumed bound on additive noise; ``budget`` caps the queries
    (the labels decoded so far are returned; so are they when a query is refused at ``max_level``); ``check``
    spends one more query on :func:`self_check`."""
    _require_binary_logloss(oracle)
    if BoardFacts.of(oracle).public_fraction is not None:
        raise AttackFailed("the oracle releases a public-split score; the camouflage attack needs every row scored")
    if not 0 <= level <= max_level < len(LEVELS):
        raise ValueError(f"stealth levels run from 0 to {len(LEVELS) - 1}; got level {level}, max_level {max_level}")
    started = time.perf_counter()
    queries_before = oracle.queries
    n, eps = oracle.n_rows, float(oracle.eps)
    rng = np.random.default_rng(seed)
    base = honest_base(n, rng, scale=scale)
    base_z = logit(base)
    base_d = -base_z
    l0, l1 = row_losses(base, eps)
    base_max = np.maximum(l0, l1)
    base_total = math.fsum(base_max.tolist()) * (1 + 1e-9)
    a_max = max_weight_real(eps)
    room = a_max - float(base_d.max()) - 1e-6
    mode = top_mode or ("subset" if oracle.decimals is not None else "count")
    server = ServerModel(n_rows=n, eps=eps, decimals=oracle.decimals, noise_bound=noise_bound, n_scored=n)

    def spent() -> int:
        return oracle.queries - queries_before

    released = _submit(oracle, base)
    if released is None:
        raise AttackFailed("the leaderboard refused even the honest-looking base vector")
    lo, hi = loss_window(float(released), server, base_total, server.rows_error(base_total, n))
    constant = Constant(lo, hi)
    state = CapacityState(labels=np.full(n, -1, dtype=np.int64), fresh=deque(rng.permutation(n).tolist()))
    refused = 0
    units: list[float] = []
    stopped: str | None = None
    design_limit = None if budget is None else budget - int(check)
    while state.fresh or state.carried:
        if design_limit is not None and spent() >= design_limit:
            stopped = f"the query limit ({budget}) was reached"
            break
        stealth = LEVELS[level]
        snapshot = (state.labels.copy(), deque(state.fresh), copy.deepcopy(state.carried), list(state.per_query))
        cover = draw_cover(base, base_z, state.labels, stealth, rng, eps)
        estimate = base_total + math.fsum((np.maximum(*row_losses(cover.values, eps)) - base_max[cover.rows]).tolist())
        estimate = max(estimate, 0.0) * (1 + 1e-9) + MAX_CODE_ROWS * (a_max + 1.0)
        window = 2 * float(server.error_bound(estimate, server.rows_error(estimate, n)))
        width = window + constant.width + (cover.unknown_high - cover.unknown_low) + 2 * cover.error + 1e-10
        unit = width * (1 + 1e-6) + 1e-12
        cap = math.floor(room / unit)
        if cap < 1:
            raise AttackFailed(f"the cover leaves no room for a code: window {width:.3g} exceeds {room:.3g}")
        model = ServerModel(n_rows=n, eps=eps, decimals=oracle.decimals, noise_bound=noise_bound, n_scored=n,
                            unit=unit, cap=cap)
        k_top = 0 if mode == "subset" else default_top(cap)
        query = plan_query(state, model, k_top, mode=mode, extra=extra)
        code = code_rows(query, base, base_d, unit, eps)
        touched = np.zeros(n, dtype=bool)
        for digit in query.digits:
            touched[digit.group.rows] = True
        if touched[cover.rows].any():  # code rows stay out of the cover (the cover was drawn before the plan)
            keep = ~touched[cover.rows]
            cover = account(base, state.labels, cover.rows[keep], cover.values[keep], eps)
        predictions = base.copy()
        predictions[cover.rows] = cover.values
        predictions[code.rows] = code.values
        changed = np.concatenate([cover.rows, code.rows])
        new_max = np.maximum(*row_losses(predictions[changed], eps))
        loss_bound = max(base_total + math.fsum((new_max - base_max[changed]).tolist()), 0.0) * (1 + 1e-9)
        released = _submit(oracle, predictions)
        if released is None:
            refused += 1
            state.labels, state.fresh, state.carried, state.per_query = snapshot
            if level >= max_level:
                stopped = f"a camouflaged query was refused at stealth level {level} (the highest allowed)"
                break
            level += 1
            continue
        units.append(unit)
        lo, hi = loss_window(float(released), server, loss_bound, server.rows_error(loss_bound, n))
        with local_precision(PRECISION_BITS):
            slack = code.deviation + mpfr(cover.error)
            known = code.shift + mpfr(cover.known_shift)
            t_lo = lo - constant.hi - known - mpfr(cover.unknown_high) - slack
            t_hi = hi - constant.lo - known - mpfr(cover.unknown_low) + slack
        t_values = lattice_range(t_lo, t_hi, unit)
        masks = query.decode(t_values)
        consistent = [t for t in t_values if query.split(t) is not None]
        with local_precision(PRECISION_BITS):
            u = mpfr(unit)
            c_lo = lo - known - mpfr(cover.unknown_high) - slack - max(consistent) * u
            c_hi = hi - known - mpfr(cover.unknown_low) + slack - min(consistent) * u
        constant.narrow(c_lo, c_hi)
        resolved = sum(state.absorb(d.group, m) for d, m in zip(query.digits, masks, strict=True))
        state.per_query.append(resolved)
    recovered = int((state.labels >= 0).sum())
    if recovered == 0 and stopped is not None:
        raise AttackFailed(f"camouflage decoded no label: {stopped}")
    confirmed = "not checked"
    if check and recovered:
        if budget is not None and spent() >= budget:
            confirmed = "not checked (no query left)"
        else:
            confirmed, level = self_check(oracle, base, base_z, state.labels, constant, server, base_total, rng,
                                          level, max_level)
    design = len(units)
    return AttackResult(
        attack="camouflage",
        labels=state.labels,
        queries=spent(),
        seconds=time.perf_counter() - started,
        details={
            "construction": "capacity lattice digits as moves of an honest-looking base (differences cancel it)",
            "stealth_level": level,
            "stopped": stopped,
            "confirmed": confirmed,
            "refused": refused,
            "design_queries": design,
            "labels_per_query": recovered / max(spent(), 1),
            "first_unit": units[0] if units else None,
            "last_unit": units[-1] if units else None,
            "constant_width": constant.width,
            "top_rows_max": TOP_ROWS_MAX,
        },
    )


#: The check's claimed rows sit at logits ``±U(CHECK_LOGITS)`` on their label: a wrong claim moves the summed loss
#: by at least ``CHECK_LOGITS[0]`` less a little, and the values spread over (0.018, 0.99995) are no spike (a vector
#: at ``1 − eps`` on every claim is one on imbalanced labels: all rows but a few at one value).
CHECK_LOGITS = (4.0, 10.0)


def self_check(
    oracle: Oracle, base: np.ndarray, base_z: np.ndarray, labels: np.ndarray, constant: Constant,
    server: ServerModel, base_total: float, rng: np.random.Generator, level: int, max_level: int,
) -> tuple[str, int]:
    """Stake every claimed label and compare the released score with the one the claims imply: the claimed rows
    at a confident logit (:data:`CHECK_LOGITS`) on their label, the others at the base (with the current level's
    cover), so the query looks like a confident model, not like :func:`attacks.confirm.check_claims`'s 1/2 rows
    (a spike). The base's unknown rows add ``C − Σ_claimed l(b_i)``, known within ``C``'s interval; one wrong
    claim moves the summed loss by at least ``CHECK_LOGITS[0]`` less the loss at the claimed side. Raises
    :class:`AttackFailed` on a mismatch; a refusal escalates the cover once per level.
    Returns ``("passed" | "uninformative (…)", level)``."""
    n, eps = len(base), server.eps
    claimed = np.flatnonzero(labels >= 0)
    confident = sigmoid(np.where(labels[claimed] == 1, 1.0, -1.0) * rng.uniform(*CHECK_LOGITS, len(claimed)))
    while True:
        cover = draw_cover(base, base_z, labels, replace(LEVELS[level], move_known=0.0), rng, eps)
        rows = np.concatenate([claimed, cover.rows[labels[cover.rows] < 0]])
        values = np.concatenate([confident, cover.values[labels[cover.rows] < 0]])
        moves = account(base, labels, rows, values, eps)
        predictions = base.copy()
        predictions[rows] = values
        new_max = np.maximum(*row_losses(values, eps))
        loss_bound = max(base_total + math.fsum((new_max - np.maximum(*row_losses(base[rows], eps))).tolist()),
                         0.0) * (1 + 1e-9)
        released = _submit(oracle, predictions)
        if released is not None:
            break
        if level >= max_level:
            raise AttackFailed("the confirmation query was refused: the claimed labels cannot be vouched for")
        level += 1
    lo, hi = loss_window(float(released), server, loss_bound, server.rows_error(loss_bound, n))
    with local_precision(PRECISION_BITS):
        expect_lo = constant.lo + mpfr(moves.known_shift) + mpfr(moves.unknown_low) - mpfr(moves.error)
        expect_hi = constant.hi + mpfr(moves.known_shift) + mpfr(moves.unknown_high) + mpfr(moves.error)
    if expect_hi < lo or expect_lo > hi:
        raise AttackFailed("confirmation failed: the released score is not the one the claimed labels imply; the "
                           "server does not behave as the attack assumed, so no label is claimed")
    one_wrong = CHECK_LOGITS[0] - 2 * float(np.log1p(np.exp(-CHECK_LOGITS[0])))
    if float(hi - lo) + float(expect_hi - expect_lo) >= one_wrong:
        return "uninformative (one wrong label moves the score less than the window)", level
    return "passed", level


def _require_binary_logloss(oracle: Oracle) -> None:
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed("the camouflage attack needs a binary log-loss leaderboard")
    if BoardFacts.of(oracle).arithmetic != "float64":
        raise AttackFailed("the camouflage attack models a float64 server (arithmetic='float64')")
