"""The Ladder: release a new score only when it beats the participant's best by a margin (Blum & Hardt,
"The Ladder: A Reliable Leaderboard for Machine Learning Competitions", ICML 2015), in both of the paper's
forms — fixed step η (Algorithm 1) and parameter-free (a paired one-sided t-test, as in Ladder.jl)."""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from defenses.base import (
    SCOPE_PARAM,
    Defense,
    DefenseConfigError,
    DefenseContext,
    MetricView,
    Param,
    Score,
    ScoringView,
    Stage,
    register,
    take_params,
    take_scope,
)
from defenses.sampling import to_fraction

MODES = ("fixed", "parameter_free")
ACCEPTED = "ladder_accepted"
"""The ledger key under which the Ladder records whether it accepted this submission (``accept_reject`` reads
it to release the decision without the value)."""
WITHHELD = "ladder_withheld"
"""The ledger key set when a competition-scoped Ladder released nothing because the submission did not beat the
board's best (``accept_reject`` still releases the decision, 0)."""
NOT_BEATEN_MESSAGE = (
    "This submission did not beat the leaderboard's best score by the margin this leaderboard requires, so no "
    "score is released for it."
)


def round_to_step(value: Score, step: Fraction) -> float:
    """``value`` rounded to the nearest integer multiple of ``step`` (ties to even), as a float64.

    >>> round_to_step(0.4137, Fraction(1, 100))
    0.41
    """
    return float(round(to_fraction(value) / step) * step)


def _row_digest(view: ScoringView) -> str:
    return hashlib.sha256(np.ascontiguousarray(view.rows_in_split, dtype=np.int64).tobytes()).hexdigest()[:16]


@register
class Ladder(Defense):
    """Release the participant's best score so far, updated only on a significant improvement.

    State per participant (JSON): ``best`` — the released value, ``null`` before the first submission — and,
    in the parameter-free mode, the leader's predictions and a digest of the rows they were scored on.
    Lower-is-better and higher-is-better metrics are handled through ``MetricView.higher_is_better`` (an
    "improvement" is a decrease of a loss or an increase of a score). The score compared is the one reaching
    this defense (after any noise before it), so the Ladder composes with the SCORE stage.

    ``mode: "fixed"`` (Blum & Hardt 2015, Algorithm 1): start with ``R = +∞``; for each submission with score
    ``s``: if ``s < R − η`` then ``R ← [s]_η`` (``s`` rounded to the nearest multiple of η); release ``R``.
    ``eta`` defaults to ``n^(-1/3)`` for ``n`` scored rows — the order of the step in the paper's analysis
    (Theorem 3.1, up to log factors). Ladder.jl rounds to ``log10(n)`` decimals instead; we follow the paper.

    ``mode: "parameter_free"`` (Blum & Hardt 2015, Section 3.2; ``score!(::FreeLadder, …)`` in Ladder.jl): with
    per-row losses ``l`` of the submission and ``l*`` of the leader on the same rows, let ``s = std(l − l*)``
    (``std(l)`` with no leader yet; sample std, ``n − 1``, as Julia's ``std``); accept if ``mean(l) <
    current − s/√n``, then ``current ← mean(l)`` and the submission becomes the leader; release ``current``
    unrounded. It needs the metric's per-row values: :meth:`check_metric` rejects AUC, and if it runs without
    them anyway it falls back to the fixed rule with ``η = 1/√n`` and says so in a host note. If the rows
    differ from the leader's (subsetting before the Ladder), the test is unpaired (``std(l)``), also noted.

    ``scope: "competition"``: one leader for the whole board, shared by every participant. A submission is
    compared with the board's best (a new account's first submission included: it is not released for free);
    one that beats it by the margin becomes the board's best and its value is released; any other releases
    nothing (``None``, with a participant-safe message), since the board's best is another participant's
    score and the submitter's own earlier releases are already on the board. ``scope: "team"``: one leader per
    team (a member's first submission is compared with the team's best, and a non-improving one is released the
    team's best, which every member already sees). ``scope: "account"`` (default) is the per-participant Ladder
    above. Two teams that merge keep the better of their two bests (:meth:`merge_state`), so the merged team
    must beat both teams' leaders.

    >>> Ladder(mode="fixed", eta=0.01).to_json()
    {'name': 'ladder', 'mode': 'fixed', 'eta': 0.01}
    >>> Ladder(mode="parameter_free", scope="competition").to_json()
    {'name': 'ladder', 'mode': 'parameter_free', 'scope': 'competition'}
    """

    name = "ladder"
    stage = Stage.RELEASE
    citation = "Blum & Hardt, ICML 2015, Algorithm 1 and Section 3.2; Ladder.jl (mrtzh)"
    parameters = (
        Param("mode", "choice", "fixed", choices=MODES,
              help="fixed: a step eta; parameter_free: a paired test on per-row values"),
        Param("eta", "number", minimum=0, exclusive_minimum=True, when=(("mode", ("fixed",)),),
              default_text="n^(-1/3) for n scored rows", help="the step a score must improve by"),
        SCOPE_PARAM,
    )

    _ALLOWED: ClassVar[dict[str, dict[str, Any]]] = {
        "fixed": {"mode": "fixed", "eta": None},
        "parameter_free": {"mode": "parameter_free"},
    }

    def __init__(self, **params: Any) -> None:
        self.scope, params = take_scope(self.name, params)
        mode = params.get("mode", "fixed")
        if mode not in self._ALLOWED:
            raise DefenseConfigError(f"defense 'ladder': 'mode' must be one of {', '.join(MODES)}, got {mode!r}")
        p = take_params(f"ladder (mode {mode})", params, self._ALLOWED[mode])
        self.mode: str = mode
        eta = p.get("eta")
        if eta is not None and (
            isinstance(eta, bool) or not isinstance(eta, (int, float)) or not 0 < eta < math.inf
        ):
            raise DefenseConfigError(f"defense 'ladder': 'eta' must be a positive number, got {eta!r}")
        self.eta: float | None = None if eta is None else float(eta)

    def params(self) -> dict[str, Any]:
        if self.mode == "fixed" and self.eta is not None:
            return {"mode": self.mode, "eta": self.eta, **self.scope_params()}
        return {"mode": self.mode, **self.scope_params()}

    def initial_state(self) -> dict[str, Any]:
        return {"best": None}

    def check_chain(self, earlier: list[Defense]) -> None:
        if any(defense.feedback() is not None for defense in earlier):
            raise DefenseConfigError(
                "defense 'ladder' cannot follow a hard-label defense: it would climb on labels, not scores"
            )

    def check_metric(self, metric: MetricView) -> None:
        if self.mode == "parameter_free" and metric.row_values is None:
            raise DefenseConfigError(
                f"defense 'ladder': the parameter-free mode needs per-row values, which metric {metric.name!r} "
                "does not have; use mode 'fixed' with a step 'eta'"
            )

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:  # an earlier defense withheld the score: nothing to compare, nothing to release
            return None
        n = len(view.labels)
        if self.mode == "parameter_free":
            if view.metric.row_values is not None and n >= 2:
                return self._parameter_free(score, view, ctx)
            ctx.notes.append("ladder: no per-row values for this metric; used the fixed rule with eta = 1/sqrt(n)")
            return self._fixed(score, Fraction(1 / math.sqrt(n)), view, ctx)
        step = Fraction(repr(self.eta)) if self.eta is not None else Fraction(n ** (-1 / 3))
        return self._fixed(score, step, view, ctx)

    @staticmethod
    def _improves(candidate: Fraction, best: Fraction, margin: Fraction, higher_is_better: bool) -> bool:
        return candidate > best + margin if higher_is_better else candidate < best - margin

    def _fixed(self, score: Score, step: Fraction, view: ScoringView, ctx: DefenseContext) -> float | None:
        best = ctx.state.get("best")
        if best is None or self._improves(to_fraction(score), to_fraction(best), step, view.metric.higher_is_better):
            ctx.state["best"] = round_to_step(score, step)
            ctx.ledger[ACCEPTED] = True
        else:
            return self._not_improved(ctx)
        return float(ctx.state["best"])

    def merge_state(self, kept: dict[str, Any], other: dict[str, Any], *, higher_is_better: bool) -> dict[str, Any]:
        """The better of the two leaders (with its predictions in the parameter-free mode): the stricter bar.

        >>> Ladder(mode="fixed", eta=0.01).merge_state({"best": 0.4}, {"best": None}, higher_is_better=False)
        {'best': 0.4}
        """
        mine, theirs = kept.get("best"), other.get("best")
        if theirs is None:
            return dict(kept)
        if mine is None:
            return dict(other)
        better = theirs > mine if higher_is_better else theirs < mine
        return dict(other) if better else dict(kept)

    def _not_improved(self, ctx: DefenseContext) -> float | None:
        ctx.ledger[ACCEPTED] = False
        if self.shared:
            ctx.notes.append("ladder: does not beat the board's best by the margin; nothing released")
            ctx.ledger[WITHHELD] = True
            ctx.message = NOT_BEATEN_MESSAGE
            return None
        ctx.notes.append("ladder: no significant improvement; the previous best is released")
        return float(ctx.state["best"])

    def _parameter_free(self, score: Score, view: ScoringView, ctx: DefenseContext) -> float | None:
        row_values = view.metric.row_values
        assert row_values is not None
        sign = -1.0 if view.metric.higher_is_better else 1.0  # work with losses, as Ladder.jl does
        losses = sign * row_values(view.predictions, view.labels)
        digest = _row_digest(view)
        leader = ctx.state.get("leader")
        if leader is not None and ctx.state.get("leader_rows") == digest:
            leader_losses = sign * row_values(np.asarray(leader, dtype=np.float64), view.labels)
            spread = float(np.std(losses - leader_losses, ddof=1))
        else:
            if leader is not None:
                ctx.notes.append("ladder: rows differ from the leader's; unpaired test std(l)")
            spread = float(np.std(losses, ddof=1))
        best = ctx.state.get("best")
        margin = Fraction(spread / math.sqrt(len(losses)))
        if best is None or self._improves(to_fraction(score), to_fraction(best), margin, view.metric.higher_is_better):
            ctx.state["best"] = float(score)
            ctx.state["leader"] = view.predictions.tolist()
            ctx.state["leader_rows"] = digest
            ctx.ledger[ACCEPTED] = True
        else:
            return self._not_improved(ctx)
        return float(ctx.state["best"])
