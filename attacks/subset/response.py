"""``randomized_response``: labels through *fresh* randomized response (``defenses/randomized_response.py``,
``mode="fresh"``: every submission is scored against labels flipped anew with probability ``p``; Warner 1965).

1. **One exact observation per row and query.** A group of ``K ≈ log2(A/W)`` rows at superincreasing logits
   (:func:`attacks.subset.design.binary_design`), every other row at 1/2 (loss ``ln 2`` under either label, so
   its flip is invisible): the release gives the *flipped* label ``y'`` of every group row exactly
   (:func:`attacks.subset.decoder.consistent`). Nothing better is possible per query: the flips are independent
   per row and submission, so a query's information about ``y_i`` passes through ``y'_i`` alone (data
   processing) — observing ``y'`` exactly on as many rows as the release can carry is the most it can tell.
2. **A sequential likelihood-ratio test per row.** Each observation adds ``±ln((1−p)/p)`` to the row's log odds
   (prior: the class balance the observations show); rows stop once the surest of them hold at most
   ``target`` expected wrong labels in all (about a posterior of ``1 − target/N`` each), the others are
   observed again, least-observed first (Wald's SPRT: on average ``ln(N/target) /
   ((1−2p)·ln((1−p)/p))`` observations per row).
3. **The flip rate** ``p`` is the host's disclosure if given, else estimated from repeated rows: two
   observations of one row disagree with probability ``2p(1−p)``.

Why repetition and not a code: the label is fixed and every observation of it goes through its own binary
symmetric channel, so the attacker cannot spread a label's information over a codeword; what it controls is
which rows each query observes, and observing each row until its posterior is confident is the SPRT, optimal
for one row's test. The information bound ``(1−2p)²·C`` (:func:`attacks.information.randomized_response_bits`)
counts bits of entropy; vouching for *every* label to ``1 − target/N`` costs the extra ``ln(N/target)``
factor above, which no attack avoids (a row observed ``t`` times is still wrong with probability
``≥ p^t``-ish). The benchmark prints both.
"""

from __future__ import annotations

import math
import time

import numpy as np

from attacks import information
from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult
from attacks.subset.attack import JITTER, Window
from attacks.subset.decoder import RowCode, agreed_labels, consistent, row_code
from attacks.subset.design import binary_design

#: The highest confidence a posterior reports (1.0 is kept for exact labels).
GUESS_CEILING = 1.0 - 1e-9
#: Flip rate assumed until repeats have measured it.
PRIOR_FLIP = 0.1


def contradicts(p: float, fitted: float, pairs: int) -> bool:
    """Whether ``pairs`` repeated reads whose fitted flip rate is ``fitted`` contradict a disclosed rate ``p``: their
    disagreement rate ``2f(1−f)`` more than 4 standard errors (and 0.005) from ``2p(1−p)``, with 200 pairs at least.

    >>> contradicts(0.02, 0.1, 500), contradicts(0.02, 0.021, 500), contradicts(0.02, 0.1, 50)
    (True, False, False)
    """
    if pairs < 200:
        return False
    d, seen = 2 * p * (1 - p), 2 * fitted * (1 - fitted)
    return abs(seen - d) > 4 * math.sqrt(max(d * (1 - d), 1e-6) / pairs) + 0.005


def estimate_flip(ones: np.ndarray, zeros: np.ndarray, *, iterations: int = 60) -> tuple[float, float, int]:
    """Maximum-likelihood flip rate and class balance from every row's counts of observed 1s and 0s (EM on
    the two-class mixture; the adaptive stopping of the repeats does not bias a likelihood estimate).
    Returns ``(p̂, π̂, pairs)``, ``pairs`` the pairs of observations of one row (none: the prior guess)."""
    n_obs = ones + zeros
    pairs = int((n_obs * (n_obs - 1) // 2).sum())
    seen = n_obs > 0
    if pairs == 0 or not seen.any():
        return PRIOR_FLIP, 0.5, pairs
    o, z = ones[seen].astype(np.float64), zeros[seen].astype(np.float64)
    total = float((o + z).sum())
    # Start from the pairwise disagreement rate, 2p(1−p).
    disagree = min(float((o * z).sum()) / pairs, 0.5)
    p = min(max((1 - math.sqrt(max(0.0, 1 - 2 * disagree))) / 2, 1e-4), 0.45)
    prior = 0.5
    for _ in range(iterations):
        w = posteriors(o, z, p, prior)
        prior = min(max(float(w.mean()), 1e-4), 1 - 1e-4)
        p = min(max(float((w * z + (1 - w) * o).sum()) / total, 1e-6), 0.499)
    return p, prior, pairs


def posteriors(ones: np.ndarray, zeros: np.ndarray, p: float, prior: float) -> np.ndarray:
    """``P(y = 1 | observations)`` per row for flip rate ``p`` and class balance ``prior``."""
    p = min(max(p, 1e-12), 0.5 - 1e-12)
    step = math.log((1 - p) / p)
    prior = min(max(prior, 1e-6), 1 - 1e-6)
    logit = math.log(prior / (1 - prior)) + (ones - zeros) * step
    return np.asarray(0.5 * (1 + np.tanh(0.5 * np.clip(logit, -700, 700))))


def settled(post: np.ndarray, target: float) -> np.ndarray:
    """Rows that need no more observations: the surest rows whose summed error probabilities stay within
    ``target`` (the expected wrong labels tolerated over the board). Spending that tolerance where it is
    cheapest, rather than as ``target/N`` on every row, lets rows stop one observation earlier whenever the
    per-row threshold falls just beyond a whole number of likelihood-ratio steps."""
    error = 1 - np.maximum(post, 1 - post)
    order = np.argsort(error, kind="stable")
    within = np.cumsum(error[order]) <= target
    out = np.zeros(len(post), dtype=bool)
    out[order[within]] = True
    return out


def randomized_response_attack(
    oracle: Oracle,
    *,
    p: float | None = None,
    budget: int | None = None,
    target: float = 1e-2,
    margin: float = 0.02,
    max_repeats: int = 60,
) -> AttackResult:
    """Every row's most likely label and its posterior (see the module docstring). ``p``: the disclosed flip
    rate (else estimated); ``target``: expected wrong labels tolerated over the board (:func:`settled`);
    ``budget`` caps the submissions; ``max_repeats`` caps one row's
    observations."""
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed(f"randomized_response: needs binary log loss, not {oracle.metric} with "
                           f"{oracle.n_classes} classes")
    started = time.perf_counter()
    n, eps = oracle.n_rows, oracle.eps
    start = oracle.queries
    limit = budget if budget is not None else 200 * n
    window = Window(oracle, n, n)
    design = binary_design(window.width(40.0), eps, margin=margin)
    if not design:
        raise AttackFailed("randomized_response: the release is too coarse for one row to show")
    k = len(design)
    ones = np.zeros(n, dtype=np.int64)
    zeros = np.zeros(n, dtype=np.int64)
    flip, pairs = (p, 0) if p is not None else (PRIOR_FLIP, 0)
    fitted = flip
    prior = 0.5
    j = 0
    while oracle.queries - start < limit:
        n_obs = ones + zeros
        if len(ones) and (j % 8 == 0 or j < 8):
            fitted, prior, pairs = estimate_flip(ones, zeros)
            flip = fitted if p is None or contradicts(p, fitted, pairs) else p
        post = posteriors(ones, zeros, flip, prior)
        sure = settled(post, target)
        # Until the flip rate is measured (a few hundred pairs), every row is seen at least twice.
        if p is None and pairs < 200:
            sure &= n_obs >= 2
        open_rows = np.flatnonzero(~sure & (n_obs < max_repeats))
        if len(open_rows) == 0:
            break
        group = open_rows[np.argsort(n_obs[open_rows], kind="stable")][:k]
        j += 1
        probe = np.full(n, 0.5)
        outside = 0
        while outside in group and outside < n - 1:
            outside += 1
        if outside not in group:
            probe[outside] = 0.5 + j * JITTER
        codes: list[RowCode] = []
        for row, q in zip(group, design, strict=False):
            probe[int(row)] = q
            codes.append(row_code(int(row), q, eps, subset=False))
        released = oracle.submit(probe)
        if released is None:
            raise AttackFailed("randomized_response: the leaderboard released no score; this attack needs every one")
        magnitude = float(sum(max(abs(v) for v in c.values) for c in codes))
        lo, hi = window.interval(float(released), magnitude)
        found = consistent(codes, lo, hi)
        if not found:
            raise AttackFailed("randomized_response: a release fits no labeling of its probe (noise or another "
                               "defense beyond rounding)")
        for row, label in agreed_labels(codes, found).items():
            if label == 1:
                ones[row] += 1
            else:
                zeros[row] += 1
    n_obs = ones + zeros
    fitted, prior, pairs = estimate_flip(ones, zeros)
    contradicted = p is not None and contradicts(p, fitted, pairs)
    flip = fitted if p is None or contradicted else p
    post = posteriors(ones, zeros, flip, prior)
    labels = np.where(n_obs > 0, (post >= 0.5).astype(np.int64), -1)
    confidence = np.where(n_obs > 0, np.minimum(np.maximum(post, 1 - post), GUESS_CEILING), 0.0)
    queries = oracle.queries - start
    base = information.rounding_bits(n, oracle.decimals, eps)
    bound = information.randomized_response_bits(flip, base)
    observed = n_obs > 0
    return AttackResult(
        "randomized_response",
        labels,
        confidence=confidence,
        details={
            "flip_rate": flip,
            "flip_rate_disclosed": p is not None,
            "flip_rate_check": "" if p is None else (
                f"the disclosed p {p:g} contradicts the {pairs} repeated reads (fitted {fitted:.3g}): the fitted rate "
                "used" if contradicted else "not contradicted"),
            "pairs": pairs,
            "balance": prior,
            "group_rows": k,
            "observations_per_row": float(n_obs.mean()),
            "complete": bool(settled(post, target).all()),
            "expected_wrong": float((1 - confidence[observed]).sum()),
            "bound_bits_per_query": bound,
            "bound_queries": information.queries_lower_bound(n, bound, prior),
            "bits_per_query": information.label_entropy_bits(int(observed.sum()), prior) / max(queries, 1),
            "seconds": time.perf_counter() - started,
        },
    )
