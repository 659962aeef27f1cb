"""Claimed labels, checked with one query: the one path by which anything re-checks a labeling it claims.

:func:`confident_predictions` stakes everything on a labeling (the bot's and the game's final submissions are
built with it too); :func:`check_claims` submits those predictions and compares the released score with the
score the labels imply, computed with the public metric formula; :func:`confirm` is the check ``attacks.run``
adds after an exact attack, and the attacks that check themselves (``capacity``'s ``check``, the τ-robust
attacks' ``verify``) call :func:`check_claims` with the noise bound they were told.

One wrong label moves a log loss by ≈ ln((1-eps)/eps)/N (≥ 1.4e-3 at N = 25,000), far above the 5-decimal
resolution, so a labeling that is wrong anywhere fails loudly — which is what catches a server that does not
behave as the attack assumed (a Ladder that re-releases an old score, undisclosed subsetting, noise beyond the
assumed bound).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult
from attacks.server_model import ServerModel
from scoring.metrics import Metric, get_metric

LOG_LOSSES = frozenset({"binary_logloss", "multiclass_logloss"})
#: The metrics the exact attacks run on, each checked with its own formula (``norm_like:α`` by its base name).
CHECKED = LOG_LOSSES | {"kl", "brier", "norm_like", "itakura_saito", "softmax_ce", "sigmoid_ce"}
#: The smallest stake the check puts on a wrong class: ``1 - 2^-50`` stays below 1.0 as a float64, so a wrong
#: label costs a finite loss however small the server's clipping ``eps``.
MIN_STAKE = 2.0**-50
#: Reading the stake at the server's precision moves a row's loss by at most ~2^-50; this floor covers it.
CLIPPING_FLOOR = 1e-9


def confident_predictions(
    labels: np.ndarray, n_classes: int, confidence: float | np.ndarray | None = None, *, eps: float = 1e-15
) -> np.ndarray:
    """Predictions that stake everything on ``labels``: ``confidence`` on each claimed label and the rest spread
    evenly over the other classes — by default ``eps`` on every other class (``1 - (K-1)·eps`` on the claimed
    one) — and the neutral ``1/K`` on rows marked ``-1`` (not claimed), whose loss is the same for every label.

    ``confidence`` may be one number or one per row (an attack result's ``confidence``: a guessed row is staked
    at its posterior probability, an exact one — confidence 1 — at ``1 - (K-1)·eps``, which minimises the
    expected log loss of the submission). Binary: P(class 1) per row; K classes: an ``(n, K)`` matrix.

    >>> confident_predictions(np.array([1, 0, -1]), 2).tolist()
    [0.999999999999999, 1e-15, 0.5]
    >>> confident_predictions(np.array([1, 0, -1]), 2, 0.99).tolist()
    [0.99, 0.010000000000000009, 0.5]
    >>> confident_predictions(np.array([2, -1]), 3, 0.9).round(3).tolist()
    [[0.05, 0.05, 0.9], [0.333, 0.333, 0.333]]
    >>> confident_predictions(np.array([1, 0, 1]), 2, np.array([1.0, 0.7, 0.6])).round(3).tolist()
    [1.0, 0.3, 0.6]
    """
    labels = np.asarray(labels, dtype=np.int64)
    claimed_p: float | np.ndarray
    other_p: float | np.ndarray
    if confidence is None:
        claimed_p, other_p = 1.0 - (n_classes - 1) * eps, eps
    elif np.ndim(confidence) == 0:
        claimed_p, other_p = float(confidence), (1.0 - float(confidence)) / (n_classes - 1)  # type: ignore[arg-type]
    else:
        wanted = np.asarray(confidence, dtype=np.float64)
        sure = wanted >= 1.0 - (n_classes - 1) * eps
        claimed_p = np.where(sure, 1.0 - (n_classes - 1) * eps, np.clip(wanted, 1.0 / n_classes, None))
        other_p = np.where(sure, eps, (1.0 - claimed_p) / (n_classes - 1))
    if n_classes == 2:
        return np.where(labels == 1, claimed_p, np.where(labels == 0, other_p, 0.5))
    out = np.empty((len(labels), n_classes))
    out[:] = np.asarray(other_p, dtype=np.float64).reshape(-1, 1) if np.ndim(other_p) else other_p
    claimed = labels >= 0
    rows = np.flatnonzero(claimed)
    out[rows, labels[claimed]] = claimed_p[claimed] if isinstance(claimed_p, np.ndarray) else claimed_p
    out[~claimed] = 1.0 / n_classes
    return out


def check_claims(
    oracle: Oracle,
    labels: np.ndarray,
    *,
    scored: np.ndarray | None = None,
    slack: float = 0.0,
    relative: float = 0.0,
) -> str:
    """Spend one query on ``labels`` (``-1``: not claimed) and raise :class:`AttackFailed` unless the released
    score is the one they imply. Returns ``"passed"``, or ``"uninformative (…)"`` when one wrong label would move
    the score by less than twice the tolerance; on a metric outside :data:`CHECKED` (AUC, accuracy) it spends
    nothing and returns ``"not checked (…)"``. Each metric of :data:`CHECKED` is checked with its own formula
    (``softmax_ce``/``sigmoid_ce`` with the stake sent as logits).

    Claimed rows are sent at ``1 - (K-1)·e`` on their label (``e = max(eps, 2^-50)``), the others at ``1/K``.
    ``scored`` marks the rows the released score covers (default: all; a split-aware attack passes the public
    rows). The tolerance is half a unit of the released decimals, the server's rounding (float64 or its
    ``mpfr:φ``), an additive noise bound ``slack`` and ``relative`` × the score (multiplicative noise).

    >>> from attacks.oracle import LocalOracle
    >>> check_claims(LocalOracle([0, 1, 1, 0], decimals=5), np.array([0, 1, 1, -1]))
    'passed'
    """
    if oracle.metric.partition(":")[0] not in CHECKED:
        return f"not checked (metric {oracle.metric})"
    metric = get_metric(oracle.metric)
    assert metric.row_values is not None
    labels = np.asarray(labels, dtype=np.int64)
    stake = max(float(oracle.eps), MIN_STAKE)
    # The logit metrics take the stake as logits (its log-odds or log-probabilities); the others as it is.
    predictions = metric.from_probabilities(confident_predictions(labels, oracle.n_classes, eps=stake))
    released = oracle.submit(predictions)
    if released is None:
        raise AttackFailed("the confirmation query released no score; the claimed labels cannot be vouched for")
    scored = np.ones(len(labels), dtype=bool) if scored is None else np.asarray(scored, dtype=bool)
    assumed = np.where(labels >= 0, labels, 0)
    expected = float(metric.score(predictions[scored], assumed[scored], oracle.eps))
    n_scored = max(int(scored.sum()), 1)
    server = ServerModel.of(oracle, noise_bound=slack, n_scored=n_scored)
    tolerance = _tolerance(server, expected, formula=oracle.metric not in LOG_LOSSES)
    tolerance += relative * abs(expected)
    gap = abs(float(released) - expected)
    if gap > tolerance:
        raise AttackFailed(
            f"confirmation failed: the claimed labels imply a score of {expected:.6g}, the leaderboard released "
            f"{float(released):.6g} (tolerance {tolerance:.2g}); the server does not behave as the attack "
            "assumed (noise beyond the assumed bound, a Ladder, subsetting or a wrong precision), so no label is "
            "claimed"
        )
    moved = one_wrong(metric, oracle.n_classes, oracle.eps, stake) / n_scored
    if moved <= 2.0 * tolerance:
        return "uninformative (one wrong label moves the score less than the window)"
    return "passed"


def one_wrong(metric: Metric, n_classes: int, eps: float, stake: float) -> float:
    """How much one wrong label moves the summed score of a staked row: the row claiming class 0, scored
    under class 1 rather than class 0 (every class is staked alike)."""
    if metric.name in LOG_LOSSES:
        return math.log((1.0 - (n_classes - 1) * stake) / stake)
    row = metric.from_probabilities(confident_predictions(np.zeros(2, dtype=np.int64), n_classes, eps=stake))
    assert metric.row_values is not None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        values = metric.row_values(row, np.array([0, 1]), eps)
    return float(abs(values[1] - values[0]))


def _tolerance(server: ServerModel, expected: float, *, formula: bool = False) -> float:
    """How far the released score may sit from ``expected`` on the mean scale, by the one server model: the
    server's roundings, its released decimals and the noise bound, plus our own float64 evaluation of
    ``expected`` (the same formula, so the same model at 53 bits) and a floor for reading the confident
    predictions (``1 - 2^-50`` is 1 below 50 bits, then clipped at ``1 - eps``). ``formula``: a metric other
    than the log losses (paper 001's losses, the cross-entropies on logits, accuracy), whose rows are bounded
    by :meth:`~attacks.server_model.ServerModel.formula_row_error` on their summed magnitude plus a few units
    a row (the terms of a row besides its loss)."""
    n = server.scored
    magnitude = n * abs(expected)
    classes = None if server.n_classes == 2 else server.n_classes
    ours = ServerModel(n_rows=server.n_rows, n_classes=server.n_classes, n_scored=n)
    if formula:
        terms = magnitude + n * (server.n_classes + 3)
        bound = server.error_bound(magnitude, server.formula_row_error(terms, classes)) + ours.arithmetic_error(
            magnitude, ours.formula_row_error(terms, classes)
        )
    else:
        bound = server.error_bound(magnitude, server.rows_error(magnitude, n, classes)) + ours.arithmetic_error(
            magnitude, ours.rows_error(magnitude, n, classes)
        )
    return float(bound) / n + CLIPPING_FLOOR * max(1.0, abs(expected))


def confirm(oracle: Oracle, result: AttackResult, *, slack: float = 0.0) -> None:
    """Check ``result``'s claimed labels with :func:`check_claims` and record the outcome in
    ``result.details["confirmed"]``; raise :class:`AttackFailed` on a mismatch.

    ``slack`` widens the tolerance by a noise bound the attack was told about. Rows outside
    ``result.details["scored_rows"]`` (or ``["public_mask"]``: a boolean mask, for split-aware attacks) are left
    out of the expected score, as the server leaves them out of the released one.
    """
    details = result.details
    scored = details.get("scored_rows", details.get("public_mask"))
    details["confirmed"] = check_claims(
        oracle, result.labels, scored=None if scored is None else np.asarray(scored, dtype=bool), slack=slack
    )


def slack_from(params: dict[str, Any]) -> float:
    """The noise bound an attack was told about, if any (``noise_bound`` or ``tau``)."""
    for key in ("noise_bound", "tau"):
        value = params.get(key)
        if isinstance(value, int | float):
            return float(value)
    return 0.0


def count_wrong(oracle: Oracle, labels: np.ndarray, staked: np.ndarray, *, earlier: list[float]) -> float | None:
    """Spend one query staking ``labels`` in full on the ``staked`` rows (the others at ``1/K``) and return how many
    of those labels the released score says are wrong (a real number: the release's noise and rounding move it),
    or ``None`` when the release cannot say: nothing released, a release equal to one in ``earlier`` (a Ladder
    re-releasing its best score), or a score below what every staked label right implies. Every row must be
    scored (no split). Metrics outside :data:`CHECKED` spend nothing and return ``None``.

    >>> from attacks.oracle import LocalOracle
    >>> truth = np.array([0, 1, 2, 1, 0, 2])
    >>> claimed = np.array([0, 1, 2, 0, 0, 1])
    >>> board = LocalOracle(truth, metric="brier", n_classes=3, decimals=5)
    >>> round(count_wrong(board, claimed, np.ones(6, dtype=bool), earlier=[]), 3)
    2.0
    """
    if oracle.metric.partition(":")[0] not in CHECKED:
        return None
    metric = get_metric(oracle.metric)
    labels = np.asarray(labels, dtype=np.int64)
    claimed = np.where(np.asarray(staked, dtype=bool), labels, -1)
    stake = max(float(oracle.eps), MIN_STAKE)
    predictions = metric.from_probabilities(confident_predictions(claimed, oracle.n_classes, eps=stake))
    released = oracle.submit(predictions)
    if released is None or any(float(released) == value for value in earlier):
        return None
    n = len(labels)
    all_right = float(metric.score(predictions, np.where(claimed >= 0, claimed, 0), oracle.eps))
    # The unstaked rows at 1/K lose the same whatever their label: the gap is the staked rows' wrong ones.
    wrong = (float(released) - all_right) * n / one_wrong(metric, oracle.n_classes, oracle.eps, stake)
    return None if wrong < -1.0 else max(wrong, 0.0)
