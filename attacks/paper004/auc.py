"""Paper 004, Section 3: AUC and log loss of the same submission, read together under fixed precision.

The paper's argument is a count (``2^n ≤ 10^φ (10^φ + 1)`` tuples); this module turns it into a decodable
construction. One probe learns the number of positives ``P`` from the log loss. Then each batch of ``b``
unknown rows gets predictions ``σ(−w_i)`` with logits ``w_i = g · 2^i`` and every other row 1/2:

* log loss: a label 1 on row ``i`` adds exactly ``w_i``, so the summed loss gives the code
  ``c = Σ y_i 2^i`` to within ``R − 1`` when the step ``g`` is ``R`` times finer than the log loss alone
  allows;
* AUC: all batch rows rank below the tied rest, so the number of correctly ordered (positive, negative)
  pairs is ``within(c) + (b − k)·P_o + P_o·N_o/2`` (``k`` positives in the batch, ``P_o``/``N_o`` positives
  and negatives outside it, ``within(c)`` the batch's own ordered pairs) — a second, different function of
  the labels.

The planner picks ``R`` (and with it ``b``) so that any two codes closer than ``R`` have AUC pair counts
farther apart than the AUC's release tolerance — checked by enumerating all ``2^b`` codes — so the pair
(log loss, AUC) names one labeling, and the decoder checks that exactly one code fits both released values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from attacks.exact import gmpy2, local_precision, mpfr
from attacks.oracle import MultiMetricOracle, Oracle, Released, limited, require_budget
from attacks.paper004.fit import auc_fallbacks, auc_fits, never_alone
from attacks.paper004.server import ServerModel
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult

# Enumerating 2^b codes to check a design costs memory and time; beyond this the log loss alone decides.
MAX_ENUMERATED_BATCH = 20
MAX_WINDOW = 64


@dataclass(frozen=True)
class Design:
    """A batch of ``size`` rows with logits ``step · 2^i``; the log loss pins the code to within
    ``window − 1``, the AUC separates codes that close."""

    size: int
    step: float
    window: int


def within_pairs(codes: np.ndarray, size: int) -> np.ndarray:
    """For each code (bit ``i`` = label of batch row ``i``, row ``i`` ranked above row ``j > i``), the
    number of (positive, negative) pairs of batch rows with the positive ranked higher.

    >>> within_pairs(np.array([0b01, 0b10, 0b011, 0b101]), 3).tolist()
    [2, 1, 2, 1]
    """
    codes = np.asarray(codes, dtype=np.int64)
    pairs = np.zeros_like(codes)
    negatives_below = np.zeros_like(codes)
    for i in reversed(range(size)):
        label = (codes >> i) & 1
        pairs += label * negatives_below
        negatives_below += 1 - label
    return pairs


def pair_counts(codes: np.ndarray, size: int, n_rows: int, positives: int) -> np.ndarray:
    """The AUC numerator (correctly ordered pairs, ties half) of a batch design for each code: batch rows
    below the tied rest, ordered among themselves by row."""
    codes = np.asarray(codes, dtype=np.int64)
    k = np.bitwise_count(codes.astype(np.uint64)).astype(np.int64)
    outside_pos = positives - k
    outside_neg = (n_rows - size) - outside_pos
    return within_pairs(codes, size) + (size - k) * outside_pos + 0.5 * outside_pos * outside_neg


def auc_tolerance(model: ServerModel, positives: int) -> float:
    """A bound on ``|released AUC − exact AUC| × P × (N − P)``, in pairs."""
    release = model.release_half_unit()
    return (release * (1 + 2**-40) + 2.0**-50 + model.noise_bound) * positives * (model.n_rows - positives)


def loss_tolerance(model: ServerModel, size: int) -> float:
    """The bound on the summed log loss of a batch design (any logits up to the clipping limit)."""
    magnitude = (model.n_rows - size) * math.log(2) + size * (model.logit_limit() + 1)
    return float(model.sum_tolerance(magnitude, model.n_rows))


def is_separable(design: Design, model: ServerModel, positives: int) -> bool:
    """Whether every two codes less than ``window`` apart have pair counts more than twice the AUC
    tolerance apart (so the released AUC tells them apart)."""
    if design.window == 1:
        return True
    counts = pair_counts(np.arange(2**design.size, dtype=np.int64), design.size, model.n_rows, positives)
    limit = 2 * auc_tolerance(model, positives)
    return all(
        bool((np.abs(counts[shift:] - counts[:-shift]) > limit).all()) for shift in range(1, design.window)
    )


def plan(model: ServerModel, positives: int, rows: int) -> Design:
    """The design carrying the most rows (at most ``rows``): for each window ``R``, the step
    ``g = 2.02·Δ/R`` and the largest batch whose top logit ``g · 2^(b-1)`` is not clipped.

    For a given size, the first window reaching it has the coarsest step and the fewest shifts to check;
    if that one is not separable, no larger window of the same size is.
    """
    best: Design | None = None
    limit = model.logit_limit()
    tried: set[int] = set()
    for window in range(1, MAX_WINDOW + 1):
        if best is not None and best.size == rows:
            break
        size, step = 0, 0.0
        for candidate in range(1, rows + 1):
            candidate_step = 2.02 * loss_tolerance(model, candidate) / window
            if candidate_step * 2 ** (candidate - 1) > limit:
                break
            size, step = candidate, candidate_step
        if size == 0 or (window > 1 and size > MAX_ENUMERATED_BATCH):
            break
        if size in tried or (best is not None and size <= best.size):
            continue
        tried.add(size)
        design = Design(size, step, window)
        if is_separable(design, model, positives):
            best = design
    if best is None:
        raise AttackFailed(
            "auc_logloss: even one row per query is beyond the released precision "
            f"({model.decimals if model.decimals is not None else 'all'} decimals, N = {model.n_rows})"
        )
    return best


def _released_pair(oracle: MultiMetricOracle, predictions: list[float]) -> tuple[Released, Released]:
    released = oracle.submit_all(predictions)
    return released[oracle.metric], released.get("auc")


def _sigmoid_neg(logit: float) -> float:
    """``σ(−logit) = 1 / (1 + e^logit)``, correctly rounded to float64."""
    with local_precision(160):
        return float(1 / (1 + gmpy2.exp(mpfr(logit))))


def count_positives(oracle: MultiMetricOracle, model: ServerModel) -> int:
    """Probe 0: every row at ``σ(−w0)``; the summed loss is ``N·softplus(−w0) + P·w0``."""
    n = model.n_rows
    tolerance = loss_tolerance(model, n)
    w0 = max(1.0, 4 * tolerance)
    if w0 > model.logit_limit():
        raise AttackFailed("auc_logloss: the released log loss cannot even count the positives")
    x0 = _sigmoid_neg(w0)
    summed = model.summed_loss(_released_pair(oracle, [x0] * n)[0])
    with local_precision(model.work_bits):
        x = mpfr(x0)
        weight = gmpy2.log((1 - x) / x)
        estimate = (summed + n * gmpy2.log(1 - x)) / weight
        low = max(int(gmpy2.ceil(estimate - tolerance / weight)), 0)
        high = min(int(gmpy2.floor(estimate + tolerance / weight)), n)
    if low != high:
        raise AttackFailed(f"auc_logloss: {high - low + 1} positive counts fit the first probe (expected one)")
    return low


def decode_batch(
    loss: Released, auc: Released, model: ServerModel, design: Design, positives: int, predictions: list[float]
) -> list[int]:
    """The one code whose summed loss and AUC pair count both fit the released values; raises otherwise."""
    size = design.size
    n = model.n_rows
    summed = model.summed_loss(loss)
    with local_precision(model.work_bits):
        xs = [mpfr(x) for x in predictions]
        zero_loss = gmpy2.fsum([-gmpy2.log(1 - x) for x in xs]) + (n - size) * gmpy2.log(mpfr(2))
        weights = [gmpy2.log((1 - x) / x) for x in xs]  # the exact logits of the submitted floats
        tolerance = loss_tolerance(model, size)
        centre = float((summed - zero_loss) / design.step)
        reach = tolerance / design.step + 2  # a little slack: the exact logits differ from step · 2^i
        codes = range(max(math.floor(centre - reach), 0), min(math.ceil(centre + reach), 2**size - 1) + 1)
        fits_loss = [
            c for c in codes
            if abs(zero_loss + gmpy2.fsum([w for i, w in enumerate(weights) if c >> i & 1]) - summed) <= tolerance
        ]
    if not fits_loss:
        raise AttackFailed("auc_logloss: no labeling of a batch fits the released log loss")
    if auc is None:
        raise AttackFailed("auc_logloss: the leaderboard released no AUC for a probe")
    counts = pair_counts(np.array(fits_loss, dtype=np.int64), size, n, positives)
    observed = float(auc) * positives * (n - positives)
    slack = auc_tolerance(model, positives)
    fits_both = [c for c, count in zip(fits_loss, counts.tolist(), strict=True) if abs(count - observed) <= slack]
    if len(fits_both) != 1:
        raise AttackFailed(
            f"auc_logloss: {len(fits_both)} labelings of a batch of {size} fit both released scores "
            "(expected exactly one): the scores are noisier or coarser than the server model says"
        )
    return [(fits_both[0] >> i) & 1 for i in range(size)]


def window_queries(model: ServerModel, positives: int) -> int:
    """Queries of ``auc_logloss``: the positive-counting probe, then one per batch of its design's size."""
    n = model.n_rows
    if positives in (0, n):
        return 1
    size = plan(model, positives, n).size
    return 1 + math.ceil(n / size)


@register("auc_logloss", fits=auc_fits("auc_logloss", window_queries, tiebreak=1),
          fallbacks=auc_fallbacks, applies=never_alone, paper="paper 004 §3 (log loss and AUC decoded together)",
          board="float64 binary log loss with AUC released beside it, every row scored, no noise",
          queries="1 + ⌈N / b⌉, b the log loss's batch plus log2 of the AUC's window",
          precision="float64 arithmetic; any released decimals on both scores; no noise beyond noise_bound")
def auc_logloss(oracle: Oracle, *, noise_bound: float = 0.0, budget: int | None = None) -> AttackResult:
    """Paper 004 (Aggarwal, Xu, Feyisetan, Teissier 2020), Section 3: log loss and AUC of the same submission
    decoded together under fixed precision.

    Needs a leaderboard that reports both (``LocalOracle(..., also_report=("auc",))`` and its
    ``submit_all``), float64 arithmetic (AUC has no MPFR model), any ``decimals``.

    Queries: ``1 + Σ ⌈rows / b⌉`` — one probe for the number of positives, then batches of ``b`` rows, where
    ``b`` is the log loss's own capacity ``⌊log2(L / (2.02·Δ))⌋ + 1`` (``L`` the clipping logit, ``Δ`` the
    summed-loss tolerance, ``N/2·10^-d`` at ``d`` decimals) plus ``log2 R`` extra rows when the AUC separates
    codes ``R`` apart. The AUC's resolution in pairs is ``P·(N−P)·10^-d/2``: it adds rows on small test sets
    (N = 306 at 5 decimals) and nothing at N = 25,000, where it only pins the count of positives.
    Time: ``O(2^b · R)`` to plan (cached per batch size), ``O(b · R)`` MPFR logs per batch to decode.

    ``budget``: the submissions it may spend. It cannot stop early (the decoded labels are checked against the
    count of positives), so it refuses once the count has planned its batches — ``1 + ⌈N / b⌉`` — if they do
    not fit, and never submits past the budget.

    Raises :class:`AttackFailed` if the oracle does not report AUC, the arithmetic is not float64, a
    released value is missing, no labeling or more than one fits both scores, or the decoded labels do not
    add up to the number of positives.

    Paper 004, Section 3 ("Adapting to Fixed Precision Arithmetic"). Precision: float64 arithmetic, any
    released decimals on both scores, no noise beyond ``noise_bound``. Twenty rows at 3 decimals: the AUC
    separates codes 3 apart, so a batch holds 13 rows — one probe, then two batches:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> labels = np.random.default_rng(0).integers(0, 2, 20)
    >>> result = run("auc_logloss", LocalOracle(labels, decimals=3, also_report=("auc",)), confirm=False)
    >>> bool((result.labels == labels).all()), result.queries, result.details["batch_size"], result.details["window"]
    (True, 3, 13, 3)
    """
    if not isinstance(oracle, MultiMetricOracle) or "auc" not in oracle.also_report:
        raise AttackFailed("auc_logloss needs a leaderboard that reports AUC beside the log loss (also_report)")
    model = ServerModel.of(oracle, noise_bound=noise_bound)
    if not model.is_float64:
        raise AttackFailed("auc_logloss needs a float64 server: AUC has no φ-bit model")
    require_budget("auc_logloss", 1, budget)
    oracle = cast(MultiMetricOracle, limited(oracle, budget))
    n = model.n_rows
    positives = count_positives(oracle, model)
    labels = np.full(n, -1, dtype=np.int64)
    if positives in (0, n):
        labels[:] = 1 if positives else 0
        return AttackResult("auc_logloss", labels, 0, 0.0, {"positives": positives, "batch_size": n})
    full = plan(model, positives, n)
    require_budget("auc_logloss", 1 + math.ceil(n / full.size), budget)
    designs = {full.size: full}  # plans depend only on how many rows a batch may take: full, then the rest
    start = 0
    while start < n:
        rows = min(n - start, full.size)
        if rows not in designs:
            designs[rows] = plan(model, positives, rows)
        design = designs[rows]
        predictions = [0.5] * n
        batch_predictions = [_sigmoid_neg(design.step * 2**i) for i in range(design.size)]
        if len(set(batch_predictions)) != design.size or max(batch_predictions) >= 0.5:
            raise AttackFailed("auc_logloss: the batch's predictions are not distinct below 1/2 in float64")
        predictions[start : start + design.size] = batch_predictions
        loss, auc = _released_pair(oracle, predictions)
        labels[start : start + design.size] = decode_batch(loss, auc, model, design, positives, batch_predictions)
        start += design.size
    if int(labels.sum()) != positives:
        raise AttackFailed(f"auc_logloss: decoded {int(labels.sum())} positives, the first probe counted {positives}")
    return AttackResult(
        "auc_logloss", labels, 0, 0.0,
        {"positives": positives, "batch_size": full.size, "window": full.window, "step": full.step},
    )
