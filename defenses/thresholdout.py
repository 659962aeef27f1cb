"""Thresholdout (Dwork, Feldman, Hardt, Pitassi, Reingold & Roth, "The reusable holdout: Preserving validity
in adaptive data analysis", Science 2015): answer from the "training" side unless the holdout disagrees by
more than a noisy threshold, and only then spend budget and release a noisy holdout value."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from defenses import sampling
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
from defenses.noise import MAX_SCALE


def _laplace(ctx: DefenseContext, scale: float) -> Fraction:
    """Exact Laplace(scale) noise on the finest float grid, from the seeded per-submission generator."""
    return sampling.laplace_units(ctx.rng, scale, sampling.FINEST_K) * Fraction(2) ** sampling.FINEST_K


def _optional_positive(key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise DefenseConfigError(f"defense 'thresholdout': {key!r} must be a positive number, got {value!r}")
    if value > MAX_SCALE:
        raise DefenseConfigError(
            f"defense 'thresholdout': {key!r} must be at most {MAX_SCALE:g} (larger noise overflows float64 "
            f"arithmetic), got {value!r}"
        )
    return float(value)


@register
class Thresholdout(Defense):
    """Thresholdout over a split divided, once per competition, into a reference side and a holdout side.

    The algorithm (Dwork et al. 2015, as in FIELD_NOTES): ``T̂ = T + Lap(2σ)``; per query, if budget is left
    and ``|holdout − reference| > T̂ + Lap(4σ)``, spend one unit, redraw ``T̂`` and release ``holdout + Lap(σ)``;
    otherwise release ``reference``. When the budget is spent nothing more is released (the participant is
    told why), as the algorithm halts.

    The reference ("training") side, practical form: the algorithm compares against the analyst's own
    training data, which a leaderboard does not have. Here ``reference_fraction`` (default 0.5) of the
    split's rows are set aside as the reference side, chosen once per competition by ``ctx.competition_rng``
    (so every participant and every submission shares them, and the site persists nothing extra: the secret
    re-derives them). The holdout side is the rest. Caveat the host should know: the reference value is
    released exactly, so the reference rows are as exposed to label inference as on a plain leaderboard;
    Thresholdout protects the holdout side against adaptive overfitting. Chain it with rounding (and noise
    before the reference value is computed is not possible: Thresholdout replaces the score, so it must be
    the first SCORE-stage defense).

    Defaults scale with the holdout size ``n`` as in the authors' experiment: ``threshold`` ``4/√n``,
    ``sigma`` ``1/√n``; ``budget`` (overfitting detections allowed per participant) 100. These suit metrics
    in [0, 1] (accuracy, AUC, Brier); for log loss give ``threshold`` and ``sigma`` in log-loss units.

    State per participant: ``budget_left`` and the current noisy threshold ``threshold_noisy``; with ``scope:
    "competition"`` one such state for the whole board (the budget is the board's, every participant spends it);
    with ``scope: "team"`` one per team. Two merging teams add up the detections they spent (:meth:`merge_state`).

    >>> Thresholdout(budget=10).to_json()
    {'name': 'thresholdout', 'reference_fraction': 0.5, 'budget': 10}
    """

    name = "thresholdout"
    stage = Stage.SCORE
    citation = "Dwork et al., Science 349(6248), 2015, Thresholdout"
    parameters = (
        Param("reference_fraction", "number", 0.5, minimum=0, maximum=1, exclusive_minimum=True,
              exclusive_maximum=True, help="the share of the split's rows set aside as the reference side"),
        Param("threshold", "number", minimum=0, maximum=MAX_SCALE, exclusive_minimum=True,
              default_text="4/√n for n holdout rows", help="T, in the metric's units"),
        Param("sigma", "number", minimum=0, maximum=MAX_SCALE, exclusive_minimum=True,
              default_text="1/√n for n holdout rows", help="σ of the Laplace noise, in the metric's units"),
        Param("budget", "integer", 100, minimum=1, help="overfitting detections allowed"),
        SCOPE_PARAM,
    )

    def __init__(self, **params: Any) -> None:
        self.scope, params = take_scope(self.name, params)
        p = take_params(
            self.name, params, {"reference_fraction": 0.5, "threshold": None, "sigma": None, "budget": 100}
        )
        fraction = p["reference_fraction"]
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
            raise DefenseConfigError(
                f"defense 'thresholdout': 'reference_fraction' must be in (0, 1), got {fraction!r}"
            )
        budget = p["budget"]
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise DefenseConfigError(f"defense 'thresholdout': 'budget' must be a positive integer, got {budget!r}")
        self.reference_fraction = float(fraction)
        self.threshold = _optional_positive("threshold", p["threshold"])
        self.sigma = _optional_positive("sigma", p["sigma"])
        self.budget: int = budget

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reference_fraction": self.reference_fraction}
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.sigma is not None:
            out["sigma"] = self.sigma
        out["budget"] = self.budget
        return {**out, **self.scope_params()}

    def initial_state(self) -> dict[str, Any]:
        return {"budget_left": self.budget, "threshold_noisy": None}

    def merge_state(self, kept: dict[str, Any], other: dict[str, Any], *, higher_is_better: bool) -> dict[str, Any]:
        """What both teams spent of the budget, spent once more; the surviving team's noisy threshold.

        >>> Thresholdout(budget=10).merge_state({"budget_left": 7, "threshold_noisy": 0.1},
        ...                                     {"budget_left": 6, "threshold_noisy": 0.2}, higher_is_better=True)
        {'budget_left': 3, 'threshold_noisy': 0.1}
        """
        left = kept.get("budget_left", self.budget) + other.get("budget_left", self.budget) - self.budget
        noisy = kept.get("threshold_noisy")
        if noisy is None:
            noisy = other.get("threshold_noisy")
        return {"budget_left": max(left, 0), "threshold_noisy": noisy}

    def check_chain(self, earlier: list[Defense]) -> None:
        if any(d.stage is Stage.SCORE for d in earlier):
            raise DefenseConfigError(
                "defense 'thresholdout' replaces the score, so it must come before other score defenses"
            )

    def reference_mask(self, view: ScoringView, ctx: DefenseContext) -> np.ndarray:
        """Which of the view's rows are on the reference side (fixed per competition, by split position)."""
        rows = view.rows_in_split
        draws = ctx.fixed_rng().random(int(rows.max(initial=-1)) + 1)
        return draws[rows] < self.reference_fraction

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        reference = self.reference_mask(view, ctx)
        if reference.all() or not reference.any():
            ctx.notes.append("thresholdout: a side is empty on these rows; released the plain score")
            return score
        n_holdout = int((~reference).sum())
        threshold = self.threshold if self.threshold is not None else 4 / math.sqrt(n_holdout)
        sigma = self.sigma if self.sigma is not None else 1 / math.sqrt(n_holdout)
        if ctx.state.get("budget_left", self.budget) < 1:
            ctx.message = (
                "This leaderboard's holdout budget is used up; no further scores are released."
                if self.shared
                else "This leaderboard's holdout budget for your team is used up; no further scores are released."
                if self.team_scoped
                else "This leaderboard's holdout budget for you is used up; no further scores are released."
            )
            ctx.notes.append("thresholdout: budget exhausted")
            return None
        reference_score = Fraction(view.with_rows(np.flatnonzero(reference)).score())
        holdout_score = Fraction(view.with_rows(np.flatnonzero(~reference)).score())
        if ctx.state.get("threshold_noisy") is None:
            ctx.state["threshold_noisy"] = float(threshold + _laplace(ctx, 2 * sigma))
        if abs(holdout_score - reference_score) > Fraction(ctx.state["threshold_noisy"]) + _laplace(ctx, 4 * sigma):
            ctx.state["budget_left"] = ctx.state.get("budget_left", self.budget) - 1
            ctx.state["threshold_noisy"] = float(threshold + _laplace(ctx, 2 * sigma))
            ctx.notes.append("thresholdout: holdout disagreed; released a noisy holdout value")
            # Kept in the metric's range, as the noise defense does (post-processing).
            return view.metric.clamp(float(holdout_score + _laplace(ctx, sigma)))
        return float(reference_score)
