"""The boosting attack of Blum & Hardt (ICML 2015, Section 3.1): overfit a leaderboard with random vectors.

It needs no number theory and no precision: only whether a random guess scored better than chance.
"""

from __future__ import annotations

import numpy as np

from attacks.oracle import Oracle
from attacks.registry import register
from attacks.result import AttackFailed, AttackResult
from scoring import get_metric

ACCEPT_RULES = ("threshold", "improvement")


def chance_score(metric: str, eps: float, margin: float) -> float:
    """The score of a ±``margin`` vector that is right on exactly half of the rows (what a coin earns).

    >>> chance_score("accuracy", 1e-15, 0.5)
    0.5
    >>> round(chance_score("binary_logloss", 1e-15, 0.25), 6)  # (-ln 0.75 - ln 0.25) / 2
    0.836988
    """
    m = get_metric(metric)
    high, low = 0.5 + margin, 0.5 - margin
    return m.score(np.array([high, low, high, low]), np.array([1, 1, 0, 0]), eps)


@register("boosting", exact=False)
def boosting(
    oracle: Oracle, *, k: int = 100, seed: int = 0, accept: str = "threshold", margin: float = 0.5
) -> AttackResult:
    """Submit ``k`` uniformly random 0/1 vectors, keep those that beat chance, output their majority.

    Blum & Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning Competitions", ICML 2015,
    Section 3.1 (the boosting attack). Each query is a vector of ``0.5 ± margin`` (``margin = 0.5``: the
    0/1 vectors of the paper); a vector is kept when its released score beats a vector that is right on half
    of the rows (``accept = "threshold"``: 0/1 loss below 0.5, accuracy above 0.5) or, against a board that
    only releases improvements such as the Ladder, when the released score also improved on every earlier
    one (``accept = "improvement"``: the Ladder accepted it). The coordinate-wise majority of the kept
    vectors agrees with the hidden labels on about ``1/2 + Θ(sqrt(k / n))`` of the rows: the public score
    improves while the labels stay essentially unknown (fresh-data loss stays ~0.5).

    Queries: exactly ``k``. Time: O(k·n). Precision: whatever the board shows (one comparison per query).
    Claims every row (its guess); raises :class:`AttackFailed` for a multiclass board or when no query beat
    chance. Binary boards only.
    """
    if oracle.n_classes != 2:
        raise AttackFailed("the boosting attack handles binary competitions only")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if accept not in ACCEPT_RULES:
        raise ValueError(f"accept must be one of {', '.join(ACCEPT_RULES)}, got {accept!r}")
    if not 0.0 < margin <= 0.5:
        raise ValueError(f"margin must lie in (0, 0.5], got {margin}")
    higher_is_better = get_metric(oracle.metric).higher_is_better
    sign = 1.0 if higher_is_better else -1.0  # compare scores as "bigger is better"
    threshold = sign * chance_score(oracle.metric, oracle.eps, margin)
    rng = np.random.default_rng(seed)
    votes = np.zeros(oracle.n_rows, dtype=np.int64)
    kept = 0
    best = -np.inf
    for _ in range(k):
        guess = rng.integers(0, 2, oracle.n_rows)
        released = oracle.submit(0.5 + margin * (2.0 * guess - 1.0))
        if released is None:
            continue
        value = sign * float(released)
        if value > threshold and (accept == "threshold" or value > best):
            votes += 2 * guess - 1
            kept += 1
        best = max(best, value)
    if kept == 0:
        raise AttackFailed(f"none of the {k} random vectors beat chance on the released scores")
    ties = rng.integers(0, 2, oracle.n_rows)  # an even vote is a coin flip, drawn from the seeded generator
    labels = np.where(votes > 0, 1, np.where(votes < 0, 0, ties)).astype(np.int64)
    return AttackResult(
        attack="boosting",
        labels=labels,
        details={"kept": kept, "threshold": sign * threshold, "accept": accept, "margin": margin},
    )
