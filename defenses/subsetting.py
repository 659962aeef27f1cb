"""Score each submission on a fresh random subset of the split's rows (a defense suggested in the conclusion
of Aggarwal et al., ICML 2021, paper 000): a crafted probe's carefully placed rows are then scored only
partly and at random, so the score no longer decodes to a unique labeling."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from defenses.base import Defense, DefenseConfigError, DefenseContext, Param, ScoringView, Stage, register, take_params


@register
class Subsetting(Defense):
    """Score a random subset of the rows, drawn afresh per submission from ``ctx.rng``.

    Exactly one of ``fraction`` (0 < f <= 1, default 0.5) or ``count`` (rows, >= 1) sizes the subset; a
    ``count`` above the split's size scores every row (with a host note). ``disclosed`` (default false) says
    whether the competition metadata tells participants about the subsetting. The subset depends only on the
    secret and the submission key, so a re-score sees the same rows; it acts on top of the fixed
    public/private split. With AUC, a subset holding one class fails the submission: prefer larger subsets.

    Source: Aggarwal et al., "Label Inference Attacks from Log-loss Scores", ICML 2021, Section 6.

    >>> Subsetting(count=100).to_json()
    {'name': 'subsetting', 'count': 100, 'disclosed': False}
    """

    name = "subsetting"
    stage = Stage.DATA
    citation = "Aggarwal et al., ICML 2021, Section 6 (random subsets)"
    parameters = (
        Param("fraction", "number", 0.5, minimum=0, maximum=1, exclusive_minimum=True, excludes=("count",),
              help="the share of the split's rows scored"),
        Param("count", "integer", minimum=1, excludes=("fraction",), help="the number of rows scored instead"),
        Param("disclosed", "boolean", False, help="tell participants about the subsetting in the metadata"),
    )

    def __init__(self, **params: Any) -> None:
        p = take_params(self.name, params, {"fraction": None, "count": None, "disclosed": False})
        if p["fraction"] is not None and p["count"] is not None:
            raise DefenseConfigError("defense 'subsetting': give either 'fraction' or 'count', not both")
        if p["fraction"] is None and p["count"] is None:
            p["fraction"] = 0.5
        fraction, count = p["fraction"], p["count"]
        if fraction is not None and (
            isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction <= 1
        ):
            raise DefenseConfigError(f"defense 'subsetting': 'fraction' must be in (0, 1], got {fraction!r}")
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
            raise DefenseConfigError(f"defense 'subsetting': 'count' must be a positive integer, got {count!r}")
        if not isinstance(p["disclosed"], bool):
            raise DefenseConfigError(f"defense 'subsetting': 'disclosed' must be true or false, got {p['disclosed']!r}")
        self.fraction: float | None = None if fraction is None else float(fraction)
        self.count: int | None = count
        self.disclosed: bool = p["disclosed"]

    def params(self) -> dict[str, Any]:
        size = {"fraction": self.fraction} if self.fraction is not None else {"count": self.count}
        return {**size, "disclosed": self.disclosed}

    def disclosure(self) -> dict[str, Any] | None:
        return self.to_json() if self.disclosed else None

    def subset_size(self, n_rows: int) -> int:
        if self.count is not None:
            return min(self.count, n_rows)
        assert self.fraction is not None
        return max(1, min(n_rows, math.ceil(self.fraction * n_rows - 1e-9)))

    def before_metric(self, view: ScoringView, ctx: DefenseContext) -> ScoringView:
        n_rows = len(view.labels)
        size = self.subset_size(n_rows)
        if self.count is not None and self.count > n_rows:
            ctx.notes.append(f"subsetting: count {self.count} exceeds the {n_rows} rows; scoring all of them")
        rows = np.sort(ctx.rng.choice(n_rows, size=size, replace=False))
        return view.with_rows(rows)
