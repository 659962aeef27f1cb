"""How much one hidden label can move a metric: the sensitivity that calibrates privacy-preserving noise.

The privacy unit is one test label (label-level differential privacy, the threat model of the label-
inference papers): two hidden test sets are neighbours when they differ in the label of one row, with the
same rows and the same predictions. For a metric that is the mean of per-row values ``m(p_i, y_i)`` over the
``n`` scored rows, changing row ``i``'s label changes the score by at most ``max |m(p_i, y) - m(p_i, y')| / n``.

Per metric (``n`` = rows scored, after any DATA-stage defense; ``eps`` = the clipping constant):

* ``binary_logloss`` and ``multiclass_logloss``: a row's loss is ``-ln q_y`` where the clipped (and for K
  classes renormalised) probabilities satisfy ``eps/(1-eps) <= q_a/q_b <= (1-eps)/eps`` — clipping bounds
  every entry to ``[eps, 1-eps]`` and renormalising divides all entries of a row by the same sum. So a row's
  loss moves by at most ``ln((1-eps)/eps)`` (34.54 at ``eps = 1e-15``: FIELD_NOTES' ``A``) and
  ``Δ = ln((1-eps)/eps) / n`` — with ``eps`` read as ``1 - fl(1 - eps)`` where that is smaller, since the
  binary loss of label 0 reads ``1 - p`` of the clipped ``p`` (the scoring core's ``row_spread``). This is
  why log loss is so leaky and why calibrated noise on it is large.
* ``brier``: binary ``(p - y)^2`` moves by ``|1 - 2p| <= 1``, so ``Δ = 1/n``; K classes (squared Euclidean
  distance to the one-hot label) move by ``|2(p_a - p_b)| <= 2``, so ``Δ = 2/n``.
* ``accuracy``: a row is 0 or 1, ``Δ = 1/n``.
* every other mean of rows (paper 001's ``kl``, ``itakura_saito``, ``norm_like``, ``softmax_ce``,
  ``sigmoid_ce``): ``Δ = s / n`` with ``s`` the metric's own bound on how far one row moves when its label
  changes (:attr:`MetricView.row_spread`, derived beside each metric in ``scoring/metrics.py``): ``ln((1-eps)/
  eps)`` for the cross-entropies (the label's probability is clipped to ``[eps, 1-eps]``), ``g(eps) -
  g(1-eps)`` with ``g(x) = 1/x + ln x - 1`` for Itakura–Saito, ``α`` for the norm-like loss.
* ``auc``: not a mean of rows. With ``P`` positives and ``N`` negatives, moving one row from negatives to
  positives changes AUC by at most ``max(1/N, 1/(P+1))`` (write both AUCs as convex combinations of the
  pairs not involving the row and the row's own pairs), so ``Δ <= 1 / min(P, N)``. This uses the class
  counts of the scored rows, i.e. treats them as public (they are close to what any baseline submission
  reveals); a host who wants that counted should budget for it separately.

Each bound is rounded up by a few ulps so that float rounding never under-states it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from defenses.base import DefenseConfigError, MetricView, ScoringView

SensitivityFn = Callable[[ScoringView], float]


def _up(value: float) -> float:
    """``value`` nudged up by 4 ulps, so the computed bound is never below the true one."""
    for _ in range(4):
        value = math.nextafter(value, math.inf)
    return value


def _logloss(view: ScoringView) -> float:
    if view.metric.row_spread is not None:  # the scoring core's bound, which knows how 1 - eps rounds
        return _up(view.metric.row_spread / len(view.labels))
    eps = view.metric.eps
    return _up((math.log1p(-eps) - math.log(eps)) / len(view.labels))


def _brier(view: ScoringView) -> float:
    per_row = 1.0 if view.predictions.ndim == 1 else 2.0
    return _up(per_row / len(view.labels))


def _accuracy(view: ScoringView) -> float:
    return _up(1.0 / len(view.labels))


def _auc(view: ScoringView) -> float:
    positives = int(np.count_nonzero(view.labels == 1))
    smaller = min(positives, len(view.labels) - positives)
    if smaller == 0:
        raise DefenseConfigError("AUC sensitivity is undefined when the scored rows hold a single class")
    return _up(1.0 / smaller)


SENSITIVITY: dict[str, SensitivityFn] = {
    "binary_logloss": _logloss,
    "multiclass_logloss": _logloss,
    "brier": _brier,
    "accuracy": _accuracy,
    "auc": _auc,
}


def has_sensitivity(metric: MetricView) -> bool:
    return metric.name in SENSITIVITY or metric.row_spread is not None


def worst_case_sensitivity(metric: MetricView) -> float:
    """The largest Δ the metric can have on any competition: one scored row (and, for AUC, one of each class).

    >>> view = lambda name: MetricView(name, False, lambda p, y: 0.0, None, 1e-15)
    >>> round(worst_case_sensitivity(view("binary_logloss")), 2), worst_case_sensitivity(view("auc"))
    (34.54, 1.0)
    """
    if metric.row_spread is not None:
        return _up(metric.row_spread)
    if metric.name in ("binary_logloss", "multiclass_logloss"):
        return _up(math.log1p(-metric.eps) - math.log(metric.eps))
    if metric.name == "brier":
        return 2.0
    if metric.name in SENSITIVITY:
        return 1.0
    if metric.row_spread is not None:
        return _up(metric.row_spread)
    raise DefenseConfigError(f"no sensitivity is derived for metric {metric.name!r}")


def sensitivity(view: ScoringView) -> float:
    """Δ of the view's metric on its scored rows, per the derivations in this module's docstring."""
    try:
        fn = SENSITIVITY[view.metric.name]
    except KeyError:
        if view.metric.row_spread is not None:
            return _up(view.metric.row_spread / len(view.labels))
        raise DefenseConfigError(
            f"no sensitivity is derived for metric {view.metric.name!r}; calibrated noise supports "
            f"{', '.join(sorted(SENSITIVITY))} (give a fixed 'scale' instead)"
        ) from None
    return fn(view)
