"""Hard-label feedback: final release stages that replace the score by a label, so a participant learns a yes/no
(or a position) and never the value — the boards paper 002 (BREP-MI, Kahla et al., CVPR 2022) attacks.

* ``threshold`` — "beats threshold t", as medal or badge boards do: 1 if the score beats ``t`` (several
  cut-offs: how many it beats, gold/silver/bronze style), else 0;
* ``rank`` — rank only: the position of this submission among the participant's own scored submissions
  (1 = the best so far, ties to the earlier one), or with ``among="board"`` the place it would take among the
  other participants' best scores, as a rank-only leaderboard shows;
* ``accept_reject`` — the Ladder's decision without the value: 1 if the Ladder before it accepted the
  submission as a significant improvement, else 0.

They are RELEASE-stage defenses rather than a separate competition setting so that the one release model
(:mod:`scoring.release`) stays the only place a released value is made: the site stores the label as the
released score, and every surface (pages, API, CSV export, errors) shows exactly that, as it does for rounding;
there is no second, presentation-level filter to forget on one endpoint. Each declares its precision (0
decimals), its direction (:meth:`~defenses.base.Defense.released_higher_is_better`) and what its value means
(:meth:`~defenses.base.Defense.feedback`, public metadata).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from decimal import Decimal
from fractions import Fraction
from typing import Any

from defenses.base import (
    Defense,
    DefenseConfigError,
    DefenseContext,
    Param,
    Score,
    ScoringView,
    Stage,
    register,
    take_params,
)
from defenses.ladder import ACCEPTED, WITHHELD
from defenses.sampling import to_fraction

HARD_LABEL_KINDS = ("threshold", "rank", "accept_reject")


class HardLabel(Defense):
    """The shared contract of the hard-label stages: the last value-changing stage of a chain, 0 decimals."""

    stage = Stage.RELEASE

    def released_decimals(self, upstream: int | None) -> int | None:
        return 0

    def check_chain(self, earlier: list[Defense]) -> None:
        for defense in earlier:
            if defense.feedback() is not None:
                raise DefenseConfigError(
                    f"defense {self.name!r}: the chain already releases a hard label ({defense.name!r}); use one"
                )


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DefenseConfigError(f"defense 'threshold': {name} must be a finite number, got {value!r}")
    return float(value)


@register
class Threshold(HardLabel):
    """Release 1 if the score beats ``t`` (lower for a loss, higher for a score), else 0 — a badge board.

    ``t`` may be a list of cut-offs (a medal board): the release is how many of them the score beats, so 3
    beats all three. "Beats" is strict; a score equal to a cut-off does not. The cut-offs are public (a
    participant must know what a badge means), the score is not.

    >>> from defenses.base import MetricView, ScoringView, DefenseContext
    >>> import numpy as np
    >>> view = ScoringView(np.zeros(2), np.zeros(2, int), 2, MetricView("binary_logloss", False, None, None, 1e-15))
    >>> ctx = DefenseContext(np.random.default_rng(0), {}, "k")
    >>> medal = Threshold(t=[0.3, 0.5, 0.6])
    >>> [medal.after_metric(s, view, ctx) for s in (0.7, 0.6, 0.55, 0.2)]
    [0, 0, 1, 3]
    """

    name = "threshold"
    citation = "medal and badge boards; the hard-label feedback of Kahla et al., CVPR 2022 (paper 002)"
    parameters = (
        Param("t", "numbers", required=True,
              help="the cut-off, or a list of distinct cut-offs (a medal board: how many the score beats)"),
    )

    def __init__(self, **params: Any) -> None:
        p = take_params(self.name, params, {"t": None})
        given = p["t"]
        if given is None:
            raise DefenseConfigError("defense 'threshold': give the cut-off 't' (a number or a list of numbers)")
        values = given if isinstance(given, list) else [given]
        if not values:
            raise DefenseConfigError("defense 'threshold': 't' must hold at least one cut-off")
        cutoffs = sorted({_number("'t'", v) for v in values})
        if len(cutoffs) != len(values):
            raise DefenseConfigError("defense 'threshold': the cut-offs in 't' must be distinct")
        self.cutoffs: list[float] = cutoffs
        self._single = not isinstance(given, list)

    def params(self) -> dict[str, Any]:
        return {"t": self.cutoffs[0] if self._single else list(self.cutoffs)}

    def released_higher_is_better(self, upstream: bool) -> bool:
        return True

    def feedback(self) -> dict[str, Any]:
        return {"kind": "threshold", "t": list(self.cutoffs),
                "released": "how many cut-offs the score beats" if len(self.cutoffs) > 1
                else "1 if the score beats t, else 0"}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        exact = to_fraction(score)
        cutoffs = [Fraction(c) for c in self.cutoffs]
        if view.metric.higher_is_better:
            return bisect_left(cutoffs, exact)  # cut-offs strictly below the score
        return len(cutoffs) - bisect_right(cutoffs, exact)  # cut-offs strictly above the loss


@register
class Rank(HardLabel):
    """Release a rank (1 = the best) instead of the score.

    * ``among="own"`` (default): the rank of this submission among the participant's own scored submissions
      (a tie goes to the earlier one, as on the board). State: the scores so far, exact text, host-only.
    * ``among="board"``: the place this submission would take on the board of the OTHER participants' best
      scores, as a rank-only leaderboard shows it (a rival with an equal best submitted first, so it keeps the
      place). State: this participant's best so far; the rivals' bests are read from their states
      (:attr:`~defenses.base.DefenseContext.peers`), a snapshot at scoring time. With no rival it is always 1.

    >>> from defenses.base import MetricView, ScoringView, DefenseContext
    >>> import numpy as np
    >>> view = ScoringView(np.zeros(2), np.zeros(2, int), 2, MetricView("accuracy", True, None, None, 1e-15))
    >>> ctx = DefenseContext(np.random.default_rng(0), Rank().initial_state(), "k")
    >>> [Rank().after_metric(s, view, ctx) for s in (0.6, 0.7, 0.65, 0.7)]
    [1, 1, 2, 2]
    >>> rivals = ({"best": 0.8}, {"best": 0.65}, {"best": None})
    >>> board = DefenseContext(np.random.default_rng(0), {"best": None}, "k", peers=rivals)
    >>> [Rank(among="board").after_metric(s, view, board) for s in (0.6, 0.65, 0.9)]
    [3, 3, 1]
    """

    name = "rank"
    citation = "rank-only boards; the hard-label feedback of Kahla et al., CVPR 2022 (paper 002)"
    parameters = (
        Param("among", "choice", "own", choices=("own", "board"),
              help="own: rank among the participant's own submissions; board: place among the other participants"),
    )

    def __init__(self, **params: Any) -> None:
        p = take_params(self.name, params, {"among": "own"})
        if p["among"] not in ("own", "board"):
            raise DefenseConfigError(f"defense 'rank': 'among' must be 'own' or 'board', got {p['among']!r}")
        self.among: str = p["among"]
        self.needs_peers = self.among == "board"

    def params(self) -> dict[str, Any]:
        return {"among": self.among}

    def initial_state(self) -> dict[str, Any]:
        return {"best": None} if self.among == "board" else {"scores": []}

    def released_higher_is_better(self, upstream: bool) -> bool:
        return False

    def feedback(self) -> dict[str, Any]:
        if self.among == "board":
            return {"kind": "rank", "among": "board",
                    "released": "the place the submission would take among the other participants' best scores "
                    "(1 = best)"}
        return {"kind": "rank", "among": "own",
                "released": "the rank of the submission among your own submissions (1 = best)"}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        exact = to_fraction(score)
        higher = view.metric.higher_is_better
        if self.among == "board":
            rivals = [_stored(peer["best"]) for peer in ctx.peers if peer.get("best") is not None]
            # A rival ties in its favour: its best was scored before this submission.
            place = 1 + sum(1 for best in rivals if (best >= exact if higher else best <= exact))
            best = ctx.state.get("best")
            if best is None or (exact > _stored(best) if higher else exact < _stored(best)):
                ctx.state["best"] = _kept(score)
            return place
        seen = [_stored(s) for s in ctx.state.setdefault("scores", [])]
        # Earlier submissions win ties, so only an equal-or-better earlier score ranks above this one.
        better = sum(1 for s in seen if (s >= exact if higher else s <= exact))
        ctx.state["scores"].append(_kept(score))
        return better + 1


def _kept(score: Score) -> str | float:
    """A score as state keeps it: floats as JSON numbers (exact round trip), Decimals (MPFR) as their text."""
    return str(score) if isinstance(score, Decimal) else float(score)


def _stored(kept: str | float) -> Fraction:
    return to_fraction(Decimal(kept) if isinstance(kept, str) else float(kept))


@register
class AcceptReject(HardLabel):
    """Release the Ladder's decision without its value: 1 if the ``ladder`` earlier in the chain accepted this
    submission (a significant improvement on the participant's best), else 0 (Blum & Hardt, ICML 2015, with
    the released score withheld). The chain must have a Ladder before it.

    >>> from defenses import DefenseChain
    >>> DefenseChain.from_json([{"name": "accept_reject"}])
    Traceback (most recent call last):
    ...
    defenses.base.DefenseConfigError: defense #1: defense 'accept_reject' needs a 'ladder' before it in the chain
    """

    name = "accept_reject"
    citation = "Blum & Hardt, ICML 2015 (the Ladder's decision only); paper 002's hard-label threat model"

    def __init__(self, **params: Any) -> None:
        take_params(self.name, params, {})

    def check_chain(self, earlier: list[Defense]) -> None:
        super().check_chain(earlier)
        if not any(defense.name == "ladder" for defense in earlier):
            raise DefenseConfigError("defense 'accept_reject' needs a 'ladder' before it in the chain")

    def released_higher_is_better(self, upstream: bool) -> bool:
        return True

    def feedback(self) -> dict[str, Any]:
        return {"kind": "accept_reject", "released": "1 if the Ladder accepted the submission, else 0"}

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if ACCEPTED not in ctx.ledger or (score is None and not ctx.ledger.get(WITHHELD)):
            return None  # no Ladder decided, or a later defense withheld the release
        return 1 if ctx.ledger[ACCEPTED] else 0
