"""What every attack returns, and the error it raises instead of claiming a false success."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


class AttackFailed(RuntimeError):
    """The attack's assumptions do not hold (e.g. the real noise exceeds the assumed bound) or its decoder
    found no consistent labeling; it never returns labels it cannot vouch for."""


@dataclass
class AttackResult:
    """``labels`` in the oracle's row order (``-1`` where a row's label was not recovered), the queries
    spent, the wall time, and attack-specific details (batch sizes, precision used, ...).

    ``queries`` and ``seconds`` are ``attacks.run``'s to fill in (from the oracle and the clock, confirmation
    included); an attack returns its labels and details and leaves them alone.
    """

    attack: str
    labels: np.ndarray
    queries: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def recovered(self) -> int:
        return int((self.labels >= 0).sum())

    def accuracy(self, truth: np.ndarray) -> float:
        return float((self.labels == np.asarray(truth)).mean())
