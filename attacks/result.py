"""What every attack returns, and the errors it raises instead of claiming a false success."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The highest confidence a posterior reports: 1.0 marks a label an exact attack vouches for (its decode guaranteed
#: at its noise bound, or confirmed by a query); a guess stays below it whatever its decoder computed.
GUESS_CEILING = 1.0 - 1e-9


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
class Course:
    """What ``auto`` did, typed (the audit, the bot and the games read these, not string keys).

    ``attack``: the attack whose labels were taken (the plan's, or the fallback that replaced it);
    ``fallback``: where the rest of the budget went (a likelihood decoder, a best guess), if anywhere;
    ``cut_by_budget``: the exact attack had not finished when the budget ran out; ``plan_attack``,
    ``plan_params``, ``plan_reason``: the catalogue's first choice; ``reasoning``: what was seen, chosen and
    why, line by line; ``fingerprint``: what the probes measured (``None`` on hard-label boards);
    ``fingerprint_queries``/``attack_queries``: how the queries split; ``exact``/``guessed``: rows vouched for
    and rows guessed; ``balance``: the class shares measured; ``floor``: rows moved off the majority class
    before and after the floor, with its check queries; ``feedback``: the kind of hard label, on such boards;
    ``attack_details``: the played attack's own details.
    """

    attack: str
    plan_attack: str
    plan_params: dict[str, Any] = field(default_factory=dict)
    plan_reason: str = ""
    fallback: str | None = None
    cut_by_budget: bool = False
    reasoning: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] | None = None
    fingerprint_queries: int = 0
    attack_queries: int = 0
    exact: int = 0
    guessed: int = 0
    balance: list[float] | None = None
    floor: dict[str, int] | None = None
    feedback: str | None = None
    attack_details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The same as a JSON-ready dict (``AttackResult.details`` of ``auto``, the bot's summary)."""
        out: dict[str, Any] = {
            "fingerprint": self.fingerprint, "fingerprint_queries": self.fingerprint_queries,
            "plan": {"attack": self.plan_attack, "params": self.plan_params, "reason": self.plan_reason},
            "attack": self.attack, "fallback": self.fallback, "cut_by_budget": self.cut_by_budget,
            "exact": self.exact, "guessed": self.guessed, "balance": self.balance,
            "attack_queries": self.attack_queries, "reasoning": self.reasoning,
        }
        if self.attack_details:
            out["attack_details"] = self.attack_details
        if self.floor is not None:
            out["floor"] = self.floor
        if self.feedback is not None:
            out["feedback"] = self.feedback
        return out


@dataclass
class AttackResult:
    """``labels`` in the oracle's row order (``-1`` where a row's label was not recovered), the queries
    spent, the wall time, attack-specific details (batch sizes, precision used, ...) and a per-label
    ``confidence`` in ``[0, 1]``: the probability the attack gives its label of that row (``1.0`` for an exact
    label it vouches for, a posterior probability for a best guess, ``0.0`` where ``labels`` is ``-1``).

    ``queries`` and ``seconds`` are ``attacks.run``'s to fill in (from the oracle and the clock, confirmation
    included); an attack returns its labels and details and leaves them alone. An exact-stage attack that leaves
    ``confidence`` unset vouches for every label it returns: ``attacks.run`` sets ``1.0`` where a label is
    given and ``0.0`` where it is ``-1``; a likelihood decoder or a best guess vouches for none, and ``attacks.run``
    sets :data:`GUESS_CEILING` on its labels if it forgot its posteriors.
    """

    attack: str
    labels: np.ndarray
    queries: int = 0
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    confidence: np.ndarray | None = None
    #: ``auto``'s account of what it played (``None`` for the other attacks).
    course: Course | None = None

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
