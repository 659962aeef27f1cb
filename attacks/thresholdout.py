"""``thresholdout``: label inference against Thresholdout (Dwork et al., Science 2015) as ``defenses.thresholdout``
runs it on a leaderboard: the reference side released exactly, the holdout side only through noisy
over-threshold answers that spend its budget.

What the defense releases for a submission: the *reference* mean (exact, at the board's decimals) unless
``|holdout − reference| > T̂ + Lap(4σ)``, then ``holdout + Lap(σ)`` and one unit of the participant's budget;
nothing once the budget is spent. The reference rows (a secret half) are therefore as exposed as on a plain
board, except that (i) which rows they are is unknown and (ii) about ``P(Lap(4σ) < −T̂) ≈ ½e^-1 ≈ 18 %`` of all
submissions come back as noisy holdout answers even when nothing differs, so the budget (100 by default) ends
every participant's releases after ~550 submissions.

The attack (ours): every row has three states on the reference mean — holdout (moves nothing), reference with
label 0, reference with label 1 — so a block of ``m`` rows at predictions chosen so that the ``3^m`` sums of
their moves are ``g`` apart (``g`` above the released resolution on the reference sum) is decoded by
enumeration: the release ``ln 2 + Σ/n_ref`` (every other row at ½) names one state per row. ``n_ref`` comes
first, from single-row probes at the clipping edge (a reference row labelled 1 moves the mean by
``(A − ln 2)/n_ref``; three near-integer
readings must agree, which noise alone seldom does). A release that matches no state is a holdout answer: the same
block is asked again. A holdout answer can match a state by chance (probability about ``3^m·10^-decimals /
(4σ)``), so the labels are given with that posterior, not as exact: confidence ``1 − P(holdout answer)·P(chance
match)``. Holdout rows get the majority class; their labels leak only through the noisy answers (ignored:
``σ = 1/√n_holdout`` on the mean is a whole row's swing at the defaults).

``accounts: k``: each account has its own holdout budget; when one's releases stop, the next goes on.

Needs ``n_ref`` readable from one row: ``(A − ln 2)/(r − ln 2)`` within ±½, i.e. ``n_ref² · 10^-decimals < A``
(5 decimals: up to ~1,800 reference rows, N ≈ 3,700); larger boards raise :class:`AttackFailed`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.catalogue import BoardFacts, Plan, Refusal
from attacks.ladder.common import edge_logit, row_losses
from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult, SubmissionRefused

LN2 = math.log(2.0)
#: Single-row probes spent reading the reference count at most.
READING_PROBES = 150
#: Rows per block (3^m states enumerated).
BLOCK = 4
#: Extra asks of a block whose release matched no state (holdout answers) before giving up on it.
RETRIES = 6
#: Share of submissions answered from the holdout at the defaults (P(Lap(4σ) < −4σ) = e^-1/2).
HOLDOUT_ANSWER_RATE = 0.5 * math.exp(-1.0)


def states(m: int) -> np.ndarray:
    """All ``3^m`` states (0 holdout, 1 reference label 0, 2 reference label 1), one line each."""
    idx = np.arange(3**m)
    return np.stack([(idx // 3**j) % 3 for j in range(m)], axis=1).astype(np.int64)


def design(m: int, gap: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Predictions for ``m`` rows whose state sums are at least ``gap`` apart (greedy over a logit grid), and the
    moves ``(m, 3)``: 0, loss − ln 2 for label 0, loss − ln 2 for label 1."""
    side = np.linspace(-edge_logit(eps) + 0.5, -0.05, 400)
    grid = np.concatenate([side, -side[::-1]])  # a label-1 row moves most below ½, a label-0 row above
    p_grid = 1 / (1 + np.exp(-grid))
    a = row_losses(p_grid, np.ones(len(grid), dtype=np.int64), eps) - LN2
    b = row_losses(p_grid, np.zeros(len(grid), dtype=np.int64), eps) - LN2
    sums = np.zeros(1)
    chosen: list[int] = []
    for _ in range(m):
        best, best_gap = -1, -1.0
        for i in range(len(grid)):
            cand = np.sort(np.concatenate([sums, sums + b[i], sums + a[i]]))
            g = float(np.diff(cand).min()) if len(cand) > 1 else math.inf
            if g > best_gap:
                best, best_gap = i, g
        chosen.append(best)
        sums = np.concatenate([sums, sums + b[best], sums + a[best]])
    moves = np.stack([np.zeros(m), b[chosen], a[chosen]], axis=1)
    if float(np.diff(np.sort(sums)).min()) < gap:
        raise AttackFailed(f"no {m}-row design separates its states by {gap:.3g} on the reference sum")
    return p_grid[chosen], moves


def thresholdout_fits(facts: BoardFacts) -> Plan | Refusal:
    """Rows that never move the score although none is private (Thresholdout's secret reference side), binary
    log loss: rank 40. As a rescue, once every exact plan failed (rank 41): where the board looked clean, rows
    never moved, or noise came and went — Thresholdout's signs; plain noise shows none of them and keeps its budget
    for the likelihood decoder. It reads the reference count first and gives up after at most 150 probes."""
    if facts.exact_failed:
        return _rescue(facts)
    if facts.refusing or facts.sticky or facts.subsetting:
        return Refusal("thresholdout", "needs every score released afresh over the same rows")
    if not facts.hidden_split:
        return Refusal("thresholdout", "no rows that never move on a board that scores every row")
    if not facts.binary_logloss:
        return Refusal("thresholdout", "binary log loss only")
    return Plan("thresholdout", {"budget": facts.budget_left, "prior": facts.prior}, "some rows never move the score "
                "although none is private: a secret reference side (Thresholdout); three states a row (holdout, "
                "reference 0, reference 1) decoded by blocks", rank=40)


def _rescue(facts: BoardFacts) -> Plan | Refusal:
    seen = facts.seen
    if not facts.rescue_board or seen is None:
        return Refusal("thresholdout", "a rescue on float64 binary log loss scoring every row, without a Ladder")
    looks = not seen.noise or bool(seen.only_public_moves) or abs(seen.baseline_offset) <= seen.tolerance
    if facts.withheld or facts.failed == "thresholdout" or (facts.budget_left or 101) <= 100 or not looks:
        return Refusal("thresholdout", "no sign of Thresholdout (or it failed already, or too few queries left)")
    return Plan("thresholdout", {"budget": facts.budget_left, "prior": facts.prior}, "an exact plan failed where "
                "Thresholdout's reference side may hide", rank=41, rescue=True)


@register("thresholdout", exact=False, truncatable=True, fits=thresholdout_fits,
          paper="ours against Dwork et al.'s Thresholdout (Science 2015, the reusable holdout)",
          board="binary log loss, every row scored by the page, some never moving the score",
          queries="blocks of rows, three states a row",
          precision="the reference mean released exactly at the board's decimals; noisy holdout answers retried")
def thresholdout(oracle: Oracle, *, budget: int | None = None, block: int = BLOCK,
                 prior: float | None = None) -> AttackResult:
    """Decode reference membership and labels three states a row at a time (module docstring). ``budget``: the
    submissions to spend, every account's together (``None``: ``2·N``); rows not reached are left to the
    floor.

    Paper: ours, against Thresholdout (Dwork et al., Science 2015; FIELD_NOTES). Queries: single-row probes for
    the reference count, then a block of ``block`` rows a query (retried when a holdout answer comes back).
    Precision: the reference mean as released (``n_ref² · 10^-decimals < A``); holdout answers are noise. The
    reference rows' labels on a 24-row board:

    >>> import numpy as np
    >>> from attacks import LocalOracle, run
    >>> y = (np.random.default_rng(3).random(24) < 0.6).astype(np.int64)
    >>> result = run("thresholdout", LocalOracle(y, defenses=[{"name": "thresholdout"}], seed=1))
    >>> sure = result.fill_confidence() >= 0.99
    >>> int(sure.sum()), result.details["reference_rows"], bool((result.labels[sure] == y[sure]).all())
    (12, 12, True)
    """
    if oracle.metric != "binary_logloss" or oracle.n_classes != 2:
        raise AttackFailed("thresholdout needs a binary log-loss board")
    n, eps = oracle.n_rows, oracle.eps
    decimals = oracle.decimals if oracle.decimals is not None else 12
    half = 0.5 * 10.0**-decimals + 1e-12
    limit = budget if budget is not None else 2 * n
    used = 0
    holdout_answers = 0

    accounts = BoardFacts.of(oracle).accounts
    account = BoardFacts.of(oracle).account
    switching = False  # only once the reference count is read: before that, silence is no Thresholdout sign

    def ask(p: np.ndarray) -> float | None:
        nonlocal used, account
        while used < limit:
            used += 1
            try:
                value = oracle.submit(p)
            except SubmissionRefused:
                value = None
            if value is not None:
                return float(value)
            if account + 1 >= accounts or not switching:
                return None
            account += 1  # this account's holdout budget is spent; the next one's is whole
            oracle.account = account  # type: ignore[attr-defined]
        return None

    state = np.full(n, -1, dtype=np.int64)  # -1 unknown, 0 holdout, 1 ref label 0, 2 ref label 1
    l1_edge = float(row_losses(np.array([eps]), np.array([1]), eps)[0])
    # n_ref: three reference rows labelled 1 must give the same count.
    readings: list[int] = []
    row = 0
    if (n / 2) ** 2 * half / (l1_edge - LN2) >= 0.45:
        raise AttackFailed(f"the reference count is not readable from one row at {decimals} decimals")
    n_ref: int | None = None
    while n_ref is None and row < min(n, READING_PROBES):
        p = np.full(n, 0.5)
        p[row] = eps
        r = ask(p)
        if r is None:
            break
        move = r - LN2
        if move > 10 * half:
            est = (l1_edge - LN2) / move
            spread = est * half / move
            # A reference row's reading is an integer up to the rounding; a holdout answer's is any number.
            if spread < 0.45 and abs(est - round(est)) <= spread + 0.05:
                readings.append(round(est))
                if readings.count(readings[-1]) >= 3:
                    n_ref = readings[-1]
        row += 1
    if n_ref is None:
        raise AttackFailed("could not read the reference count (budget, or no reference row labelled 1 found)")
    switching = True
    gap = 3.0 * n_ref * half
    p_block, moves = design(block, gap, eps)
    all_states = states(block)
    sums = moves[np.arange(block)[None, :], all_states].sum(axis=1)
    predicted = LN2 + sums / n_ref
    # A holdout answer is the holdout mean (near ln 2, like every state here) plus Laplace(σ), σ = 1/√n_holdout at
    # the defaults: it lands on one of the states' values with about this probability.
    sigma = 1.0 / math.sqrt(max(n - n_ref, 1))
    chance = min(1.0, len(predicted) * 2 * half / (2 * sigma))
    start = 0
    exhausted = False
    while start < n and not exhausted:
        rows = np.arange(start, min(start + block, n))
        k = len(rows)
        p = np.full(n, 0.5)
        p[rows] = p_block[:k]
        decoded = False
        for _ in range(RETRIES + 1):
            r = ask(p)
            if r is None:
                exhausted = True
                break
            sub = predicted if k == block else LN2 + moves[np.arange(k)[None, :], states(k)].sum(axis=1) / n_ref
            hits = np.flatnonzero(np.abs(sub - r) <= half + 1e-12)
            if len(hits) == 1:
                state[rows] = (all_states if k == block else states(k))[hits[0]]
                decoded = True
                break
            holdout_answers += 1
        if not decoded and not exhausted:
            break
        start += k
    ones_share = 0.5 if prior is None else float(prior)
    ref = state >= 1
    if ref.any():
        ones_share = float((state == 2).sum() / ref.sum()) if prior is None else ones_share
    majority = 1 if ones_share >= 0.5 else 0
    labels = np.full(n, majority, dtype=np.int64)
    confidence = np.full(n, max(ones_share, 1 - ones_share))
    sure = 1.0 - HOLDOUT_ANSWER_RATE * chance
    labels[state == 2] = 1
    labels[state == 1] = 0
    confidence[ref] = sure
    details: dict[str, Any] = {
        "reference_rows": int(n_ref), "reference_decoded": int(ref.sum()),
        "holdout_identified": int((state == 0).sum()),
        "rows_decoded": int((state >= 0).sum()), "holdout_answers": holdout_answers, "queries": used,
        "budget_exhausted": exhausted, "block": block, "label_confidence": sure, "accounts_used": account + 1,
        "reference_mask": (state >= 1).tolist(),
    }
    return AttackResult("thresholdout", labels, details=details, confidence=confidence)
