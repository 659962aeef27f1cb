"""A per-participant privacy budget over noisy releases: account the ε each release spends (basic and
advanced composition) and stop releasing when the budget would be exceeded."""

from __future__ import annotations

import math
from typing import Any

from defenses.base import (
    SCOPE_PARAM,
    Defense,
    DefenseConfigError,
    DefenseContext,
    Param,
    Score,
    ScoringView,
    Stage,
    register,
    take_params,
    take_scope,
)

COMPOSITIONS = ("basic", "advanced", "best")
ON_EXHAUSTED = ("withhold", "reject")

EXHAUSTED_MESSAGE = (
    "Your privacy budget on this leaderboard is used up: further submissions are accepted but no more "
    "scores are released to you."
)
TEAM_EXHAUSTED_MESSAGE = (
    "Your team's privacy budget on this leaderboard is used up: further submissions are accepted but no more "
    "scores are released to your team."
)
BOARD_EXHAUSTED_MESSAGE = (
    "This leaderboard's privacy budget is used up: further submissions are accepted but no more scores are "
    "released to anyone."
)


def basic_composition(epsilons: list[float], deltas: list[float]) -> tuple[float, float]:
    """Sequential composition: ε and δ add up (Dwork & Roth 2014, Theorem 3.16).

    >>> basic_composition([0.1, 0.2], [0.0, 1e-6])
    (0.30000000000000004, 1e-06)
    """
    return math.fsum(epsilons), math.fsum(deltas)


def advanced_composition(sum_sq: float, sum_expm1: float, slack: float) -> float:
    """ε of k releases with ε_i each, at extra failure probability ``slack`` (δ'): ``sqrt(2 ln(1/δ') Σε_i²) +
    Σ ε_i (e^{ε_i} − 1)`` — Dwork, Rothblum & Vadhan 2010 (Dwork & Roth 2014, Theorem 3.20), in the form for
    heterogeneous ε_i (Kairouz, Oh & Viswanath 2015). Total δ is Σδ_i + δ'.

    >>> round(advanced_composition(100 * 0.01**2, 100 * 0.01 * math.expm1(0.01), 1e-6), 4)
    0.5357
    """
    if slack <= 0:
        return math.inf
    return math.sqrt(2 * math.log(1 / slack) * sum_sq) + sum_expm1


#: Stands for "more than any budget" in the composed sums: finite, so the state stays valid JSON on PostgreSQL.
HUGE = 1e300


def _eps_expm1(eps: float) -> float:
    """``ε·(e^ε − 1)``, the advanced-composition term, saturating at :data:`HUGE` (``expm1`` overflows past 709:
    fixed-scale noise on a log loss easily costs ε in the thousands per release)."""
    if not math.isfinite(eps) or eps > 700:
        return HUGE
    return min(eps * math.expm1(eps), HUGE)


@register
class PrivacyBudget(Defense):
    """Stop releasing to a participant once the ε spent by their noisy releases would exceed ``epsilon``.

    How it learns what was spent: each noisy defense earlier in the chain appends ``{"epsilon", "delta"}``
    for the release it is making to ``ctx.ledger["privacy"]`` (the noise defense with OpenDP's privacy map,
    randomized response with its ``ln((1-p)(K-1)/p)``, marked ``once`` in its fixed mode because a single
    draw of noisy labels is reused). This defense reads those entries, adds them to the participant's
    running totals (its state) and releases only if the totals stay within budget; otherwise it releases
    nothing, spends nothing, tells the host in a note and the participant in ``ctx.message`` (or, with
    ``on_exhausted: "reject"``, fails the submission with that message).

    Accounting is kept both ways and both are reported in the host note: basic composition (Σε, Σδ) and
    advanced composition (``sqrt(2 ln(1/δ') Σε²) + Σ ε(e^ε − 1)`` with δ' = ``delta`` − Σδ_i). ``composition``
    chooses which one the budget is enforced by: ``"basic"``, ``"advanced"`` or ``"best"`` (default; the
    smaller of the two, as both are valid bounds). ``delta`` (default 1e-6) bounds the total δ.

    The state is per participant and per split (public and private boards are separate releases); with
    ``scope: "competition"`` it is one budget per split for the whole board, spent by every participant's
    releases together (so k accounts get one budget, not k); with ``scope: "team"`` one budget per team, spent
    by every member's releases. Two teams that merge add up what they spent (:meth:`merge_state`): the merged
    team has made both teams' releases, so its remaining budget is below either team's.
    Unknown ε (noise with a fixed scale on a metric without a derived sensitivity) counts as infinite.

    Sources: Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Theorems 3.16 and
    3.20; Dwork, Rothblum & Vadhan, FOCS 2010; Kairouz, Oh & Viswanath, ICML 2015.
    """

    name = "privacy_budget"
    stage = Stage.RELEASE
    citation = "Dwork & Roth 2014, Thms 3.16 and 3.20; Dwork, Rothblum & Vadhan 2010"
    parameters = (
        Param("epsilon", "number", minimum=0, exclusive_minimum=True, required=True,
              help="the total ε a participant (or the scope) may spend"),
        Param("delta", "number", 1e-6, minimum=0, maximum=1, exclusive_maximum=True, help="the total δ"),
        Param("composition", "choice", "best", choices=COMPOSITIONS,
              help="the composition theorem the budget is enforced by (best: the smaller bound)"),
        Param("on_exhausted", "choice", "withhold", choices=ON_EXHAUSTED,
              help="withhold the score, or reject the submission, once the budget is spent"),
        SCOPE_PARAM,
    )

    def __init__(self, **params: Any) -> None:
        self.scope, params = take_scope(self.name, params)
        p = take_params(
            self.name, params, {"epsilon": None, "delta": 1e-6, "composition": "best", "on_exhausted": "withhold"}
        )
        epsilon, delta = p["epsilon"], p["delta"]
        if epsilon is None:
            raise DefenseConfigError("defense 'privacy_budget': give 'epsilon', the total budget per participant")
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < math.inf:
            raise DefenseConfigError(f"defense 'privacy_budget': 'epsilon' must be a positive number, got {epsilon!r}")
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise DefenseConfigError(f"defense 'privacy_budget': 'delta' must be in [0, 1), got {delta!r}")
        if p["composition"] not in COMPOSITIONS:
            raise DefenseConfigError(
                f"defense 'privacy_budget': 'composition' must be one of {', '.join(COMPOSITIONS)}, "
                f"got {p['composition']!r}"
            )
        if p["on_exhausted"] not in ON_EXHAUSTED:
            raise DefenseConfigError(
                f"defense 'privacy_budget': 'on_exhausted' must be one of {', '.join(ON_EXHAUSTED)}, "
                f"got {p['on_exhausted']!r}"
            )
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.composition: str = p["composition"]
        self.on_exhausted: str = p["on_exhausted"]

    def params(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon, "delta": self.delta, "composition": self.composition,
            "on_exhausted": self.on_exhausted, **self.scope_params(),
        }

    def initial_state(self) -> dict[str, Any]:
        return {"releases": 0, "sum_epsilon": 0.0, "sum_epsilon_sq": 0.0, "sum_epsilon_expm1": 0.0,
                "sum_delta": 0.0, "once": []}

    def merge_state(self, kept: dict[str, Any], other: dict[str, Any], *, higher_is_better: bool) -> dict[str, Any]:
        """Both teams' spending added up (a noisy-label draw paid once by both is counted twice: the stricter).

        >>> budget = PrivacyBudget(epsilon=3.0)
        >>> spent = {**budget.initial_state(), "releases": 2, "sum_epsilon": 2.0}
        >>> budget.merge_state(spent, spent, higher_is_better=False)["sum_epsilon"]
        4.0
        """
        fresh = self.initial_state()
        merged = {**fresh, **kept}
        for key in ("releases", "sum_epsilon", "sum_epsilon_sq", "sum_delta"):
            merged[key] = kept.get(key, fresh[key]) + other.get(key, fresh[key])
        merged["sum_epsilon_expm1"] = min(kept.get("sum_epsilon_expm1", 0.0) + other.get("sum_epsilon_expm1", 0.0),
                                          HUGE)
        once = list(kept.get("once", []))
        merged["once"] = once + [key for key in other.get("once", []) if key not in once]
        return merged

    def check_chain(self, earlier: list[Defense]) -> None:
        if not any(d.records_privacy() for d in earlier):
            raise DefenseConfigError(
                "defense 'privacy_budget' needs a noisy defense before it (noise with kind laplace or gaussian, "
                "or randomized_response) whose ε it can account"
            )

    def totals(self, state: dict[str, Any]) -> dict[str, float]:
        """ε and δ spent so far by basic and by advanced composition, and the one the budget enforces."""
        basic_eps, basic_delta = state["sum_epsilon"], state["sum_delta"]
        advanced = advanced_composition(state["sum_epsilon_sq"], state["sum_epsilon_expm1"], self.delta - basic_delta)
        enforced = {"basic": basic_eps, "advanced": advanced, "best": min(basic_eps, advanced)}[self.composition]
        return {"basic": basic_eps, "advanced": advanced, "enforced": enforced, "delta": basic_delta}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        pending = dict(ctx.state)
        once = list(pending.get("once", []))
        for entry in ctx.ledger.get("privacy", []):
            key = entry.get("once")
            if key is not None and key in once:
                continue  # a single draw of noisy labels, already paid for
            if key is not None:
                once.append(key)
            eps = entry.get("epsilon")
            eps = math.inf if eps is None else float(eps)
            pending["sum_epsilon"] += eps
            pending["sum_epsilon_sq"] += eps * eps
            pending["sum_epsilon_expm1"] = min(pending["sum_epsilon_expm1"] + _eps_expm1(eps), HUGE)
            pending["sum_delta"] += float(entry.get("delta") or 0.0)
        pending["once"] = once
        pending["releases"] = pending.get("releases", 0) + 1
        spent = self.totals(pending)
        if spent["enforced"] > self.epsilon or spent["delta"] > self.delta:
            before = self.totals(ctx.state)
            ctx.notes.append(
                f"privacy_budget: exhausted (spent ε={before['enforced']:.6g} of {self.epsilon:g} by "
                f"{self.composition} composition; this release would make it {spent['enforced']:.6g})"
            )
            message = (BOARD_EXHAUSTED_MESSAGE if self.shared
                       else TEAM_EXHAUSTED_MESSAGE if self.team_scoped else EXHAUSTED_MESSAGE)
            if self.on_exhausted == "reject":
                ctx.reject = message
            else:
                ctx.message = message
            return None
        ctx.state.update(pending)
        ctx.notes.append(
            f"privacy_budget: spent ε={spent['basic']:.6g} (basic), {spent['advanced']:.6g} (advanced, "
            f"δ={self.delta:g}) of {self.epsilon:g} over {pending['releases']} release(s)"
        )
        return score
