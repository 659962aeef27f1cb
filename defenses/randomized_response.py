"""Randomized response on the hidden labels before scoring (Warner 1965), K-ary for multiclass — the label
defense suggested in paper 000's conclusion (Aggarwal et al., ICML 2021, Section 6)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from defenses.base import Defense, DefenseConfigError, DefenseContext, Param, ScoringView, Stage, register, take_params

MODES = ("fixed", "fresh")


def flip_probability(epsilon: float, n_classes: int) -> float:
    """The flip probability of K-ary randomized response that is ε-label-DP: ``p = (K-1)/(e^ε + K - 1)``.

    Keeping the label with probability ``1-p`` and moving to each of the ``K-1`` other classes with probability
    ``p/(K-1)`` gives likelihood ratio ``(1-p)(K-1)/p = e^ε``; for two classes ``p = 1/(1+e^ε)``.

    >>> round(flip_probability(math.log(3), 2), 12)
    0.25
    """
    # Written with e^-ε so a large ε gives p = 0 instead of overflowing.
    odds = (n_classes - 1) * math.exp(-epsilon)
    return odds / (1 + odds)


def epsilon_of(p: float, n_classes: int) -> float:
    """The ε of K-ary randomized response with flip probability ``p`` (∞ when ``p = 0``)."""
    if p <= 0:
        return math.inf
    return math.log((1 - p) * (n_classes - 1) / p)


@register
class RandomizedResponse(Defense):
    """Flip each hidden label before scoring: keep it with probability ``1-p``, else replace it by a class drawn
    uniformly from the ``K-1`` other classes (binary: flip with probability ``p``).

    ``p`` in [0, 1) or ``epsilon`` > 0 (then ``p = (K-1)/(e^ε + K - 1)``, binary ``1/(1+e^ε)``); default ``p =
    0.05``. ``mode``:

    * ``"fixed"`` (default): the flips are drawn once per competition — from ``ctx.competition_rng``, seeded by
      the competition secret, the split and the chain position only — so every submission of every participant
      is scored against the same noisy labels (averaging over submissions cannot remove them).
    * ``"fresh"``: new flips per submission from ``ctx.rng`` (secret + submission key), so a re-score repeats
      them but a different submission sees different ones.

    Flips are indexed by the row's position in the split (``ScoringView.rows_in_split``), so a fixed flip
    stays with its row even when subsetting chose the rows first. Each release records the mechanism's ε in
    ``ctx.ledger["privacy"]`` (the fixed mode marks it ``once``: the noisy labels are drawn a single time).

    Sources: S. L. Warner, "Randomized response", JASA 1965; Ghazi et al., "Deep learning with label
    differential privacy", NeurIPS 2021 (K-ary RR as label-DP); Aggarwal et al., ICML 2021, Section 6.
    """

    name = "randomized_response"
    stage = Stage.DATA
    citation = "Warner 1965; Ghazi et al. 2021; Aggarwal et al., ICML 2021, Section 6"
    parameters = (
        Param("p", "number", 0.05, minimum=0, maximum=1, exclusive_maximum=True, excludes=("epsilon",),
              help="the probability of replacing a label"),
        Param("epsilon", "number", minimum=0, exclusive_minimum=True, excludes=("p",),
              help="the label-DP ε instead of p: p = (K-1)/(e^ε + K - 1)"),
        Param("mode", "choice", "fixed", choices=MODES,
              help="fixed: one draw for the whole competition; fresh: new flips per submission"),
    )

    def __init__(self, **params: Any) -> None:
        p = take_params(self.name, params, {"p": None, "epsilon": None, "mode": "fixed"})
        if p["p"] is not None and p["epsilon"] is not None:
            raise DefenseConfigError("defense 'randomized_response': give either 'p' or 'epsilon', not both")
        if p["p"] is None and p["epsilon"] is None:
            p["p"] = 0.05
        if p["p"] is not None and (
            isinstance(p["p"], bool) or not isinstance(p["p"], (int, float)) or not 0 <= p["p"] < 1
        ):
            raise DefenseConfigError(f"defense 'randomized_response': 'p' must be in [0, 1), got {p['p']!r}")
        if p["epsilon"] is not None and (
            isinstance(p["epsilon"], bool) or not isinstance(p["epsilon"], (int, float))
            or not 0 < p["epsilon"] < math.inf
        ):
            raise DefenseConfigError(
                f"defense 'randomized_response': 'epsilon' must be a positive number, got {p['epsilon']!r}"
            )
        if p["mode"] not in MODES:
            raise DefenseConfigError(
                f"defense 'randomized_response': 'mode' must be one of {', '.join(MODES)}, got {p['mode']!r}"
            )
        self.p: float | None = None if p["p"] is None else float(p["p"])
        self.epsilon: float | None = None if p["epsilon"] is None else float(p["epsilon"])
        self.mode: str = p["mode"]

    def params(self) -> dict[str, Any]:
        strength = {"p": self.p} if self.p is not None else {"epsilon": self.epsilon}
        return {**strength, "mode": self.mode}

    def records_privacy(self) -> bool:
        return True

    def flip_probability(self, n_classes: int) -> float:
        return self.p if self.p is not None else flip_probability(self.epsilon or 0.0, n_classes)

    def before_metric(self, view: ScoringView, ctx: DefenseContext) -> ScoringView:
        k = view.n_classes
        p = self.flip_probability(k)
        rows = view.rows_in_split
        generator = ctx.fixed_rng() if self.mode == "fixed" else ctx.rng
        # Draw for every split position up to the largest one present, so a row's draw does not depend on
        # which other rows are scored (a generator's stream is consumed in order: prefixes agree).
        size = int(rows.max(initial=-1)) + 1
        uniforms = generator.random((size, 2))[rows]
        flip = uniforms[:, 0] < p
        shift = 1 + np.minimum((uniforms[:, 1] * (k - 1)).astype(np.int64), k - 2)
        labels = np.where(flip, (view.labels + shift) % k, view.labels)
        if p > 0:
            entry: dict[str, Any] = {"defense": self.name, "epsilon": epsilon_of(p, k), "delta": 0.0}
            if self.mode == "fixed":
                entry["once"] = f"{self.name}:{p!r}:{k}"
            ctx.ledger.setdefault("privacy", []).append(entry)
        return view.with_labels(labels.astype(view.labels.dtype))
