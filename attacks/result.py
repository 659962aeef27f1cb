"""What every attack returns, and the errors it raises instead of claiming a false success."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class AttackFailed(RuntimeError):
    """The attack's assumptions do not hold (e.g. the real noise exceeds the assumed bound) or its decoder
    found no consistent labeling; it never returns labels it cannot vouch for."""


class SubmissionRefused(RuntimeError):
    """The leaderboard accepted a submission but refused to score it (a probe detector, an exhausted privacy
    budget in reject mode): the submission counted, nothing was released. ``message`` is the board's reason.

    An oracle may raise it from ``submit`` instead of returning ``None``; the bot's HTTP oracle does (its
    ``SubmissionFailed`` is one), ``LocalOracle`` returns ``None``. Attacks that probe (the fingerprint) treat
    both alike."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


@dataclass
class AttackResult:
    """``labels`` in the oracle's row order (``-1`` where a row's label was not recovered), the queries
    spent, the wall time, attack-specific details (batch sizes, precision used, ...) and a per-label
    ``confidence`` in ``[0, 1]``: the probability the attack gives its label of that row (``1.0`` for an exact
    label it vouches for, a posterior probability for a best guess, ``0.0`` where ``labels`` is ``-1``).

    ``queries`` and ``seconds`` are ``attacks.run``'s to fill in (from the oracle and the clock, confirmation
    included); an attack returns its labels and details and leaves them alone. An attack that leaves
    ``confidence`` unset vouches for every label it returns: ``attacks.run`` sets ``1.0`` where a label is
    given and ``0.0`` where it is ``-1``.
    """

    attack: str
    labels: np.ndarray
    queries: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    confidence: np.ndarray | None = None

    @property
    def recovered(self) -> int:
        """Rows with a label (exact or guessed)."""
        return int((self.labels >= 0).sum())

    @property
    def exact(self) -> int:
        """Rows whose label the attack vouches for (confidence 1.0; every labeled row when none is set)."""
        if self.confidence is None:
            return self.recovered
        return int(((self.labels >= 0) & (self.confidence >= 1.0)).sum())

    def accuracy(self, truth: np.ndarray) -> float:
        return float((self.labels == np.asarray(truth)).mean())

    def fill_confidence(self) -> np.ndarray:
        """``confidence``, set to the default (1.0 on labeled rows, 0.0 on ``-1`` rows) when it is unset."""
        if self.confidence is None:
            self.confidence = np.where(np.asarray(self.labels) >= 0, 1.0, 0.0)
        return self.confidence
