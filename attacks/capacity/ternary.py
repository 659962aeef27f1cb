"""The single-query three-state construction of ``capacity_split`` (rounded releases).

Only the ``n_pub`` public rows enter the released mean. Relative to every row at ``1/2``, a row sent at ``p``
adds nothing when it is private, ``v0 = -ln(1-p) - ln 2`` when it is public with label 0 and
``v1 = -ln p - ln 2`` when it is public with label 1: each row is a three-valued digit, and one released
score bounds ``Σ_batch v_state`` to a window of width about ``n_pub·10^-decimals``.

Each query sends the rows still ambiguous (a *carried* candidate list: every joint state of those rows that
all earlier scores allow) and ``k`` fresh rows at seeded random ``d = |ln((1-p)/p)|`` in ``[0.3, A - 1]``
(random side of ``1/2``), ``k`` the largest that keeps the expected number of surviving joint states near
:data:`MAX_SURVIVORS` (``C·3^k·width/spread``). The decoder is exhaustive and exact: a meet-in-the-middle
over the carried candidates and the ``3^k`` fresh states keeps *every* joint state whose sum (computed at
128 bits, compared with a rigorous float margin) lies in the window — :func:`attacks.capacity.decoder.loss_window`
bounds the server's rounding, noise and float64 error — and the exact public count ``n_pub`` prunes the
joint states that would need too many or too few public rows. A row is resolved when every surviving state
agrees on it; the rest is carried. Private rows and resolved rows sit at ``1/2`` and cost nothing.

Because a fresh row's three states are known to be about 70/15/15 (public fraction 0.3), the random
weights spread the sum of the likely states while the count constraint keeps the unlikely ones few: about
``log2(spread/width)`` bits per query against ``H(f) + f`` bits per row (1.18 at ``f = 0.3``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from functools import lru_cache

import numpy as np

from attacks import server_model
from attacks.capacity.decoder import PRECISION_BITS, loss_window
from attacks.capacity.design import LN2, TOP_ROWS_MAX, ServerModel, counting_bound, max_weight_real
from attacks.capacity.kary import build_model, to_submission
from attacks.capacity.row_loss import RowLoss
from attacks.confirm import check_claims
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult

PRIVATE, PUBLIC0, PUBLIC1 = 0, 1, 2
MAX_SURVIVORS = 4000
"""Design target: expected number of joint states a query leaves (carried candidates)."""
MAX_FRESH = 24
"""At most this many fresh rows per query (``3^12`` states per meet-in-the-middle half; with ``S`` states a
row, ``24·log 3 / log S`` rows)."""
HARD_SURVIVORS = 2_000_000
"""A decode leaving more joint states than this fails loudly instead of exhausting memory."""
SPREAD_GAUSS = math.sqrt(2.0 * math.pi * math.e)
SPREAD_SHARE_MIN = 0.05
"""A metric row's offsets are stretched to a random share of their reach, at least this (:func:`spread_rows`)."""


def ternary_patterns(m: int) -> np.ndarray:
    """Every vector in ``{0, 1, 2}^m`` (row ``i`` = the base-3 digits of ``i``), read-only."""
    return state_patterns(m, 3)


@lru_cache(maxsize=64)
def state_patterns(m: int, states: int) -> np.ndarray:
    """Every vector in ``{0..states-1}^m`` (row ``i`` = the base-``states`` digits of ``i``), read-only."""
    idx = np.arange(states**m, dtype=np.int64)[:, None]
    out = ((idx // states ** np.arange(m, dtype=np.int64)) % states).astype(np.uint8)
    out.setflags(write=False)
    return out


def state_values(p: np.ndarray, eps: float) -> tuple[np.ndarray, float]:
    """Per row: the contributions ``(0, v0, v1)`` (float64, rows × 3) relative to ``1/2``, computed at 128 bits
    from the floats actually sent (clipped as the server clips), and a bound on the rows' summed loss."""
    values = np.zeros((len(p), 3))
    loss_bound = 0.0
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        ln2 = gmpy2.log(mpfr(2))
        lo_clip, hi_clip = mpfr(eps), one - mpfr(eps)
        for j, pj in enumerate(p.tolist()):
            q = min(max(mpfr(pj), lo_clip), hi_clip)
            l0 = -gmpy2.log(one - q)
            l1 = -gmpy2.log(q)
            values[j, PUBLIC0] = float(l0 - ln2)
            values[j, PUBLIC1] = float(l1 - ln2)
            loss_bound += float(max(l0, l1)) * (1 + 1e-12)
    return values, loss_bound


def kary_state_values(q: np.ndarray, eps: float) -> tuple[np.ndarray, float]:
    """The K-class analogue of :func:`state_values`: per row (``q`` rows × K, the floats sent) the contributions
    ``(0, l_0 - ln K, …, l_{K-1} - ln K)`` relative to a row at ``1/K`` (state ``c + 1`` = public with label
    ``c``), each loss computed at 128 bits after the server's clipping and renormalisation; and a bound on the
    rows' summed loss."""
    k = q.shape[1]
    values = np.zeros((len(q), k + 1))
    loss_bound = 0.0
    with local_precision(PRECISION_BITS):
        one = mpfr(1)
        ln_k = gmpy2.log(mpfr(k))
        lo_clip, hi_clip = mpfr(eps), one - mpfr(eps)
        for j, row in enumerate(q.tolist()):
            clipped = [min(max(mpfr(v), lo_clip), hi_clip) for v in row]
            log_total = gmpy2.log(sum(clipped, mpfr(0)))
            losses = [log_total - gmpy2.log(v) for v in clipped]
            values[j, 1:] = [float(loss - ln_k) for loss in losses]
            loss_bound += float(max(losses)) * (1 + 1e-12)
    return values, loss_bound


def batch_window(
    released: float, model: ServerModel, loss_bound: float, n_batch: int, classes: int | None = None
) -> tuple[float, float]:
    """Rigorous bounds on ``Σ_batch v_state`` (the public batch rows' loss minus ``ln 2`` each, or ``ln K``
    each on a ``classes``-class board) from a score."""
    heavy = max_weight_real(model.eps) + 1.0
    free = LN2 if classes is None else math.log(classes)
    row_ulps = float(model.n_scored * model.row_error(free, classes) + n_batch * model.row_error(heavy, classes))
    lo, hi = loss_window(released, model, model.n_scored * (free + 1e-12) + loss_bound, row_ulps)
    with local_precision(PRECISION_BITS):
        constant = model.n_scored * gmpy2.log(mpfr(2 if classes is None else classes))
        return float(lo - constant), float(hi - constant)


def metric_state_values(sent: np.ndarray, loss: RowLoss, server: ServerModel) -> tuple[np.ndarray, float, float]:
    """:func:`kary_state_values` for any metric of :class:`~attacks.capacity.row_loss.RowLoss` (Brier, norm-like,
    Itakura–Saito): per row of ``sent`` (the floats uploaded; ``p`` on a 2-class board, read as ``(1 − p, p)``)
    the contributions ``(0, l_0 − f, …, l_{K−1} − f)`` relative to a free row at ``1/K`` (loss ``f``, the same
    under every label), each loss exact at 128 bits; a bound on the rows' summed absolute loss; and a bound on
    the server's float64 error in those rows."""
    values = np.zeros((len(sent), loss.classes + 1))
    loss_bound = 0.0
    with local_precision(PRECISION_BITS):
        free, _ = loss.free(server)
        error = mpfr(0)
        for j, row in enumerate(sent.tolist()):
            losses = loss.exact_losses(row)
            values[j, 1:] = [float(value - free) for value in losses]
            loss_bound += float(max(abs(value) for value in losses)) * (1 + 1e-12)
            error += loss.row_error(server, row, losses)
        return values, loss_bound, float(error)


def metric_batch_window(
    released: float, model: ServerModel, loss: RowLoss, loss_bound: float, batch_error: float
) -> tuple[float, float]:
    """:func:`batch_window` for a :class:`~attacks.capacity.row_loss.RowLoss` metric: rigorous bounds on
    ``Σ_batch v_state`` (each public batch row's loss minus the free row's) from a score, every scored row
    counted at the free row's loss and error, the batch rows at theirs."""
    free, free_error = loss.free(model)
    with local_precision(PRECISION_BITS):
        total = model.n_scored * abs(float(free)) * (1 + 1e-12) + loss_bound
        lo, hi = loss_window(released, model, total, float(model.n_scored * free_error) + batch_error)
        constant = model.n_scored * free
        return float(lo - constant), float(hi - constant)


def spread_rows(loss: RowLoss, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` seeded random prediction rows (``count × K``) for a :class:`~attacks.capacity.row_loss.RowLoss`
    metric: a random offset vector (lightest class 0) stretched as far as a probability row reaches it, at most
    to the metric's box (Brier and norm-like: the simplex caps how far a row's K losses can spread; :meth:`
    RowLoss.feasible`), times a random share in ``[SPREAD_SHARE_MIN, 1)``: rows spread their states widely
    and differently."""
    k = loss.classes
    d = rng.uniform(0.0, 1.0, (count, k))
    d -= d.min(axis=1, keepdims=True)
    d /= np.maximum(d.max(axis=1, keepdims=True), 1e-12)
    lo, hi = np.zeros(count), np.full(count, loss.max_real)
    for _ in range(60):  # the largest stretch each row reaches (feasibility shrinks as the stretch grows)
        mid = 0.5 * (lo + hi)
        ok = loss.feasible(d * mid[:, None])
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    # A random share of that reach, so that rows of one direction (every 2-class row) still differ.
    stretch = lo * rng.uniform(SPREAD_SHARE_MIN, 1.0 - 1e-6, count)
    return loss.design(d * stretch[:, None], 1.0)


def split_reach(loss: RowLoss, n_pub: int, decimals: int | None, noise_bound: float) -> RowLoss:
    """``loss`` with its box capped where a batch's float64 error reaches the release's resolution.

    A query's window is the release's resolution (``n_pub·(10^-decimals + 2·noise_bound)`` of summed loss) plus
    the server's rounding of the batch rows, which grows with their losses (``≈ c·L`` a row). The rows' spread
    grows with ``L`` too, so past ``L = resolution/(c·rows)`` a wider row buys no more states a query, only a
    wider window: the Itakura–Saito box (``≈ 1/eps``) is cut there; Brier's and the norm-like loss's (≤ α) are
    far below it. The box is also cut at :data:`SPLIT_REACH_MAX`: a row whose heavy class costs ``≈ 1/q``
    leaves its light class at a loss that no longer moves (``≈ q²/2``), and rows whose "public, light label"
    states all sit at the same value are told apart only by their count."""
    server = server_model.ServerModel(n_pub, n_classes=loss.classes, eps=loss.eps, decimals=decimals,
                                      noise_bound=noise_bound, n_scored=n_pub)
    with local_precision(PRECISION_BITS):
        per_unit = float(server.formula_row_error(1.0, None if loss.classes == 2 else loss.classes))
    resolution = n_pub * ((10.0**-decimals if decimals is not None else 1e-15) + 2.0 * noise_bound)
    reach = min(resolution / (per_unit * (MAX_FRESH + 8)), SPLIT_REACH_MAX)
    if reach >= loss.max_real:
        return loss
    return dataclasses.replace(loss, max_real=max(reach, 4.0))


SPLIT_REACH_MAX = 64.0
"""The split design's widest row offset on a metric whose box is wider (Itakura–Saito; the log-loss design's
logits reach 33): its light class still moves by ``≈ (1/64)²/2`` of loss."""


def row_deviation(values: np.ndarray) -> float:
    """The typical spread of a row's state values (mean over rows of their standard deviation over the ``K + 1``
    states), which sizes a query's batch as ``d_max/3`` does for the log loss."""
    return float(np.std(values, axis=1).mean()) if len(values) else 0.0


def decode(
    carried: np.ndarray, carried_values: np.ndarray, fresh_values: np.ndarray, lo: float, hi: float,
    states: int = 3,
) -> np.ndarray:
    """Every joint state (carried candidate × fresh states) whose sum lies in ``[lo, hi]``, as rows of
    states over ``carried`` columns then fresh columns. Meet in the middle: the carried candidates with the
    first fresh rows on one side, the other fresh rows on the other, the latter sorted."""
    n_c = carried.shape[1]
    k = len(fresh_values)
    c = len(carried)
    # Balance the two sides: c·S^a against S^(k-a) (S states a row).
    log_s = math.log(states)
    a = int(min(k, max(0, round((k * log_s - math.log(max(c, 1))) / (2 * log_s)))))
    b = k - a
    pa, pb = state_patterns(a, states), state_patterns(b, states)
    csum = carried_values[np.arange(n_c)[None, :], carried].sum(axis=1) if n_c else np.zeros(c)
    fa = fresh_values[:a][np.arange(a)[None, :], pa].sum(axis=1) if a else np.zeros(1)
    fb = fresh_values[a:][np.arange(b)[None, :], pb].sum(axis=1) if b else np.zeros(1)
    scale = float(np.abs(carried_values).max(axis=1).sum() + np.abs(fresh_values).max(axis=1).sum())
    margin = 2.0**-45 * (n_c + k + 4) * (scale + abs(lo) + abs(hi) + 1.0)
    left = (csum[:, None] + fa[None, :]).ravel()
    order = np.argsort(fb, kind="stable")
    sorted_fb = fb[order]
    i0 = np.searchsorted(sorted_fb, lo - margin - left, side="left")
    i1 = np.searchsorted(sorted_fb, hi + margin - left, side="right")
    count = np.maximum(i1 - i0, 0)
    total = int(count.sum())
    if total > HARD_SURVIVORS:
        raise AttackFailed(f"a query left {total} joint states open; the design is broken")
    li = np.repeat(np.arange(len(left)), count)
    offsets = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    bi = order[np.repeat(i0, count) + offsets]
    ci, ai = np.divmod(li, len(fa))
    return np.concatenate([carried[ci], pa[ai], pb[bi]], axis=1)


def expected_survivors(c: int, n_rows: int, width: float, d_max: float) -> float:
    """``c·3^k`` joint states spread (uniformly over states) with deviation about ``d_max/3`` per row."""
    spread = max(d_max / 3.0 * math.sqrt(max(n_rows, 1)) * SPREAD_GAUSS, width)
    return c * width / spread


def ternary_split_attack(
    oracle: Oracle, n_pub: int, *, noise_bound: float = 0.0, check: bool = True, seed: int | None = None,
    budget: int | None = None, classes: int | None = None, loss: RowLoss | None = None,
) -> AttackResult:
    """Recover the public mask and public labels with single three-state queries (see the module).

    ``classes=K`` (a multiclass log-loss board): every row has ``K + 1`` states (private, public with label
    ``c``), a batch row is sent at seeded random probabilities ``q_c ∝ exp(-d_c)``, ``d_c`` uniform in
    ``[0, -ln(K·eps) - 1]``, the other rows at ``1/K``; the decoder is the same exhaustive meet in the middle.

    ``budget``: stop after that many design queries and return what is decoded so far (rows are settled
    in order, so a cut run still vouches for every label it returns; ``details["complete"]`` is ``False``); the
    final ``check`` is sent only within it.

    ``loss`` (a :class:`~attacks.capacity.row_loss.RowLoss` of Brier, norm-like or Itakura–Saito, any ``K >= 2``):
    the same ``K + 1`` states on the metric's own row losses. A batch row is a seeded random direction of label
    offsets stretched as far as a probability row reaches (:func:`spread_rows`), the other rows at ``1/K`` (a
    loss the same under every label); the state values are its exact losses minus that free loss
    (:func:`metric_state_values`) and the window bounds the metric's float64 formula (:func:`metric_batch_window`)."""
    started = time.perf_counter()
    queries_before = oracle.queries
    n = oracle.n_rows
    general = loss is not None and not loss.is_log
    if general:
        assert loss is not None
        classes = loss.classes
        loss = split_reach(loss, n_pub, oracle.decimals, noise_bound)
        model = build_model(n, classes, oracle.eps, oracle.decimals, noise_bound, n_scored=n_pub, loss=loss)
    else:
        model = ServerModel.build(
            n, oracle.eps, oracle.decimals, noise_bound, n_scored=n_pub, batch_weight=float(TOP_ROWS_MAX + 4),
            classes=classes,
        )
    states = 3 if classes is None else classes + 1
    width = model.unit
    d_max = min(33.0, max_weight_real(oracle.eps) - 1.0)
    if classes is not None:
        d_max = min(d_max, -math.log(classes * oracle.eps) - 1.0)
    d_min = min(0.3, d_max / 2)
    if general:
        assert loss is not None  # a sample of the design's rows sizes the batches (d_max/3 is a row's spread)
        sample = to_submission(spread_rows(loss, np.random.default_rng(12345), 64))[0]
        d_max = 3.0 * row_deviation(metric_state_values(sample, loss, model)[0])
    rng = np.random.default_rng(seed if seed is not None else n * 1_000_003 + n_pub)
    known = np.full(n, -1, dtype=np.int64)
    next_fresh = 0
    rows_c = np.zeros(0, dtype=np.int64)
    carried = np.zeros((1, 0), dtype=np.uint8)
    guard = 4 * n + 64
    largest = 1
    design_queries = 0
    cut = False
    while next_fresh < n or len(rows_c):
        if budget is not None and design_queries >= budget:
            cut = True
            break
        if design_queries >= guard:
            raise AttackFailed("the three-state design made no progress; the observations are inconsistent")
        c = len(carried)
        k = 0
        limit = min(n - next_fresh, int(MAX_FRESH * math.log(3) / math.log(states) + 1e-9))
        while k < limit:
            if c * states ** (k + 1) * expected_survivors(1, len(rows_c) + k + 1, width, d_max) > MAX_SURVIVORS:
                break
            k += 1
        if k == 0 and c == 1 and next_fresh < n:
            k = 1
        rows = np.concatenate([rows_c, np.arange(next_fresh, next_fresh + k, dtype=np.int64)])
        next_fresh += k
        batch_error = 0.0
        if general:
            assert loss is not None
            pred = np.tile(loss.free_row(), (n, 1))
            pred[rows] = spread_rows(loss, rng, len(rows))
            pred, _ = to_submission(pred)
            values, loss_bound, batch_error = metric_state_values(pred[rows], loss, model)
        elif classes is None:
            d = rng.uniform(d_min, d_max, len(rows))
            side = rng.integers(0, 2, len(rows))
            p = np.where(side == 0, 1.0 / (1.0 + np.exp(d)), 1.0 / (1.0 + np.exp(-d)))
            pred = np.full(n, 0.5)
            pred[rows] = p
            values, loss_bound = state_values(p, oracle.eps)
        else:
            e = np.exp(-rng.uniform(0.0, d_max, (len(rows), classes)))
            q = e / e.sum(axis=1, keepdims=True)
            pred = np.full((n, classes), 1.0 / classes)
            pred[rows] = q
            pred, read = to_submission(pred)
            values, loss_bound = kary_state_values(read[rows], oracle.eps)
        released = oracle.submit(pred)
        design_queries += 1
        if released is None:
            raise AttackFailed("the leaderboard released nothing for a query; the attack needs every score")
        if general:
            assert loss is not None
            lo, hi = metric_batch_window(float(released), model, loss, loss_bound, batch_error)
        else:
            lo, hi = batch_window(float(released), model, loss_bound, len(rows), classes)
        joint = decode(carried, values[: len(rows_c)], values[len(rows_c) :], lo, hi, states)
        # The exact public count: the known public rows plus a candidate's must not exceed n_pub, and the rows
        # never queried must be able to make up the rest.
        known_public = int((known > 0).sum())
        public = (joint > 0).sum(axis=1) + known_public
        joint = joint[(public <= n_pub) & (public + (n - next_fresh) >= n_pub)]
        if len(joint) == 0:
            raise AttackFailed(
                "no assignment of states is consistent with the released score: the server's noise exceeds "
                "the assumed noise_bound, or it does not score as modelled"
            )
        constant = joint.min(axis=0) == joint.max(axis=0)
        known[rows[constant]] = joint[0, constant]
        rows_c = rows[~constant]
        # Distinct carried candidates × distinct fresh states are distinct, and so they stay without the
        # columns they agree on.
        carried = np.ascontiguousarray(joint[:, ~constant]) if len(rows_c) else np.zeros((1, 0), dtype=np.uint8)
        largest = max(largest, len(carried))
    mask = known > 0
    if cut:
        # A budget cut: the rows settled so far are exact; the rest stay unknown (-1), the mask partial.
        return AttackResult(
            attack="capacity_split", labels=np.where(mask, known - 1, -1), queries=oracle.queries - queries_before,
            seconds=time.perf_counter() - started,
            details={"construction": "single three-state queries, cut by budget", "public_mask": mask,
                     "n_public": n_pub, "mask_queries": design_queries, "complete": False,
                     "rows_settled": int((known >= 0).sum())},
        )
    if int(mask.sum()) != n_pub or (known < 0).any():
        raise AttackFailed(f"the recovered public mask has {int(mask.sum())} rows, the split has {n_pub}")
    labels = np.where(mask, known - 1, -1)
    if check and n_pub > 0 and (budget is None or design_queries < budget):
        check_claims(oracle, labels, scored=mask, slack=noise_bound)
    return AttackResult(
        attack="capacity_split",
        labels=labels,
        queries=oracle.queries - queries_before,
        seconds=time.perf_counter() - started,
        details={
            "construction": "single three-state queries (private / public-0 / public-1), exact enumeration",
            "public_mask": mask,
            "n_public": n_pub,
            "mask_queries": design_queries,
            "labels_from_mask_phase": n_pub,
            "label_queries": 0,
            "design_queries": design_queries,
            "largest_carried": largest,
            "window": width,
            "label_unit": model.unit,
            "label_weight_cap": model.cap,
            "counting_bound_public": counting_bound(
                n_pub, oracle.decimals, eps=oracle.eps, noise_bound=noise_bound, classes=classes or 2,
                spread=loss.spread if general and loss is not None else None,
            ),
            "metric": oracle.metric,
        },
    )
