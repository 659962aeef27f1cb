"""The one reading of a release as a hard label ("accepted" or not), shared by the label-only attacks (``brep``,
paper 002) and the boosting attack's hard-label variant.

A board that releases a hard label (:mod:`defenses.feedback`, announced by ``oracle.feedback``) says it
directly: a ``threshold`` board's count of cut-offs beaten, an ``accept_reject`` board's 1, a ``rank`` board's
rank 1 (the best of the participant's submissions so far; on a board rank, ahead of every rival's best, a bar
that only the rivals move, so it is read as a badge). A board that releases scores is read as one: a
score beats a bar ``t`` (default: chance, what a coin earns), or, ``improvement=True``, beats every earlier
release (a Ladder's "accepted"). ``stateful`` says whether the accepted region moves with the queries (an
acceptance raises the bar), as it does on a Ladder and a rank board, not on a threshold board.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attacks.oracle import Oracle, Released
from defenses.feedback import HARD_LABEL_KINDS
from scoring import get_metric


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


def feedback_of(oracle: Oracle) -> dict[str, Any]:
    """What the oracle's releases are (``{"kind": "score"}`` for an oracle that does not say)."""
    described = getattr(oracle, "feedback", None)
    return dict(described) if isinstance(described, dict) else {"kind": "score"}


def is_hard_label(oracle: Oracle) -> bool:
    """Whether the oracle releases only a hard label (a score-decoding attack has nothing to decode)."""
    return feedback_of(oracle).get("kind") in HARD_LABEL_KINDS


@dataclass
class Acceptance:
    """``accepts(released)`` → whether that release is the "accepted" label; call it once per query, in order.

    >>> from attacks.oracle import LocalOracle
    >>> rule = Acceptance.of(LocalOracle([0, 1], metric="accuracy", defenses=[{"name": "threshold", "t": 0.4}]))
    >>> rule.kind, rule.stateful, rule.accepts(1.0), rule.accepts(0.0), rule.accepts(None)
    ('threshold', False, True, False, False)
    >>> plain = Acceptance.of(LocalOracle([0, 1], metric="accuracy"), improvement=True)
    >>> [plain.accepts(s) for s in (0.55, 0.55, 0.7, 0.6)]  # beats chance (0.5), then every earlier one
    [True, False, True, False]
    """

    kind: str
    level: float = 1.0
    bar: float = -math.inf
    """Score boards: the bar a release must beat, oriented so that larger is better."""
    sign: float = 1.0
    improvement: bool = False
    _best: float = field(default=-math.inf, repr=False)

    @classmethod
    def of(cls, oracle: Oracle, *, t: float | None = None, improvement: bool = False, level: int = 1) -> Acceptance:
        """The rule for ``oracle``: its hard label if it releases one (a threshold board's ``level``: how many
        cut-offs must be beaten, default 1), else its score against ``t`` (default: chance) or, with
        ``improvement``, against every earlier release."""
        feedback = feedback_of(oracle)
        kind = str(feedback.get("kind", "score"))
        if kind == "rank" and feedback.get("among") == "board":
            # Rank 1 on a board rank: ahead of every rival's best — a bar the attacker's own submissions do not
            # move, so it is read as a badge at the leader's score (no rival: every release is 1, nothing).
            return cls("board_rank", level=1.0)
        if kind in HARD_LABEL_KINDS:
            return cls(kind, level=float(level))
        sign = 1.0 if get_metric(oracle.metric).higher_is_better else -1.0
        bar = sign * (chance_score(oracle.metric, oracle.eps, 0.5) if t is None else t)
        return cls("score", bar=bar, sign=sign, improvement=improvement)

    @property
    def stateful(self) -> bool:
        """An acceptance moves the bar (Ladder, rank board, or the improvement rule on scores)."""
        return self.kind in ("rank", "accept_reject") or self.improvement

    def accepts(self, released: Released) -> bool:
        if released is None:
            return False
        value = float(released)
        if self.kind == "threshold":
            return value >= self.level
        if self.kind in ("rank", "accept_reject", "board_rank"):
            return value == 1.0
        oriented = self.sign * value
        accepted = oriented > self.bar and (not self.improvement or oriented > self._best)
        self._best = max(self._best, oriented)
        return accepted
