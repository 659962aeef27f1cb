"""What a game measures: how much the attacker learned and where it ranks, and what the defense cost the
honest participants (rank agreement, whether the best model still wins, released-vs-true error)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attacks.confirm import confident_predictions as confident_predictions  # the final submission
from scoring.board import BoardEntry, board_standings


@dataclass(frozen=True)
class AttackerOutcome:
    """The attacker's result in one cell.

    ``label_accuracy``: share of all rows whose recovered label is right (unrecovered rows count as wrong);
    ``recovered_fraction``: share of rows it claimed; ``claimed_accuracy``: accuracy on the claimed rows
    (below 1 means a false claim); ``exact_recovery``: every label recovered and right; ``exact_fraction``:
    share of rows whose label the attack vouched for (confidence 1.0) and got right; ``majority_rate``: the
    accuracy of predicting the majority class on every row (what an attacker gets for one query). Ranks are
    1-based among the honest participants plus the attacker, after its final confident submission.
    """

    label_accuracy: float
    recovered_fraction: float
    claimed_accuracy: float
    exact_recovery: bool
    public_score: float | None
    private_score: float | None
    public_rank: int
    private_rank: int
    n_participants: int
    exact_fraction: float = 0.0
    majority_rate: float = 0.5

    def row(self) -> dict[str, Any]:
        return {
            "label_accuracy": round(self.label_accuracy, 6),
            "majority_rate": round(self.majority_rate, 6),
            "exact_fraction": round(self.exact_fraction, 6),
            "recovered_fraction": round(self.recovered_fraction, 6),
            "claimed_accuracy": _round(self.claimed_accuracy),
            "exact_recovery": int(self.exact_recovery),
            "attacker_public_score": self.public_score,
            "attacker_private_score": self.private_score,
            "attacker_public_rank": self.public_rank,
            "attacker_private_rank": self.private_rank,
            "n_participants": self.n_participants,
        }


@dataclass(frozen=True)
class HonestUtility:
    """The honest population's view of one competition.

    ``kendall_tau``: Kendall's τ-b between the released public ranking and the true private ranking (raw
    scores on the private rows; every row when there is no split), NaN when either ranking is constant;
    ``best_wins``: the model with the best true private score tops the released public board (ties: the
    earlier submission wins, as on the site); ``mean_abs_error``: mean |released public − true public| (what
    the defense itself distorts); ``mean_abs_error_private``: mean |released public − true private|;
    ``withheld``: honest submissions that got no released score (rejected or withheld by the chain).
    """

    kendall_tau: float
    best_wins: bool
    mean_abs_error: float
    mean_abs_error_private: float
    withheld: int
    n_models: int

    def row(self) -> dict[str, Any]:
        return {
            "honest_kendall_tau": _round(self.kendall_tau),
            "honest_best_wins": int(self.best_wins),
            "honest_mean_abs_error": _round(self.mean_abs_error, 8),
            "honest_mean_abs_error_private": _round(self.mean_abs_error_private, 8),
            "honest_withheld": self.withheld,
            "honest_models": self.n_models,
        }


def _round(value: float, digits: int = 6) -> float | None:
    return None if not math.isfinite(value) else round(value, digits)


def board_rank(honest: Sequence[float | None], attacker: float | None, *, higher_is_better: bool) -> int:
    """The attacker's 1-based rank on a board where it submitted after every honest participant.

    The site's board policy (:mod:`scoring.board`): ties go to the earlier submission (the honest one); a
    participant with no released score has no row, so the attacker without one ranks below everyone.

    >>> board_rank([0.3, 0.1, None], 0.1, higher_is_better=False)
    2
    >>> board_rank([0.3, 0.1], None, higher_is_better=False)
    3
    """
    if attacker is None:
        return len(honest) + 1
    # Every game participant submits once, in order, and the attacker last: each of the game's boards is the
    # core's public-board rule over that one released score per participant.
    entries = [BoardEntry(i, i, float(i), score) for i, score in enumerate(honest)]
    entries.append(BoardEntry(len(honest), "attacker", float(len(honest)), attacker))
    standings = board_standings(entries, "public", higher_is_better=higher_is_better)
    return next(standing.rank for standing in standings if standing.participant == "attacker")


def attacker_outcome(
    labels: np.ndarray,
    hidden: np.ndarray,
    *,
    released_public: float | None,
    released_private: float | None,
    public_rank: int,
    private_rank: int,
    n_participants: int,
    confidence: np.ndarray | None = None,
) -> AttackerOutcome:
    """Score an attacker's recovered labels (``-1`` = not recovered; ``confidence`` 1.0 where it vouches for
    the label exactly) against the hidden ones."""
    labels = np.asarray(labels, dtype=np.int64)
    hidden = np.asarray(hidden, dtype=np.int64)
    claimed = labels >= 0
    correct = labels == hidden
    n_claimed = int(claimed.sum())
    vouched = np.zeros(len(labels), dtype=bool) if confidence is None else np.asarray(confidence) >= 1.0
    return AttackerOutcome(
        exact_fraction=float((vouched & correct).mean()) if len(labels) else 0.0,
        majority_rate=majority_rate(hidden),
        label_accuracy=float(correct.mean()),
        recovered_fraction=float(claimed.mean()),
        claimed_accuracy=float(correct[claimed].mean()) if n_claimed else math.nan,
        exact_recovery=bool(correct.all()),
        public_score=released_public,
        private_score=released_private,
        public_rank=public_rank,
        private_rank=private_rank,
        n_participants=n_participants,
    )


def majority_rate(hidden: np.ndarray) -> float:
    """The share of the most common class: the accuracy of predicting the majority class on every row.

    >>> majority_rate(np.array([0, 1, 1, 1]))
    0.75
    """
    hidden = np.asarray(hidden, dtype=np.int64)
    return float(np.bincount(hidden).max() / len(hidden)) if len(hidden) else 0.0


def _best(values: Sequence[float | None], higher_is_better: bool) -> int:
    """Index of the best score; ties go to the earliest; ``None`` never wins unless all are ``None``."""
    best, best_value = 0, None
    for index, value in enumerate(values):
        if value is None:
            continue
        if best_value is None or (value > best_value if higher_is_better else value < best_value):
            best, best_value = index, value
    return best


def _oriented(values: Sequence[float | None], higher_is_better: bool) -> np.ndarray:
    """Scores as "bigger is better", with no released score the worst of all."""
    sign = 1.0 if higher_is_better else -1.0
    present = [sign * v for v in values if v is not None]
    floor = (min(present) if present else 0.0) - 1.0
    return np.array([floor if v is None else sign * v for v in values], dtype=np.float64)


def kendall_tau(first: np.ndarray, second: np.ndarray) -> float:
    """Kendall's τ-b (ties handled), NaN when either side is constant.

    >>> round(kendall_tau(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])), 4)
    0.3333
    """
    from scipy.stats import kendalltau

    if len(first) < 2 or np.all(first == first[0]) or np.all(second == second[0]):
        return math.nan
    return float(kendalltau(first, second).statistic)


def honest_utility(
    *,
    released_public: Sequence[float | None],
    raw_public: Sequence[float],
    raw_private: Sequence[float],
    higher_is_better: bool,
    released_higher_is_better: bool | None = None,
) -> HonestUtility:
    """Utility of the honest population on one board (see :class:`HonestUtility`). ``released_higher_is_better``
    is the released values' own direction when it is not the metric's (a hard-label board: a badge of 1 beats
    0 whatever the metric; :meth:`scoring.ScoringSpec.released_higher_is_better`)."""
    released_direction = higher_is_better if released_higher_is_better is None else released_higher_is_better
    released = _oriented(released_public, released_direction)
    truth = _oriented(list(raw_private), higher_is_better)
    pairs = [(r, t) for r, t in zip(released_public, raw_public, strict=True) if r is not None]
    pairs_private = [(r, t) for r, t in zip(released_public, raw_private, strict=True) if r is not None]
    return HonestUtility(
        kendall_tau=kendall_tau(released, truth),
        best_wins=_best(released_public, released_direction) == _best(list(raw_private), higher_is_better),
        mean_abs_error=float(np.mean([abs(r - t) for r, t in pairs])) if pairs else math.nan,
        mean_abs_error_private=float(np.mean([abs(r - t) for r, t in pairs_private])) if pairs_private else math.nan,
        withheld=sum(1 for r in released_public if r is None),
        n_models=len(released_public),
    )
