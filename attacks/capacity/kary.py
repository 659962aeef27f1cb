"""The capacity construction for ``K`` classes: multiclass log loss (and paper 001's losses), every row scored.

Another metric (``brier``, ``norm_like``, ``itakura_saito``, also on 2 classes) runs the same lattice on its own
row losses: :class:`~attacks.capacity.row_loss.RowLoss` designs a row for the offsets ``k_c·u``, computes its
exact losses and bounds the server's rounding; the cap ``W`` comes from what a probability row can reach
(carried rows checked, unused classes lifted; see :mod:`attacks.capacity.row_loss`).

A row sent with probabilities ``q_c = exp(-k_c·u) / Z`` (``Z = Σ_c exp(-k_c·u)``, integers ``0 <= k_c <= W``)
adds ``k_y·u + ln Z`` to the summed loss when its label is ``y``; a row at ``1/K`` adds ``ln K`` whatever its
label. So one score fixes ``t = Σ_rows k_{row, y_row}`` (to within the window the release leaves, ``u`` just
above it) — the binary lattice of :mod:`attacks.capacity.attack` with a *weight per row and class* instead of
one weight per row. Everything else carries over:

* a digit is a group of rows with its candidate labelings (``{0..K-1}^k``, or what earlier scores left) and a
  ``k × K`` weight matrix; the value of a labeling is the sum of its rows' weights at their labels; digits
  sit at mixed-radix positions and one lattice total splits into one value per digit
  (:class:`~attacks.capacity.decoder.Query`, shared with the binary attack);
* fill digits: fresh rows with weights ``0, 1, …, K-1`` (span ``K``, injective), and one row with weights
  ``c mod r`` for the factor ``r < K`` of the room left (classes sharing a value are carried);
* the top digit costs no weight: ``m`` fresh rows whose ``K`` class weights are one 0 and ``K - 1`` distinct
  values in ``[V/2, V]`` (seeded search for the most entropic sum; each row's classes permuted per query, so
  that a constant or periodic labeling meets a fresh collision set each time), ``K^m`` about ``2^4·V`` labelings and at
  most ``2^18``; the few labelings sharing the observed sum are carried and separated by later queries (a
  seeded search for small weights giving the carried candidates distinct values, :func:`realize_k`). On Brier
  and the norm-like loss (K >= 3) a top drawn under the simplex's joint budget, rows beyond the cap
  (:mod:`attacks.capacity.reach_top`), replaces it where its sum is more entropic.

The K-ary counting bound: ``m`` labels of ``K`` classes span at most ``m·A`` of summed loss, so one query
separates at most ``m·M + 1`` of the ``K^m`` labelings, ``M = A/(N·δ)`` — ``K^m <= m·M + 1``
(:func:`attacks.capacity.design.counting_bound` with ``classes=K``; 8, 5 and 3 labels at N = 2,201 and 5
decimals for K = 3, 6 and 10). Measured by ``benchmarks/capacity_multiclass.py``.

Weights stay within ``W·u <= -ln(K·eps)`` so no probability is clipped; the decoder still computes every
row's losses exactly (128 bits) from the floats sent, clipped and renormalised as the server does, and its
window bounds the server's float64 error (``(2K + 8)`` roundings more per row,
:meth:`attacks.server_model.ServerModel.row_error`). Like the binary attack it never reports a label some
labeling consistent with every released score contradicts, and fails loudly on contradictions.
"""

from __future__ import annotations

import math
import time
from collections import deque
from functools import lru_cache
from itertools import product

import numpy as np

from attacks import server_model
from attacks.capacity.decoder import PRECISION_BITS, Digit, Group, Query, lattice_range, loss_window
from attacks.capacity.design import TOP_V_MAX, ServerModel, counting_bound, max_weight_real
from attacks.capacity.reach_top import reach_top_weights, sum_entropy
from attacks.capacity.row_loss import SPREAD_TOP_LOW, RowLoss
from attacks.capacity.search import REFERENCE
from attacks.capacity.state import CapacityState
from attacks.confirm import check_claims
from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult

TOP_LABELINGS_MAX = 1 << 18
"""The top digit's labelings are enumerated: at most this many."""
TOP_EXTRA_BITS = 4
"""The top digit gets about ``2^TOP_EXTRA_BITS·V`` labelings (a handful share each sum)."""
TOP_ROWS_MAX_K = 18
V_MAX = TOP_V_MAX
TOP_LOW = 0.5
"""A top row's non-zero class weights lie in ``[TOP_LOW·V, V]``: heavy rows spread the sum (more entropy)."""
"""The top digit's largest weight (the binary attack's :data:`~attacks.capacity.design.TOP_V_MAX`)."""


def kary_patterns(k: int, classes: int) -> np.ndarray:
    """Every labeling of ``k`` rows in ``{0..K-1}`` (row ``i`` = the base-K digits of ``i``), read-only."""
    return _kary_patterns(k, classes)


@lru_cache(maxsize=64)
def _kary_patterns(k: int, classes: int) -> np.ndarray:
    idx = np.arange(classes**k, dtype=np.int64)[:, None]
    out = ((idx // classes ** np.arange(k, dtype=np.int64)) % classes).astype(np.uint8)
    out.setflags(write=False)
    return out


def fresh_group(rows: list[int] | np.ndarray, classes: int) -> Group:
    rows = np.asarray(rows, dtype=np.int64)
    return Group(rows, kary_patterns(len(rows), classes))


def build_model(
    n_rows: int, classes: int, eps: float, decimals: int | None, noise_bound: float = 0.0,
    n_scored: int | None = None, loss: RowLoss | None = None,
) -> ServerModel:
    """The lattice for a ``K``-class server: the window with free rows at ``1/K`` and rows renormalised, and
    the cap ``W`` with ``W·u <= -ln(K·eps)`` (no probability below ``eps``). Another metric's ``loss``
    (:class:`~attacks.capacity.row_loss.RowLoss`) sets the cap from its box and widens the step by its own
    rounding (a loss of ``≈ 1/q`` rounds in proportion)."""
    batch_weight = float(TOP_ROWS_MAX_K + 4)
    if loss is None or loss.is_log:
        a_max = -math.log(classes * eps) - 1e-6
        return ServerModel.build(
            n_rows, eps, decimals, noise_bound, n_scored=n_scored, batch_weight=batch_weight,
            max_real=min(a_max, max_weight_real(eps)), classes=classes,
        )
    scored = n_rows if n_scored is None else n_scored
    server = server_model.ServerModel(n_rows, n_classes=classes, eps=eps, decimals=decimals,
                                      noise_bound=noise_bound, n_scored=scored)
    free, free_error = loss.free(server)
    with local_precision(PRECISION_BITS):
        heavy = batch_weight * loss.max_real + 64 * (float(free) + classes + 3)
        total = scored * free + heavy
        rows = scored * free_error + server.formula_row_error(heavy, None if classes == 2 else classes)
        width = float(2 * server.error_bound(total, rows))
    return ServerModel.build(
        n_rows, eps, decimals, noise_bound, n_scored=n_scored, batch_weight=batch_weight,
        max_real=loss.max_real, classes=classes, min_unit=width * (1.0 + 1e-6),
    )


def build_model_fitted(
    n_rows: int, classes: int, eps: float, decimals: int | None, noise_bound: float = 0.0,
    loss: RowLoss | None = None,
) -> tuple[ServerModel, RowLoss | None]:
    """:func:`build_model`, and the loss it runs on: a loss whose top band is narrower than the usual ¾ (the
    norm-like loss from K = 4 on) gets the usual band back where the cap cannot hold a top row's ``K − 1``
    distinct weights at all — there the narrow band's larger cap would only stall the lattice, and the usual
    band's smaller one refuses at once (no room) or runs as it always has."""
    model = build_model(n_rows, classes, eps, decimals, noise_bound, loss=loss)
    if loss is not None and not loss.is_log and loss.top_low > SPREAD_TOP_LOW and model.cap < classes - 1:
        loss = loss.with_spread_cap(SPREAD_TOP_LOW)
        model = build_model(n_rows, classes, eps, decimals, noise_bound, loss=loss)
    return model, loss


# --- weights -------------------------------------------------------------------------------------------------


def _values(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Values of every candidate under every weight matrix: ``weights`` is ``k × K × B``; result ``n × B``."""
    if REFERENCE.get():
        return _values_reference(patterns, weights)
    # One contiguous row gather per position, not an n × k × B temporary (integer sums: the same values).
    values = weights[0][patterns[:, 0]]
    for j in range(1, patterns.shape[1]):
        values += weights[j][patterns[:, j]]
    return values


def _values_reference(patterns: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`_values` as first written (the benchmark's same-run baseline, the equivalence tests)."""
    k = patterns.shape[1]
    return weights[np.arange(k)[None, :], patterns].sum(axis=1)


def _entropy_span(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of ``values`` (candidates × B): the entropy (bits) of a uniform candidate's value, and the span.

    The same floats as :func:`_entropy_span_reference`, several times faster: the columns are sorted, and each
    value's run length read off the run boundaries, along contiguous rows of the transpose (the strided axis-0
    sort and accumulates were most of the K-class Brier attack's time); the run lengths, the same integers, go
    back to the ``n × B`` layout, so that the mean adds them in the same order."""
    if REFERENCE.get():
        return _entropy_span_reference(values)
    n, b = values.shape
    s = np.sort(values.T, axis=1)
    span = s[:, -1] - s[:, 0] + 1
    flat = s.ravel()
    boundary = np.empty(flat.size, dtype=bool)
    boundary[0] = True
    np.not_equal(flat[1:], flat[:-1], out=boundary[1:])
    boundary[::n] = True  # every column starts a run
    starts = np.flatnonzero(boundary)
    lengths = np.diff(starts, append=flat.size)
    runs = np.ascontiguousarray(np.repeat(lengths, lengths).reshape(b, n).T)
    return math.log2(n) - np.log2(runs).mean(axis=0), span


def _entropy_span_reference(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_entropy_span` as first written (the benchmark's same-run baseline, the equivalence tests)."""
    n, b = values.shape
    s = np.sort(values, axis=0)
    span = s[-1] - s[0] + 1
    idx = np.arange(n)[:, None]
    start_mark = np.vstack([np.ones((1, b), dtype=bool), s[1:] != s[:-1]])
    end_mark = np.vstack([s[1:] != s[:-1], np.ones((1, b), dtype=bool)])
    start = np.maximum.accumulate(np.where(start_mark, idx, 0), axis=0)
    end = np.minimum.accumulate(np.where(end_mark, idx, n)[::-1], axis=0)[::-1]
    return math.log2(n) - np.log2(end - start + 1).mean(axis=0), span


def realize_k(patterns: np.ndarray, classes: int, max_span: int) -> np.ndarray | None:
    """A ``k × K`` weight matrix (entries ``>= 0``, at most ``max_span``) giving the candidate labelings
    ``patterns`` values of span at most ``max_span``, wasting the least range per bit resolved (a seeded
    search, cached on the candidate set; candidates may share a value, they are then carried on). ``None``
    if nothing useful fits."""
    n, k = patterns.shape
    if n <= 1:
        return np.zeros((k, classes), dtype=np.int64)
    found = _search(patterns.tobytes(), patterns.shape, classes, min(max_span, 1 << 20))
    return None if found is None else np.array(found, dtype=np.int64).reshape(k, classes)


#: Columns the pruned search scores first, to bound the score the others must beat.
SEARCH_CHUNK = 64


@lru_cache(maxsize=4096)
def _search(key: bytes, shape: tuple[int, int], classes: int, max_span: int) -> tuple[int, ...] | None:
    """The seeded weight search of :func:`realize_k`: per scale, ``B`` random ``k × K`` weight matrices, each
    scored by the range it wastes per bit it resolves, ``(log2 span − H) / H − 10⁻³·H``, the first best kept
    (a later scale only if strictly better). :func:`_best_column` scores only the columns that can win."""
    patterns = np.frombuffer(key, dtype=np.uint8).reshape(shape)
    n, k = shape
    rng = np.random.default_rng(int.from_bytes(key[:8].ljust(8, b"\0"), "little") ^ (n * 7919 + k * 31 + classes))
    batch = max(64, min(2000, 200_000 // max(n * k, 1)))
    best: tuple[float, tuple[int, ...]] | None = None
    for scale in (1, 2, 4, 8):
        top = max(2, (2 * n) // max(k, 1) + 2) * scale
        weights = rng.integers(0, top, size=(k, classes, batch))
        weights -= weights.min(axis=1, keepdims=True)  # each row's lowest class at 0
        if classes == 2:
            weights[:, 1] += weights[:, 0]  # two classes: class 0 at weight 0 (see to_submission)
            weights[:, 0] = 0
        values = _values(patterns, weights)
        if REFERENCE.get():
            found = _best_column_reference(values, weights, max_span)
        else:
            found = _best_column(values, weights, max_span, math.inf if best is None else best[0])
        if found is None:
            continue
        i, score = found
        if best is None or score < best[0]:
            best = (score, tuple(int(w) for w in weights[:, :, i].ravel()))
            if not REFERENCE.get() and _perfect(values[:, i]):
                break  # n distinct values on a span of n: no later scale's column is strictly better
    if best is None:
        return None
    return best[1]


def _perfect(column: np.ndarray) -> bool:
    """Whether a column's values are ``n`` distinct integers on a span of ``n``: the least score there is
    (``H = log2 n``, no range wasted; any other column scores at least ``10⁻³·(log2 n − H)`` more, far above the
    floats' rounding, and every perfect column scores the same floats)."""
    n = column.size
    return int(column.max() - column.min()) + 1 == n and np.unique(column).size == n


def _best_column_reference(values: np.ndarray, weights: np.ndarray, max_span: int) -> tuple[int, float] | None:
    """(the first column with the least score, its score), or ``None`` if no column is allowed: every column
    scored, as first written (the benchmark's same-run baseline, the equivalence tests)."""
    n = values.shape[0]
    entropy, span = _entropy_span(values)
    ok = (span <= max_span) & (weights.max(axis=(0, 1)) <= max_span) & (entropy >= min(1.0, math.log2(n)) - 1e-9)
    if not ok.any():
        return None
    waste = np.log2(span.astype(np.float64)) - entropy
    score = np.where(ok, waste / np.maximum(entropy, 1e-9) - 1e-3 * entropy, np.inf)
    i = int(np.argmin(score))
    return i, float(score[i])


def _best_column(values: np.ndarray, weights: np.ndarray, max_span: int, beat: float) -> tuple[int, float] | None:
    """:func:`_best_column_reference`'s answer wherever it matters — the same column and score whenever that score
    is below ``beat`` (the best of the earlier scales, which only a strictly better column replaces) — scoring few
    columns. The span and the weight cap need no sort; the score falls as the entropy ``H`` grows, and
    ``H <= min(log2 n, log2 span)``, so a column whose score at that entropy is above the least score seen so far
    (or ``beat``) cannot be the first least one. The first :data:`SEARCH_CHUNK` allowed columns are scored, then
    the later ones not ruled out, each by the same sort as the reference (a column's floats do not depend on the
    others scored with it, two or more)."""
    n = values.shape[0]
    span = values.max(axis=0) - values.min(axis=0) + 1
    allowed = np.flatnonzero((span <= max_span) & (weights.max(axis=(0, 1)) <= max_span))
    if allowed.size == 0:
        return None
    log_span = np.log2(span.astype(np.float64))
    top = np.minimum(log_span[allowed], math.log2(n))
    floor = np.where(top > 0, (log_span[allowed] - top) / np.maximum(top, 1e-9) - 1e-3 * top, -np.inf)
    bound = beat
    first: tuple[int, float] | None = None
    # The first chunk sets the bound; the columns after it that can still beat it are scored together.
    for ahead in (slice(0, SEARCH_CHUNK), slice(SEARCH_CHUNK, None)):
        # A relative margin: only columns sure to lose on the floats are skipped.
        columns = allowed[ahead][floor[ahead] <= bound + 1e-9 * max(1.0, abs(bound))]
        if columns.size == 0:
            continue
        scored = columns if columns.size >= 2 else np.repeat(columns, 2)
        entropy = _entropy_span(values[:, scored])[0][: columns.size]
        ok = entropy >= min(1.0, math.log2(n)) - 1e-9
        score = np.where(ok, (log_span[columns] - entropy) / np.maximum(entropy, 1e-9) - 1e-3 * entropy, np.inf)
        i = int(np.argmin(score))
        if score[i] < math.inf and (first is None or score[i] < first[1]):
            first = (int(columns[i]), float(score[i]))
            bound = min(bound, first[1])
    return first


def partial_k(patterns: np.ndarray, classes: int, max_span: int) -> np.ndarray:
    """Mixed-radix weights on the first varying rows (the classes a row still takes, numbered), as many as
    ``max_span`` allows; the first row alone takes its classes' numbers modulo ``max_span``."""
    k = patterns.shape[1]
    weights = np.zeros((k, classes), dtype=np.int64)
    radix = 1
    for j in range(k):
        present = np.unique(patterns[:, j])
        if len(present) < 2:
            continue
        if radix * len(present) > max_span:
            if radix == 1 and max_span >= 2:
                weights[j, present] = np.arange(len(present)) % max_span
            break
        weights[j, present] = np.arange(len(present)) * radix
        radix *= len(present)
    return weights


@lru_cache(maxsize=512)
def top_weights_k(v_max: int, m: int, classes: int, draws: int = 8, top_low: float = TOP_LOW) -> tuple[int, ...]:
    """``m × K`` weights in ``[0, v_max]`` (each row's class weights distinct, one of them 0) whose sum over a
    uniform labeling has the most entropy (seeded search): the top digit."""
    rng = np.random.default_rng(v_max * 1_000_003 + m * 101 + classes)
    best: tuple[float, tuple[int, ...]] = (-1.0, ())
    for _ in range(draws):
        rows = []
        for _ in range(m):
            low = max(1, int(v_max * top_low)) if v_max - int(v_max * top_low) >= classes else 1
            others = rng.choice(np.arange(low, v_max + 1), size=min(classes - 1, v_max - low + 1), replace=False)
            row = np.concatenate([[0], others, np.zeros(classes - 1 - len(others), dtype=np.int64)])
            rows.append(row if classes == 2 else rng.permutation(row))  # two classes: class 0 at 0
        weights = np.array(rows, dtype=np.int64)
        sums = np.zeros(1, dtype=np.int64)
        for row in weights[::-1]:  # labeling index = base-K digits, row 0 lowest
            sums = (sums[:, None] + row[None, :]).ravel()
        counts = np.bincount(sums)
        probs = counts[counts > 0] / len(sums)
        entropy = float(-(probs * np.log2(probs)).sum())
        if entropy > best[0]:
            best = (entropy, tuple(int(w) for w in weights.ravel()))
    return best[1]


def top_rows_k(v_max: int, classes: int) -> int:
    """Rows of the top digit: ``K^m`` about ``2^TOP_EXTRA_BITS·V``, within :data:`TOP_LABELINGS_MAX`."""
    target = math.log(max(v_max, 2) * 2.0**TOP_EXTRA_BITS) / math.log(classes)
    m = max(1, math.ceil(target))
    while m > 1 and classes**m > TOP_LABELINGS_MAX:
        m -= 1
    return min(m, TOP_ROWS_MAX_K)


# --- one query -----------------------------------------------------------------------------------------------


def reachable(
    weights: np.ndarray, patterns: np.ndarray, position: int, model: ServerModel, loss: RowLoss | None
) -> np.ndarray | None:
    """A carried digit's weights with the classes its candidates never take lifted to the row's largest
    weight (their value is never read; a spread row is easier to reach), or ``None`` if some row still asks
    ``loss`` for offsets no probability row reaches."""
    if loss is None or loss.is_log:
        return weights
    lifted = weights.copy()
    for j in range(patterns.shape[1]):
        absent = np.setdiff1d(np.arange(lifted.shape[1]), patterns[:, j])
        lifted[j, absent] = lifted[j].max()
    lifted -= lifted.min(axis=1, keepdims=True)
    if loss.classes == 2:
        return weights if loss.feasible(weights * position * model.unit).all() else None
    return lifted if loss.feasible(lifted * position * model.unit).all() else None


def top_digit_weights(v_max: int, rows: list[int], classes: int, loss: RowLoss | None) -> np.ndarray:
    """The top digit's ``m × K`` weights in ``[0, v_max]`` (:func:`top_weights_k`), each row's classes permuted
    per query, and for Brier or the norm-like loss a small top's padding zeros lifted (see below)."""
    m_top = len(rows)
    top_low = TOP_LOW if loss is None else loss.top_low
    weights = np.array(top_weights_k(v_max, m_top, classes, top_low=top_low), dtype=np.int64).reshape(m_top, classes)
    if classes > 2:
        # The same weights every query would put a constant (or periodic) labeling on the same sum, and so on
        # the same collision set, query after query: each row's class weights are permuted per query (seeded
        # by its rows), which keeps the sum's distribution over uniform labelings.
        rng = np.random.default_rng(rows[0] * 7919 + m_top)
        weights = np.array([rng.permutation(row) for row in weights])
    return spread_zeros(weights, loss)


#: The loss families whose rows the simplex's joint budget caps (:func:`reach_top` applies to them).
SIMPLEX_BOUND = ("squared_euclidean", "norm_like")


def reach_top(weights: np.ndarray, rows: list[int], v_cap: int, scale: float, loss: RowLoss) -> np.ndarray:
    """Brier or the norm-like loss: the top drawn under the simplex's own budget
    (:func:`attacks.capacity.reach_top.reach_top_weights`, rows beyond the cap) if its sum is more entropic than
    the banded ``weights``' and every row is reached; each row's classes permuted per query as in
    :func:`top_digit_weights`."""
    drawn = reach_top_weights(loss, v_cap, len(rows), scale)
    if drawn is None:
        return weights
    rng = np.random.default_rng(rows[0] * 7919 + len(rows) + 1)
    drawn = spread_zeros(np.array([rng.permutation(row) for row in drawn]), loss)
    if not loss.feasible(drawn * scale).all() or sum_entropy(drawn) <= sum_entropy(weights):
        return weights
    return drawn


def spread_zeros(weights: np.ndarray, loss: RowLoss | None) -> np.ndarray:
    """For Brier or the norm-like loss, the classes of a row that share its weight 0 beyond the first share
    its largest weight instead: a row of zeros and one large weight is what a probability row reaches least
    (a small top's padding, a row of classes modulo r); the shared classes are carried all the same."""
    if loss is None or loss.is_log or weights.shape[1] <= 2:
        return weights
    weights = weights.copy()
    for row in weights:
        zeros = np.flatnonzero(row == 0)
        row[zeros[1:]] = row.max()
    return weights


def plan_query_k(
    fresh: deque[int], carried: deque[Group], model: ServerModel, classes: int, max_rows: int = 96,
    loss: RowLoss | None = None,
) -> Query:
    """Pack carried groups (oldest first), fresh fill rows, then the top digit (see the module); ``loss``
    (another metric's row model) checks each carried row's weights can be reached."""
    cap = model.cap
    position = 1
    digits: list[Digit] = []
    rows_used = 0
    deferred: list[Group] = []
    while carried:
        group = carried.popleft()
        room = cap // position
        weights = realize_k(group.patterns, classes, room)
        if weights is not None:  # one the loss cannot reach: the mixed-radix fallback below, shrunk until it can
            weights = reachable(weights, group.patterns, position, model, loss)
        if weights is None or rows_used + len(group.rows) > max_rows:
            if digits:
                deferred.append(group)
                continue
            span = room
            weights = partial_k(group.patterns, classes, span)
            while reachable(weights, group.patterns, position, model, loss) is None and span > 2:
                span //= 2
                weights = partial_k(group.patterns, classes, span)
            weights = reachable(weights, group.patterns, position, model, loss)
            if weights is None:
                raise AttackFailed(f"no reachable weights resolve a carried group on {loss.metric if loss else ''}")
        digit = Digit.place(group, weights, position)
        digits.append(digit)
        rows_used += len(group.rows)
        position *= digit.span
    carried.extendleft(reversed(deferred))
    room = cap // position
    rows_left = max(0, max_rows - rows_used)
    # The last query: everything left injectively (mixed radix), one row on top for free.
    final = len(fresh) <= rows_left and classes ** max(len(fresh) - 1, 0) <= room
    if final:
        fill_rows = max(len(fresh) - 1, 0)
        v_target = 1
        m_top = min(len(fresh), 1)
    else:
        # The top digit's weights up to V <= V_MAX; the factor above it fills with span-K rows and one row
        # of span r < K (classes modulo r), so little of the room is wasted when it exceeds V_MAX.
        v_target = room // math.ceil(room / V_MAX) if room > V_MAX else room
        m_top = min(top_rows_k(v_target, classes), len(fresh), rows_left)
        fill_rows = len(fresh) - m_top
    # Fill: span-K rows while the room below the top allows, then one row at the remaining factor.
    fill_room = room // v_target if not final else room
    identity = np.arange(classes, dtype=np.int64)
    while fill_rows > 0 and fresh and rows_used < max_rows:
        if fill_room >= classes:
            weights = identity[None, :]
        elif fill_room >= 2 and not final:
            weights = spread_zeros((identity % fill_room)[None, :], loss)
        else:
            break
        if loss is not None and not loss.is_log and not loss.feasible(weights * position * model.unit).all():
            break  # a ladder of K weights this large is out of a Brier/norm-like row's reach: the top takes the room
        digit = Digit.place(fresh_group([fresh.popleft()], classes), weights, position)
        digits.append(digit)
        position *= digit.span
        fill_room //= digit.span
        fill_rows -= 1
        rows_used += 1
    if m_top > 0 and fresh and position <= cap:
        m_top = min(m_top, len(fresh))
        rows = [fresh.popleft() for _ in range(m_top)]
        if final:
            # Riding on top costs no span, but each weight times the position must stay within the cap:
            # classes beyond the room share values and are carried.
            modulus = cap // position + 1
            weights = spread_zeros((identity % modulus)[None, :], loss)
            while (loss is not None and not loss.is_log and modulus > 2
                   and not loss.feasible(weights * position * model.unit).all()):
                modulus -= 1  # fewer distinct values, smaller weights: what a Brier/norm-like row reaches
                weights = spread_zeros((identity % modulus)[None, :], loss)
        else:
            v_top = cap // position
            while True:
                weights = top_digit_weights(v_top, rows, classes, loss)
                if loss is None or loss.is_log or v_top <= 1 or loss.feasible(weights * position * model.unit).all():
                    break
                v_top = max(1, (v_top * 7) // 8)  # a small top's weights fall below V/2: smaller ones are reached
            if loss is not None and loss.family is not None and loss.family.name in SIMPLEX_BOUND and classes > 2:
                # Only where the simplex, not the box, caps a row (Itakura–Saito's box is ≈ 1/eps wide: drawing
                # and convolving its tops cost 100× the attack, 0.4 s → 36 s at K = 3, for the same queries).
                weights = reach_top(weights, rows, cap // position, position * model.unit, loss)
        digits.append(Digit.place(fresh_group(rows, classes), weights, position))
    if not digits:
        raise AttackFailed("the design produced an empty query")
    return Query(digits)


def lattice_room(oracle: Oracle, noise_bound: float = 0.0) -> int:
    """The weight cap ``W`` the K-ary lattice would have on ``oracle`` (0 when the metric is not covered):
    below 2 the construction refuses."""
    try:
        loss = RowLoss.for_metric(oracle.metric, int(oracle.n_classes), float(oracle.eps))
        model, _ = build_model_fitted(oracle.n_rows, int(oracle.n_classes), oracle.eps, oracle.decimals, noise_bound,
                                      loss=loss)
    except AttackFailed:
        return 0
    return int(model.cap)


def kary_predictions(
    n_rows: int, classes: int, rows: np.ndarray, ks: np.ndarray, unit: float, loss: RowLoss | None = None
) -> np.ndarray:
    """``1/K`` everywhere except the batch rows: ``q_c = exp(-k_c·u) / Σ exp(-k·u)`` (log loss), or the row
    another metric's ``loss`` designs for the same offsets."""
    out = np.full((n_rows, classes), 1.0 / classes)
    if len(rows):
        if loss is None or loss.is_log:
            e = np.exp(-ks.astype(np.float64) * unit)
            out[rows] = e / e.sum(axis=1, keepdims=True)
        else:
            out[rows] = loss.design(ks, unit)
    return out


def to_submission(pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What to upload for a ``rows × K`` probability matrix, and the matrix the server reads: a 2-class board
    takes the probability of class 1 and forms ``(1 - p, p)`` itself (one float subtraction, modelled). So
    that ``1 - p`` keeps its precision, the 2-class designs put weight 0 on class 0 (``p <= 1/2``)."""
    if pred.ndim == 2 and pred.shape[1] == 2:
        p = np.ascontiguousarray(pred[:, 1])
        return p, np.column_stack([1.0 - p, p])
    return pred, pred


def kary_window(
    released: float, model: ServerModel, pred_rows: np.ndarray, ks: np.ndarray, n_free: int
) -> range:
    """The lattice totals ``t = Σ k_{row, label}`` a released score allows (rigorous: every batch row's
    losses computed at 128 bits from the floats sent, clipped and renormalised as the server does; the
    server's float64 error and the release from :func:`attacks.capacity.decoder.loss_window`)."""
    classes = pred_rows.shape[1] if len(pred_rows) else model.n_classes
    ln_k = math.log(classes)
    with local_precision(PRECISION_BITS):
        u = mpfr(model.unit)
        one = mpfr(1)
        lo_clip, hi_clip = mpfr(model.eps), one - mpfr(model.eps)
        base = mpfr(0)
        deviation = mpfr(0)
        loss_bound = 0.0
        for q_row, k_row in zip(pred_rows.tolist(), ks.tolist(), strict=True):
            clipped = [min(max(mpfr(q), lo_clip), hi_clip) for q in q_row]
            total = sum(clipped, mpfr(0))
            losses = [gmpy2.log(total) - gmpy2.log(q) for q in clipped]
            shifted = [loss - k * u for loss, k in zip(losses, k_row, strict=True)]
            b = min(shifted)
            base += b
            deviation += max(shifted) - b
            loss_bound += float(max(losses)) * (1 + 1e-12)
        loss_bound += n_free * (ln_k + 1e-12)
        heavy = max_weight_real(model.eps) + 1.0
        row_ulps = float(n_free * model.row_error(ln_k, classes) + len(pred_rows) * model.row_error(heavy, classes))
        lo, hi = loss_window(released, model, loss_bound, row_ulps)
        constant = n_free * gmpy2.log(mpfr(classes)) + base
        return lattice_range(lo - constant - deviation, hi - constant, model.unit)


def metric_window(
    released: float, model: ServerModel, sent_rows: np.ndarray, ks: np.ndarray, n_free: int, loss: RowLoss
) -> range:
    """:func:`kary_window` for any metric of :class:`~attacks.capacity.row_loss.RowLoss`: every batch row's
    losses computed exactly (128 bits) from the floats sent (``sent_rows``: what was uploaded, ``p`` on a
    2-class board), the free rows' loss likewise, the server's float64 error of each from the metric's formula."""
    free, free_error = loss.free(model)
    with local_precision(PRECISION_BITS):
        u = mpfr(model.unit)
        base = mpfr(0)
        deviation = mpfr(0)
        row_error = n_free * free_error
        loss_bound = n_free * float(free) * (1 + 1e-12)
        for row, k_row in zip(sent_rows.tolist(), ks.tolist(), strict=True):
            losses = loss.exact_losses(row)
            shifted = [value - k * u for value, k in zip(losses, k_row, strict=True)]
            b = min(shifted)
            base += b
            deviation += max(shifted) - b
            loss_bound += float(max(abs(x) for x in losses)) * (1 + 1e-12)
            row_error += loss.row_error(model, row, losses)
        lo, hi = loss_window(released, model, loss_bound, float(row_error))
        constant = n_free * free + base
        return lattice_range(lo - constant - deviation, hi - constant, model.unit)


def all_labelings(n: int, classes: int) -> list[tuple[int, ...]]:
    """Every labeling of ``n`` rows (the brute-force reference of the tests, small ``n``)."""
    return list(product(range(classes), repeat=n))


# --- the attack ----------------------------------------------------------------------------------------------


def kary_capacity_attack(
    oracle: Oracle, *, noise_bound: float = 0.0, check: bool = True, budget: int | None = None,
    loss: RowLoss | None = None,
) -> AttackResult:
    """Recover every label of a ``K``-class board that scores every row: log loss, or the metric of ``loss``
    (:class:`~attacks.capacity.row_loss.RowLoss`: ``kl``, ``brier``, ``norm_like``, ``itakura_saito``, also
    on 2 classes). ``budget`` cuts the run and keeps what is decoded (``details["complete"]`` is then
    ``False``)."""
    started = time.perf_counter()
    queries_before = oracle.queries
    n, classes = oracle.n_rows, int(oracle.n_classes)
    model, loss = build_model_fitted(n, classes, oracle.eps, oracle.decimals, noise_bound, loss=loss)
    general = loss is not None and not loss.is_log
    if model.cap < 2:
        raise AttackFailed(
            f"a {oracle.metric} row of {classes} classes moves the score by at most {model.cap * model.unit:.3g} "
            f"for every pattern of offsets, against a step of {model.unit:.3g}: the lattice has no room "
            "(use bregman_powers)"
        )
    state = CapacityState(labels=np.full(n, -1, dtype=np.int64), fresh=deque(range(n)))
    spans: list[list[int]] = []
    stalled = 0
    while state.fresh or state.carried:
        before = (len(state.fresh), sum(len(g.patterns) for g in state.carried))
        if budget is not None and oracle.queries - queries_before >= budget:
            break
        query = plan_query_k(state.fresh, state.carried, model, classes, loss=loss)
        batch_rows, ks = query.row_weights()
        if general and len(ks):
            assert loss is not None
            if not loss.feasible((ks - ks.min(axis=1, keepdims=True)) * model.unit).all():
                raise AttackFailed(f"the capacity design asked {oracle.metric} for offsets no prediction row reaches")
        sent, pred = to_submission(kary_predictions(n, classes, batch_rows, ks, model.unit, loss))
        released = oracle.submit(sent)
        if released is None:
            raise AttackFailed("the leaderboard released nothing for a query; the capacity attack needs every score")
        if general:
            assert loss is not None
            window = metric_window(float(released), model, sent[batch_rows], ks, model.scored - len(batch_rows), loss)
        else:
            window = kary_window(float(released), model, pred[batch_rows], ks, model.scored - len(batch_rows))
        masks = query.decode(window)
        resolved = sum(state.absorb(d.group, m) for d, m in zip(query.digits, masks, strict=True))
        state.per_query.append(resolved)
        spans.append([d.span for d in query.digits])
        stalled = 0 if (len(state.fresh), sum(len(g.patterns) for g in state.carried)) != before else stalled + 1
        if stalled >= 3:
            raise AttackFailed("three capacity queries in a row resolved nothing: the lattice is too coarse for "
                               f"{oracle.metric} with {classes} classes at this precision")
    design_queries = oracle.queries - queries_before
    complete = bool((state.labels >= 0).all())
    if check and complete and (budget is None or design_queries < budget):
        check_claims(oracle, state.labels, slack=noise_bound)
    recovered = int((state.labels >= 0).sum())
    return AttackResult(
        attack="capacity",
        labels=state.labels,
        queries=oracle.queries - queries_before,
        seconds=time.perf_counter() - started,
        details={
            "construction": "K-ary mixed-radix lattice digits + carried top digit",
            "classes": classes,
            "unit": model.unit,
            "weight_cap": model.cap,
            "design_queries": design_queries,
            "labels_per_query": recovered / max(design_queries, 1),
            "counting_bound": counting_bound(
                model.scored, oracle.decimals, eps=oracle.eps, noise_bound=noise_bound, classes=classes,
                spread=None if loss is None else loss.spread,
            ),
            "metric": oracle.metric,
            "complete": complete,
            "spans": spans[:20],
        },
    )
