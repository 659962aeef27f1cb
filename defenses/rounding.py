"""Rounding of the released score, the defense every Kaggle leaderboard applies (5 decimals)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal
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


def round_decimals(value: Score, decimals: int) -> Score:
    """Round to ``decimals`` places: float64 by Python's correctly rounded ``round``, Decimal exactly."""
    if isinstance(value, Decimal):
        return value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_EVEN)
    return round(value, decimals)


def round_significant(value: Score, digits: int) -> Score:
    """Round to ``digits`` significant digits (0 stays 0)."""
    if value == 0:
        return value
    magnitude = math.floor(math.log10(abs(float(value))))
    return round_decimals(value, digits - 1 - magnitude)


@register
class Rounding(Defense):
    """Round the released score to ``decimals`` places (Kaggle shows 5) or to ``significant`` digits.

    Source: Kaggle's public leaderboard; the papers' fixed-precision server model (paper 000, Section 2).
    Exactly one of ``decimals`` (default 5) and ``significant`` is used.
    """

    name = "rounding"
    stage = Stage.RELEASE
    citation = "Kaggle leaderboard (5 decimals); Aggarwal et al., ICML 2021, Section 2"
    parameters = (
        Param("decimals", "integer", 5, minimum=0, maximum=15, excludes=("significant",),
              help="decimal places released (Kaggle shows 5)"),
        Param("significant", "integer", minimum=1, maximum=15, excludes=("decimals",),
              help="significant digits released instead of a number of places"),
    )

    def __init__(self, **params: Any) -> None:
        p = take_params(self.name, params, {"decimals": None, "significant": None})
        if p["decimals"] is not None and p["significant"] is not None:
            raise DefenseConfigError("defense 'rounding': give either 'decimals' or 'significant', not both")
        if p["decimals"] is None and p["significant"] is None:
            p["decimals"] = 5
        for key in ("decimals", "significant"):
            value = p[key]
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 15):
                raise DefenseConfigError(f"defense 'rounding': {key!r} must be an integer from 0 to 15, got {value!r}")
        if p["significant"] == 0:
            raise DefenseConfigError("defense 'rounding': 'significant' must be at least 1")
        self.decimals: int | None = p["decimals"]
        self.significant: int | None = p["significant"]

    def params(self) -> dict[str, Any]:
        if self.significant is not None:
            return {"significant": self.significant}
        return {"decimals": self.decimals}

    def released_decimals(self, upstream: int | None) -> int | None:
        """``decimals`` places at most; rounding to significant digits fixes no number of places.

        >>> Rounding(decimals=3).released_decimals(None), Rounding(decimals=3).released_decimals(2)
        (3, 2)
        >>> Rounding(significant=4).released_decimals(6)
        6
        """
        if self.decimals is None:
            return upstream
        return self.decimals if upstream is None else min(upstream, self.decimals)

    def after_metric(self, score: Score | None, view: ScoringView, ctx: DefenseContext) -> Score | None:
        if score is None:
            return None
        if self.significant is not None:
            return round_significant(score, self.significant)
        assert self.decimals is not None
        return round_decimals(score, self.decimals)
