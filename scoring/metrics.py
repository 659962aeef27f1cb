"""Metrics of the scoring core, one registry mapping a name to a :class:`Metric`.

Names follow DESIGN.md. Log losses use the natural log, clip predictions to ``[eps, 1 - eps]`` and (for K
classes) renormalise rows, as Kaggle does. Every metric is the mean of per-row values where the metric
decomposes over rows (all but AUC), which is what the row-level defenses (subsetting, the parameter-free
Ladder) need. A non-finite result raises :class:`NonFiniteScoreError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np

from scoring import bignum
from scoring.arithmetic import Arithmetic
from scoring.errors import ConfigurationError, NonFiniteScoreError

RowFn = Callable[[np.ndarray, np.ndarray, float], np.ndarray]
ScoreFn = Callable[[np.ndarray, np.ndarray, float], float]


@dataclass(frozen=True)
class Metric:
    """A scoring rule. ``row_values`` gives per-row values whose mean is the score (``None`` for AUC)."""

    name: str
    higher_is_better: bool
    tasks: frozenset[str]
    score_fn: ScoreFn
    row_values: RowFn | None = None
    supports_mpfr: bool = False
    # The values the metric can take: (lowest, highest) for binary and for K-class competitions. A defense
    # that perturbs a score (noise) keeps its release inside this range (see ``defenses/noise.py``).
    binary_range: tuple[float, float] = (-math.inf, math.inf)
    multiclass_range: tuple[float, float] = (-math.inf, math.inf)
    # The form of the predictions the metric depends on (``None``: the values themselves): two uploads with the
    # same form score the same on any rows and any labels, so they may share a noise draw
    # (``same_file_same_score``, :func:`scoring.pipeline.content_digest`).
    canonical: Callable[[np.ndarray, float], np.ndarray] | None = None

    def canonical_form(self, predictions: np.ndarray, eps: float) -> np.ndarray:
        """What of ``predictions`` this metric reads: clipped (and renormalised) probabilities for log loss,
        the order for AUC, the predicted classes for accuracy, the values for Brier (-0.0 read as 0.0).

        >>> get_metric("auc").canonical_form(np.array([0.1, 0.7, 0.4]), 1e-15).tolist()
        [1.0, 3.0, 2.0]
        >>> get_metric("accuracy").canonical_form(np.array([0.1, 0.7, 0.5]), 1e-15).tolist()
        [0, 1, 1]
        """
        values = np.ascontiguousarray(predictions, dtype=np.float64)
        form = values if self.canonical is None else self.canonical(values, eps)
        return np.ascontiguousarray(form + 0 if form.dtype.kind == "f" else form)

    def value_range(self, n_classes: int) -> tuple[float, float]:
        """The lowest and highest value the metric takes on a competition with ``n_classes`` classes.

        >>> get_metric("brier").value_range(2), get_metric("brier").value_range(3)
        ((0.0, 1.0), (0.0, 2.0))
        >>> get_metric("binary_logloss").value_range(2)
        (0.0, inf)
        """
        return self.binary_range if n_classes == 2 else self.multiclass_range

    def score(self, predictions: np.ndarray, labels: np.ndarray, eps: float) -> float:
        """The float64 score; raises :class:`NonFiniteScoreError` on NaN or infinity."""
        if len(labels) == 0:
            raise NonFiniteScoreError(f"{self.name}: there are no rows to score")
        # log(0) and the like are caught just below as a failed score; numpy need not warn into worker logs.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = float(self.score_fn(predictions, labels, eps))
        if not np.isfinite(value):
            raise NonFiniteScoreError(f"{self.name} is not finite")
        return value

    @property
    def lower_is_better(self) -> bool:
        return not self.higher_is_better


def _clip(p: np.ndarray, eps: float) -> np.ndarray:
    return np.clip(p, eps, 1.0 - eps)


def binary_logloss_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    p = _clip(predictions, eps)
    return -np.where(labels == 1, np.log(p), np.log1p(-p))


def _probability_matrix(predictions: np.ndarray, eps: float) -> np.ndarray:
    if predictions.ndim == 1:
        predictions = np.column_stack([1.0 - predictions, predictions])
    clipped = _clip(predictions, eps)
    return clipped / clipped.sum(axis=1, keepdims=True)


def multiclass_logloss_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    probs = _probability_matrix(predictions, eps)
    return -np.log(probs[np.arange(len(labels)), labels])


def brier_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """Squared Euclidean distance between the probability vector and the one-hot label (binary: (p - y)²)."""
    if predictions.ndim == 1:
        return (predictions - labels) ** 2
    onehot = np.zeros_like(predictions)
    onehot[np.arange(len(labels)), labels] = 1.0
    return ((predictions - onehot) ** 2).sum(axis=1)


def accuracy_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """1 where the predicted class (p ≥ 0.5 for binary, the first arg-max otherwise) is the label."""
    return (_predicted_class(predictions, eps) == labels).astype(np.float64)


def roc_auc(predictions: np.ndarray, labels: np.ndarray, eps: float) -> float:
    """Binary ROC AUC by the rank-sum (Mann–Whitney) formula, ties counted one half."""
    from scipy.stats import rankdata

    scores = predictions if predictions.ndim == 1 else predictions[:, 1]
    positives = labels == 1
    n_pos = int(positives.sum())
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        raise NonFiniteScoreError("AUC is undefined when the scored rows hold a single class")
    ranks = rankdata(scores)
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _predicted_class(predictions: np.ndarray, eps: float) -> np.ndarray:
    return (predictions >= 0.5).astype(np.int64) if predictions.ndim == 1 else predictions.argmax(axis=1)


def _order(predictions: np.ndarray, eps: float) -> np.ndarray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(predictions if predictions.ndim == 1 else predictions[:, 1], method="dense"), float)


def _clipped(predictions: np.ndarray, eps: float) -> np.ndarray:
    return _clip(predictions, eps)


def _mean_of(rows: RowFn) -> ScoreFn:
    def score(predictions: np.ndarray, labels: np.ndarray, eps: float) -> float:
        return float(np.mean(rows(predictions, labels, eps)))

    return score


_NON_NEGATIVE = (0.0, math.inf)
_UNIT = (0.0, 1.0)

METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "binary_logloss", False, frozenset({"binary"}), _mean_of(binary_logloss_rows),
            binary_logloss_rows, supports_mpfr=True, binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE,
            canonical=_clipped,
        ),
        Metric(
            "multiclass_logloss", False, frozenset({"binary", "multiclass"}), _mean_of(multiclass_logloss_rows),
            multiclass_logloss_rows, supports_mpfr=True, binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE,
            canonical=_probability_matrix,
        ),
        Metric(
            "auc", True, frozenset({"binary"}), roc_auc, None, binary_range=_UNIT, multiclass_range=_UNIT,
            canonical=_order,
        ),
        Metric(
            "accuracy", True, frozenset({"binary", "multiclass"}), _mean_of(accuracy_rows), accuracy_rows,
            binary_range=_UNIT, multiclass_range=_UNIT, canonical=_predicted_class,
        ),
        # Binary: (p - y)^2 <= 1; K classes: the squared distance between two points of the simplex <= 2.
        Metric(
            "brier", False, frozenset({"binary", "multiclass"}), _mean_of(brier_rows), brier_rows,
            binary_range=_UNIT, multiclass_range=(0.0, 2.0),
        ),
    )
}


def get_metric(name: str) -> Metric:
    try:
        return METRICS[name]
    except KeyError:
        raise ConfigurationError(f"unknown metric {name!r}; choose one of {', '.join(sorted(METRICS))}") from None


def task_of(n_classes: int) -> str:
    return "binary" if n_classes == 2 else "multiclass"


def check_metric_for(metric: Metric, n_classes: int, arithmetic: Arithmetic) -> None:
    """Reject a metric that cannot score this task or run in this arithmetic."""
    task = task_of(n_classes)
    if task not in metric.tasks:
        raise ConfigurationError(
            f"metric {metric.name!r} does not support {task} competitions: the labels have {n_classes} classes "
            f"but {metric.name} is {'/'.join(sorted(metric.tasks))}-only; use {_alternatives(metric, task)}"
        )
    if not arithmetic.is_float64 and not metric.supports_mpfr:
        raise ConfigurationError(f"metric {metric.name!r} is only available in float64 arithmetic")


def _alternatives(metric: Metric, task: str) -> str:
    """The metrics that can score ``task``, the closest relative of ``metric`` first (a log loss for a log loss).

    >>> _alternatives(METRICS["binary_logloss"], "multiclass")
    'multiclass_logloss (or accuracy, brier)'
    """
    fitting = sorted(name for name, other in METRICS.items() if task in other.tasks)
    family = metric.name.rsplit("_", 1)[-1]
    fitting.sort(key=lambda name: not name.endswith(family))
    return fitting[0] + (f" (or {', '.join(fitting[1:])})" if len(fitting) > 1 else "")


def check_clipping(metric: Metric, n_classes: int, eps: float, arithmetic: Arithmetic) -> None:
    """Reject a clipping ``eps`` the arithmetic cannot honour: when ``1 - eps`` rounds to 1, a confident wrong
    prediction has an infinite loss, so whether a submission *fails* would depend on the hidden labels before
    any defense runs — a free label oracle. Checked by scoring the worst rows a participant can send."""
    if not metric.supports_mpfr:  # the metrics without clipping (AUC, accuracy, Brier) are always finite
        return
    k = max(n_classes, 2)
    labels = np.array([1, 0])
    try:
        if arithmetic.is_float64:
            worst = np.array([0.0, 1.0]) if k == 2 else np.eye(k)[[0, 1]]
            metric.score(worst, labels, eps)
        else:
            assert arithmetic.bits is not None
            texts = (("0",), ("1",)) if k == 2 else (("1", *["0"] * (k - 1)), ("0", "1", *["0"] * (k - 2)))
            value = logloss_mpfr(texts, labels, eps, arithmetic.bits, binary=k == 2)
            if not math.isfinite(float(value)):
                raise NonFiniteScoreError("infinite")
    except NonFiniteScoreError:
        raise ConfigurationError(
            f"eps = {eps!r} is too small for {arithmetic}: 1 - eps rounds to 1 there, so a confident wrong "
            "prediction would score an infinite loss and fail, telling its sender the label; "
            f"use eps of at least {2.0 ** -(arithmetic.bits or 53) * 4:.3g}"
        ) from None


def logloss_mpfr(
    texts: tuple[tuple[str, ...], ...], labels: np.ndarray, eps: float, bits: int, *, binary: bool
) -> Decimal:
    """Log loss computed entirely in ``bits``-bit MPFR arithmetic from the submitted decimal strings.

    Each prediction is read at φ bits, clipped, (multiclass) renormalised, its logarithm taken and summed
    at φ bits, then divided by N — the φ-bit server model of paper 000, Section 2.
    """
    if len(labels) == 0:
        raise NonFiniteScoreError("log loss: there are no rows to score")
    with bignum.local_precision(bits):
        eps_m = bignum.mpfr(repr(eps))
        one = bignum.mpfr(1)
        high = one - eps_m
        total = bignum.mpfr(0)
        for row, label in zip(texts, labels, strict=True):
            if binary and len(row) == 1:
                p = min(max(bignum.mpfr(row[0]), eps_m), high)
                total += bignum.gmpy2.log(p if label == 1 else one - p)
            else:
                probs = [bignum.mpfr(t) for t in row]
                if len(probs) == 1:  # binary predictions under the multiclass loss
                    probs = [one - probs[0], probs[0]]
                clipped = [min(max(q, eps_m), high) for q in probs]
                norm = bignum.gmpy2.fsum(clipped)
                total += bignum.gmpy2.log(clipped[int(label)] / norm)
        result = -total / len(labels)
        if not bignum.gmpy2.is_finite(result):
            raise NonFiniteScoreError("log loss is not finite")
        return Decimal(bignum.mpfr_to_decimal_text(result))


def mpfr_canonical_form(texts: tuple[tuple[str, ...], ...], eps: float, bits: int) -> bytes:
    """What :func:`logloss_mpfr` reads of the submitted decimal strings: each value at φ bits, clipped to
    ``[eps, 1 - eps]`` — so ``0.5``, ``0.50`` and ``5e-1``, or two strings that differ beyond φ bits, agree."""
    out = []
    with bignum.local_precision(bits):
        eps_m = bignum.mpfr(repr(eps))
        high = bignum.mpfr(1) - eps_m
        for row in texts:
            cells = []
            for text in row:
                mantissa, exponent, _ = min(max(bignum.mpfr(text), eps_m), high).digits(16)
                cells.append(f"{mantissa}p{exponent}")
            out.append(",".join(cells))
    return "\n".join(out).encode()
