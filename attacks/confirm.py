"""A final confirmation query that keeps an exact attack from claiming labels the leaderboard contradicts.

After an exact attack, submit its claimed labels as confident predictions (``1 - eps`` / ``eps``, one-hot for K
classes; a neutral 0.5 or 1/K on rows it did not claim) and compare the released score with the score those
labels imply, computed with the public metric formula. One wrong label moves a log loss by ≈ ln((1-eps)/eps)/N
(≥ 1.4e-3 at N = 25,000), far above the 5-decimal resolution, so a labeling that is wrong anywhere fails
loudly — which is what catches a server that does not behave as the attack assumed (a Ladder that re-releases
an old score, undisclosed subsetting or noise).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attacks.oracle import Oracle
from attacks.result import AttackFailed, AttackResult
from scoring.metrics import get_metric

LOG_LOSSES = frozenset({"binary_logloss", "multiclass_logloss"})


def confirmation_predictions(labels: np.ndarray, n_classes: int, eps: float) -> np.ndarray:
    """Confident predictions for claimed rows, neutral ones for rows marked ``-1``."""
    claimed = labels >= 0
    if n_classes == 2:
        predictions = np.full(len(labels), 0.5)
        predictions[claimed] = np.where(labels[claimed] == 1, 1.0 - eps, eps)
        return predictions
    predictions = np.full((len(labels), n_classes), 1.0 / n_classes)
    onehot = np.full((int(claimed.sum()), n_classes), eps)
    onehot[np.arange(len(onehot)), labels[claimed]] = 1.0 - eps * (n_classes - 1)
    predictions[claimed] = onehot
    return predictions


def confirm(oracle: Oracle, result: AttackResult, *, slack: float = 0.0) -> None:
    """Spend one query checking ``result``'s claimed labels; raise :class:`AttackFailed` on a mismatch.

    ``slack`` widens the tolerance by a noise bound the attack was told about. Rows outside
    ``result.details["scored_rows"]`` (or ``["public_mask"]``: a boolean mask, for split-aware attacks) are left
    out of the expected score, as the server leaves them out of the released one.
    """
    if oracle.metric not in LOG_LOSSES:
        result.details["confirmed"] = f"not checked (metric {oracle.metric})"
        return
    labels = np.asarray(result.labels, dtype=np.int64)
    predictions = confirmation_predictions(labels, oracle.n_classes, oracle.eps)
    released = oracle.submit(predictions)
    if released is None:
        raise AttackFailed("the confirmation query released no score; the claimed labels cannot be vouched for")
    details = result.details
    scored = np.asarray(details.get("scored_rows", details.get("public_mask", np.ones(len(labels), bool))), bool)
    # Unclaimed rows sit at the neutral prediction, whose loss is the same for every label.
    assumed = np.where(labels >= 0, labels, 0)
    expected = get_metric(oracle.metric).score(predictions[scored], assumed[scored], oracle.eps)
    resolution = 0.5 * 10.0 ** (-oracle.decimals) if oracle.decimals is not None else 0.0
    tolerance = resolution + slack + 1e-9 * max(1.0, abs(expected))
    gap = abs(float(released) - expected)
    if gap > tolerance:
        raise AttackFailed(
            f"confirmation failed: the claimed labels imply a score of {expected:.6g}, the leaderboard released "
            f"{float(released):.6g} (tolerance {tolerance:.2g}); the server does not behave as the attack "
            "assumed (noise, a Ladder, subsetting or a wrong precision), so no label is claimed"
        )
    result.details["confirmed"] = "passed"


def slack_from(params: dict[str, Any]) -> float:
    """The noise bound an attack was told about, if any (``noise_bound`` or ``tau``)."""
    for key in ("noise_bound", "tau"):
        value = params.get(key)
        if isinstance(value, int | float):
            return float(value)
    return 0.0
