"""Take over a fixed-step Ladder account that someone else opened (the fingerprint's edge probes): find the
count of ones and the step together, by threshold questions with constant predictions.

The fingerprint leaves the account with a released best ``R`` (a multiple of the unknown step ``η``) and one
or two fresh releases of label-free-by-count probes (every row at ``eps``: ``[c·A/N]_η``; every row at
``1 − eps``: ``[(N − c)·A/N]_η``). Every hypothesis ``(c, η)`` — ``η`` the step if given, else the defense's
defaults (``n^(-1/3)``, ``1/√n``) and the round steps (``{1, 2, 2.5, 5}·10^-j``) every release is a multiple
of — predicts each answer of the Ladder to a constant prediction ``q`` exactly: rejected (``R`` again) if
``s_c(q) >= R − η``, else ``[s_c(q)]_η``. Each query takes the ``q`` whose predicted answers split the
hypotheses most evenly (``q`` placed just either side of one hypothesis' threshold); the answer keeps the
hypotheses that predicted it. A step the host did not disclose is thereby identified rather than guessed: a
wrong step would make the block questions' answers mean something else.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import expit

from attacks.ladder.common import edge_logit, release_tolerance, row_losses, score_tolerance, submit
from attacks.oracle import Oracle
from attacks.result import AttackFailed

#: Round step multipliers a host is likely to choose (``{1, 2, 2.5, 5}·10^-j``).
ROUND_MULTIPLIERS = ("1", "2", "2.5", "5")


def round_steps(decimals: int | None) -> list[Fraction]:
    """Round steps from 5 down to ten units of the released precision (a step the rounding cannot show is
    no step a participant could observe) — or down to one unit when the releases show 3 decimals or fewer:
    a fixed step's own grid (0.01, say) is then what set the decimals the fingerprint read. (At finer
    precision one-unit steps would fit every exact release and blur the parameter-free Ladder.)"""
    finest = decimals if decimals is not None and decimals <= 3 else (decimals if decimals is not None else 12) - 1
    out = []
    for j in range(0, finest + 1):
        for m in ROUND_MULTIPLIERS:
            out.append(Fraction(repr(float(m) * 10.0**-j)))
    return out


def _softplus(x: float) -> float:
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


_LOSS_CACHE: dict[tuple[float, float], tuple[float, float]] = {}


def _losses(x: float, eps: float) -> tuple[float, float]:
    """The server's (loss if 1, loss if 0) of the constant prediction ``sigmoid(x)``."""
    key = (x, eps)
    if key not in _LOSS_CACHE:
        if len(_LOSS_CACHE) > 100_000:
            _LOSS_CACHE.clear()
        l1, l0 = (float(v) for v in row_losses(np.full(2, expit(x)), np.array([1, 0]), eps))
        _LOSS_CACHE[key] = (l1, l0)
    return _LOSS_CACHE[key]


def on_grid(value: float, step: Fraction, rtol: float) -> bool:
    return abs(float(round(Fraction(value) / step) * step) - value) <= rtol


def identify(
    oracle: Oracle, start: dict[str, Any], steps: list[Fraction], *, budget: int
) -> tuple[int | None, Fraction | None, float, int, list[int]]:
    """(count of ones or ``None``, step or ``None``, the released best now, queries used, counts left)."""
    n, eps = oracle.n_rows, oracle.eps
    rtol = release_tolerance(oracle.decimals)
    tol = score_tolerance(n, eps)
    released = float(start["leader"])
    fresh = [(int(e), float(v)) for e, v in start.get("fresh", [])]
    stale = [int(e) for e in start.get("stale", [])]

    def edge_score(edge: int, c: np.ndarray) -> np.ndarray:
        p = np.full(2, eps if edge == 0 else 1 - eps)
        l1, l0 = (float(v) for v in row_losses(p, np.array([1, 0]), eps))
        return np.asarray((c * l1 + (n - c) * l0) / n)

    def grid(s: float, step: Fraction) -> list[float]:
        # The server's score can sit ~tol from ours: either neighbouring multiple if s is near a half step.
        return sorted({float(round(Fraction(s + d) / step) * step) for d in (-tol, 0.0, tol)})

    counts = np.arange(n + 1)
    hypotheses: list[tuple[int, Fraction]] = []
    for step in steps:
        if not all(on_grid(v, step, rtol) for v in [released, *(v for _, v in fresh)]):
            continue
        ok = np.ones(n + 1, dtype=bool)
        first = float(round(Fraction(fresh[0][1]) / step) * step) if fresh else released
        for edge, value in fresh:
            scores = edge_score(edge, counts)
            ok &= np.array([any(abs(g - value) <= rtol for g in grid(float(s), step)) for s in scores])
        for edge in stale:
            # A later edge probe was rejected: its score was not below the best minus a step.
            ok &= edge_score(edge, counts) >= first - float(step) - tol
        hypotheses.extend((int(c), step) for c in np.flatnonzero(ok))
    if not hypotheses:
        raise AttackFailed("no (count of ones, step) fits the releases; give 'eta'")
    used = 0
    a = edge_logit(eps)

    def losses(x: float) -> tuple[float, float]:
        return _losses(x, eps)

    while len(hypotheses) > 1 and used < budget:
        best = released

        def threshold(step: Fraction, best: float = best) -> float:
            return float(round(Fraction(best) / step) * step - step)

        def score(c: int, x: float) -> float:
            l1, l0 = losses(x)
            return (c * l1 + (n - c) * l0) / n

        def smooth(c: int, x: float) -> float:
            # softplus form, for placing q (the answers are then predicted with the server's own losses)
            return (c * _softplus(-x) + (n - c) * _softplus(x)) / n

        candidates: set[float] = set()
        for c, step in hypotheses:
            top = 0.0 if c >= n - c or c == 0 else min(0.0, math.log(c / (n - c)))
            for goal in (threshold(step) - 4 * tol, threshold(step) + 4 * tol):
                if not smooth(c, top) <= goal <= smooth(c, -a):
                    continue
                lo, hi = -a, top
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    if smooth(c, mid) > goal:
                        lo = mid
                    else:
                        hi = mid
                candidates.update((lo, hi))
        choice: tuple[tuple[int, int], float, list[Any]] | None = None
        for x in sorted(candidates):
            outcomes: list[Any] = []
            for c, step in hypotheses:
                s, thr = score(c, x), threshold(step)
                if abs(s - thr) <= 2 * tol:
                    break  # this q is too close to some hypothesis' threshold to tell its answer
                outcomes.append(None if s >= thr else grid(s, step))
            else:
                keys = [("r",) if o is None else ("a", round(o[0] / (2 * rtol))) for o in outcomes]
                largest = max(keys.count(k) for k in set(keys))
                accepts = sum(o is not None for o in outcomes)
                rank = (largest, accepts)
                if largest < len(hypotheses) and (choice is None or rank < choice[0]):
                    choice = (rank, x, outcomes)
        if choice is None:
            break
        _, x, outcomes = choice
        value = submit(oracle, np.full(n, expit(x)))
        used += 1
        kept = [h for h, o in zip(hypotheses, outcomes, strict=True)
                if (o is None and abs(value - released) <= rtol) or (o is not None and any(
                    abs(g - value) <= rtol for g in o))]
        if not kept:
            raise AttackFailed("no (count of ones, step) is consistent with the Ladder's answers")
        hypotheses = kept
        released = value
    if len(hypotheses) == 1 and used + 2 <= budget:
        # The step that is left may still be wrong if the true one was never among the candidates: the last
        # hypothesis' threshold is checked from both sides (a constant just above it must be rejected, one just
        # below accepted), which no other step can do.
        c, step = hypotheses[0]
        for side in (1, -1):
            thr = float(round(Fraction(released) / step) * step - step)
            goal = thr + side * 4 * tol
            top = 0.0 if c >= n - c or c == 0 else min(0.0, math.log(c / (n - c)))
            if not (c * _softplus(-top) + (n - c) * _softplus(top)) / n <= goal <= (
                    c * _softplus(a) + (n - c) * _softplus(-a)) / n:
                break
            lo, hi = -a, top
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                if (c * _softplus(-mid) + (n - c) * _softplus(mid)) / n > goal:
                    lo = mid
                else:
                    hi = mid
            x = hi if side == 1 else lo
            l1, l0 = losses(x)
            predicted = (c * l1 + (n - c) * l0) / n
            if abs(predicted - thr) <= 2 * tol:
                break
            value = submit(oracle, np.full(n, expit(x)))
            used += 1
            expect_accept = predicted < thr
            if expect_accept:
                fits = any(abs(g - value) <= rtol for g in
                           sorted({float(round(Fraction(predicted + d) / step) * step) for d in (-tol, 0.0, tol)}))
            else:
                fits = abs(value - released) <= rtol
            if not fits:
                raise AttackFailed(f"the step {float(step):.6g} left by the releases failed its check: the Ladder's "
                                   "threshold is elsewhere; give 'eta'")
            released = value
    counts_left = sorted({c for c, _ in hypotheses})
    steps_left = {s for _, s in hypotheses}
    count = counts_left[0] if len(counts_left) == 1 else None
    found = next(iter(steps_left)) if len(steps_left) == 1 else None
    return count, found, released, used, counts_left
