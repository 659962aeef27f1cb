"""Metrics of the scoring core, one registry mapping a name to a :class:`Metric`.

Names follow DESIGN.md. Log losses use the natural log, clip predictions to ``[eps, 1 - eps]`` and (for K
classes) renormalise rows, as Kaggle does. Every metric is the mean of per-row values where the metric
decomposes over rows (all but AUC), which is what the row-level defenses (subsetting, the parameter-free
Ladder) need. A non-finite result raises :class:`NonFiniteScoreError`.

Paper 001 (Aggarwal et al., *Reconstructing Test Labels from Noisy Loss Functions*, AISTATS 2022;
``shared/papers/001_…``) defines the Bregman-divergence losses between the one-hot label and the prediction
(App. C: ``kl`` eq. 7, ``itakura_saito`` eq. 8, ``brier`` = squared Euclidean eq. 10, ``norm_like`` eq. 11)
and the cross-entropies on logits (§4, App. D: ``softmax_ce`` eq. 5, ``sigmoid_ce`` eq. 14). The metrics on
logits (:attr:`Metric.logits`) take any finite real per cell; every other metric takes probabilities.

A metric with a parameter is named ``name:value``: ``norm_like:2.5`` is the norm-like loss with α = 2.5
(α ≥ 2, paper 001 App. C.3.1); plain ``norm_like`` is α = 3 (α = 2 is twice the binary Brier score).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from scoring import bignum
from scoring.arithmetic import Arithmetic
from scoring.errors import ConfigurationError, NonFiniteScoreError

_SMALLEST_NORMAL = float(np.finfo(np.float64).tiny)
# (the row's values read at φ bits, its label, eps at φ bits, binary?) -> the row's value at φ bits
MpfrRowFn = Callable[[list[Any], int, Any, bool], Any]
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
    # Predictions are logits (any finite real; rows need not sum to 1) rather than probabilities in [0, 1].
    logits: bool = False
    # The metric clips its input with the competition's ``eps`` (the log losses, Itakura–Saito, the
    # cross-entropies on logits): :func:`check_clipping` refuses an ``eps`` at which a row could still be
    # infinite (or too large to sum), since whether a submission *fails* would then depend on the labels.
    clips: bool = False
    # The most one row's value can move when that row's label changes, at clipping ``eps`` on a competition of
    # ``n_classes`` classes (``None``: not derived): the label sensitivity times ``n`` (``defenses/sensitivity``).
    label_spread: Callable[[float, int], float] | None = None
    # The metric's parameter, where it has one (``norm_like``'s α).
    alpha: float | None = None
    # One row's value at φ bits from the submitted values read at φ bits (:func:`score_mpfr`); ``None`` with
    # ``supports_mpfr`` means the log loss's own :func:`logloss_mpfr`.
    mpfr_row: MpfrRowFn | None = None

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

    def as_probabilities(self, predictions: np.ndarray) -> np.ndarray:
        """The probabilities the predictions stand for: the values themselves, or for a metric on logits their
        sigmoid (one column: P(class 1)) or softmax (one logit per class).

        >>> get_metric("sigmoid_ce").as_probabilities(np.array([0.0, 40.0])).tolist()
        [0.5, 1.0]
        """
        if not self.logits:
            return predictions
        from scipy import special

        return special.expit(predictions) if predictions.ndim == 1 else special.softmax(predictions, axis=1)

    def from_probabilities(self, probabilities: np.ndarray) -> np.ndarray:
        """What to submit for ``probabilities`` (binary: P(class 1) per row): the probabilities themselves, or
        for a metric on logits the finite logits whose sigmoid/softmax they are — the log-odds (binary) or the
        log-probabilities (K classes), probabilities pushed off 0 and 1 by the smallest amount that keeps every
        logit finite (|log-odds| ≤ 36.7, far past any competition's clipping).

        >>> np.round(get_metric("sigmoid_ce").from_probabilities(np.array([0.5, 0.75])), 12).tolist()  # ln 3
        [0.0, 1.098612288668]
        """
        if not self.logits:
            return probabilities
        p = np.asarray(probabilities, dtype=np.float64)
        if p.ndim == 1:
            p = np.clip(p, _SMALLEST_NORMAL, np.nextafter(1.0, 0.0))
            return np.log(p) - np.log1p(-p)
        return np.log(np.clip(p, _SMALLEST_NORMAL, 1.0))

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
    """Squared Euclidean distance between the probability vector and the one-hot label (binary: (p - y)²):
    paper 001 App. C.3 eq. (10), SELoss, which like scikit-learn's ``brier_score_loss`` drops the factor 2 of
    the distance between ``(1 − θ, θ)`` and ``(1 − y, y)`` on one column. Finite on all of [0, 1]: no clipping."""
    if predictions.ndim == 1:
        return (predictions - labels) ** 2
    onehot = np.zeros_like(predictions)
    onehot[np.arange(len(labels)), labels] = 1.0
    return ((predictions - onehot) ** 2).sum(axis=1)


def kl_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """The (generalised) Kullback–Leibler divergence from the one-hot label to the clipped prediction, paper
    001 App. C.1 eq. (7): ``Σ_k p_k ln(p_k/q_k) − Σ_k (p_k − q_k)`` with ``0 ln 0 = 0``, which is ``−ln q_y``
    since the clipped, renormalised ``q`` sums to 1 — the binary log loss on one column, the multiclass log
    loss on K (the same clipping and renormalisation)."""
    if predictions.ndim == 1:
        return binary_logloss_rows(predictions, labels, eps)
    return multiclass_logloss_rows(predictions, labels, eps)


def _kl_form(predictions: np.ndarray, eps: float) -> np.ndarray:
    return _clip(predictions, eps) if predictions.ndim == 1 else _probability_matrix(predictions, eps)


def _label_probability(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """``q_y``: the clipped probability each row gives its label (binary: ``θ`` for 1, ``1 − θ`` for 0)."""
    q = _clip(predictions, eps)
    if q.ndim == 1:
        return np.where(labels == 1, q, 1.0 - q)
    return q[np.arange(len(labels)), labels]


def itakura_saito_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """The Itakura–Saito divergence loss of paper 001 App. C.2 eq. (8): ``1/q_y + ln q_y − 1`` per row.

    ``D_IS(p, q) = Σ_k (p_k/q_k − ln(p_k/q_k) − 1)`` between the one-hot label ``p`` and the prediction ``q``;
    eq. (8) keeps the label's term (the term of a class with ``p_k = 0`` is infinite), which on K classes is
    the same ``g(q_y)`` with ``g(x) = 1/x + ln x − 1``. Predictions are clipped to ``[eps, 1 − eps]`` (the loss
    is finite on the open interval (0, 1]); K-class rows are not renormalised after the clip (the parser
    already made them sum to 1, and ``g`` reads one entry), so a row moves by at most about ``g(eps) ≈ 1/eps``
    when its label changes (:func:`_itakura_saito_spread`): 1e15 at eps = 1e-15, which makes calibrated noise on
    it enormous and bounds ``eps`` from below (:func:`check_clipping`).
    """
    q = _label_probability(predictions, labels, eps)
    return 1.0 / q + np.log(q) - 1.0


def norm_like_rows(alpha: float) -> RowFn:
    """The norm-like divergence loss of paper 001 App. C.3.1 eq. (11) for ``α ≥ 2``:
    ``D_NL(p, q) = Σ_k p_k^α + (α − 1) q_k^α − α p_k q_k^(α−1)`` between the one-hot label ``p`` and the
    probabilities ``q``, i.e. ``1 + (α − 1) Σ_k q_k^α − α q_y^(α−1)`` per row (binary: ``q = (1 − θ, θ)``,
    exactly eq. (11)). Finite on all of [0, 1], so nothing is clipped; it lies in ``[0, α]``, and α = 2 gives
    the squared Euclidean distance ``‖q − p‖²`` (twice the binary Brier score, the multiclass one)."""

    def rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
        q = np.column_stack([1.0 - predictions, predictions]) if predictions.ndim == 1 else predictions
        q_label = q[np.arange(len(labels)), labels]
        return 1.0 + (alpha - 1.0) * (q**alpha).sum(axis=1) - alpha * q_label ** (alpha - 1.0)

    return rows


def _log_probabilities_of_logits(logits: np.ndarray, eps: float) -> np.ndarray:
    """``log softmax(z)`` per row (binary: one logit ``z`` per row is the rows ``(0, z)``, so class 1 gets
    ``log sigmoid(z)``), clipped to ``[ln eps, ln(1 − eps)]`` — the competition's clipping of the
    probabilities, done in log space so that no finite logit overflows (``z = −1e308`` gives ``ln eps``)."""
    if logits.ndim == 1:  # softmax((0, z)) is (1 − sigmoid(z), sigmoid(z)): the same numbers, computed once
        return _sigmoid_log_probabilities(logits, eps)
    z = logits
    top = z.max(axis=1, keepdims=True)
    # z − top ≤ 0, so exp never overflows; a spread beyond the float range is −inf, whose exp is 0.
    with np.errstate(over="ignore"):
        shifted = z - top
        log_sum = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return np.clip(shifted - log_sum, math.log(eps), math.log1p(-eps))


def softmax_ce_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """Softmax cross-entropy on logits, paper 001 §4 eq. (5): ``−ln softmax(z)_y`` per row, with the
    probability clipped to ``[eps, 1 − eps]`` (:func:`_log_probabilities_of_logits`). Binary competitions take
    one logit per row, the log-odds of class 1 (so this is :func:`sigmoid_ce_rows` there)."""
    return -_log_probabilities_of_logits(predictions, eps)[np.arange(len(labels)), labels]


def _sigmoid_log_probabilities(logits: np.ndarray, eps: float) -> np.ndarray:
    """``(ln(1 − sigmoid(z)), ln sigmoid(z))`` per row, clipped to ``[ln eps, ln(1 − eps)]``; computed as
    ``−logaddexp(0, ∓z)``, which is finite and accurate for every finite ``z``."""
    pair = np.column_stack([-np.logaddexp(0.0, logits), -np.logaddexp(0.0, -logits)])
    return np.clip(pair, math.log(eps), math.log1p(-eps))


def sigmoid_ce_rows(predictions: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """Sigmoid cross-entropy on one logit per row, paper 001 App. D eq. (14):
    ``−y ln sigmoid(z) − (1 − y) ln(1 − sigmoid(z))``, probabilities clipped to ``[eps, 1 − eps]``."""
    return -_sigmoid_log_probabilities(predictions, eps)[np.arange(len(labels)), labels]


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


def _mpfr_probabilities(values: list[Any], binary: bool) -> list[Any]:
    """A row of probabilities at φ bits: ``(1 − θ, θ)`` for one binary value; K values renormalised by their
    φ-bit sum (the float64 path renormalises in the parser, the φ-bit one here, as :func:`logloss_mpfr` does)."""
    if len(values) == 1:
        return [1 - values[0], values[0]]
    total = bignum.gmpy2.fsum(values)
    return [v / total for v in values]


def _mpfr_clip(value: Any, eps: Any) -> Any:
    return min(max(value, eps), 1 - eps)


def _itakura_saito_mpfr(values: list[Any], label: int, eps: Any, binary: bool) -> Any:
    """:func:`itakura_saito_rows` at φ bits: ``1/x + ln x − 1`` of the label's clipped probability."""
    if len(values) == 1:
        theta = _mpfr_clip(values[0], eps)
        x = theta if label == 1 else 1 - theta
    else:
        x = _mpfr_clip(_mpfr_probabilities(values, binary)[label], eps)
    return 1 / x + bignum.gmpy2.log(x) - 1


def _brier_mpfr(values: list[Any], label: int, eps: Any, binary: bool) -> Any:
    """:func:`brier_rows` at φ bits: ``(θ − y)²`` for one binary value, else ``Σ_k (q_k − [k = y])²``."""
    if len(values) == 1:
        return (values[0] - label) ** 2
    q = _mpfr_probabilities(values, binary)
    return bignum.gmpy2.fsum([(v - (1 if k == label else 0)) ** 2 for k, v in enumerate(q)])


def _norm_like_mpfr(alpha: float) -> MpfrRowFn:
    def row(values: list[Any], label: int, eps: Any, binary: bool) -> Any:
        """:func:`norm_like_rows` at φ bits: ``1 + (α − 1) Σ_k q_k^α − α q_y^(α−1)``."""
        a = bignum.mpfr(repr(alpha))
        q = _mpfr_probabilities(values, binary)
        return 1 + (a - 1) * bignum.gmpy2.fsum([v**a for v in q]) - a * q[label] ** (a - 1)

    return row


def _softmax_ce_mpfr(values: list[Any], label: int, eps: Any, binary: bool) -> Any:
    """:func:`softmax_ce_rows` (and :func:`sigmoid_ce_rows`: one logit ``z`` is the row ``(0, z)``) at φ bits:
    ``−clip(z_y − logsumexp(z), ln eps, ln(1 − eps))``."""
    z = [bignum.mpfr(0), values[0]] if len(values) == 1 else values
    top = max(z)
    log_sum = bignum.gmpy2.log(bignum.gmpy2.fsum([bignum.gmpy2.exp(v - top) for v in z]))
    log_p = (z[label] - top) - log_sum
    return -min(max(log_p, bignum.gmpy2.log(eps)), bignum.gmpy2.log1p(-eps))


def score_mpfr(
    metric: Metric, texts: tuple[tuple[str, ...], ...], labels: np.ndarray, eps: float, bits: int, *, binary: bool
) -> Decimal:
    """``metric`` computed entirely in ``bits``-bit MPFR arithmetic from the submitted decimal strings: every
    value read at φ bits, every row's value, sum and the division by N rounded to φ bits (paper 000 §2's
    φ-bit server; paper 001 App. B.1's finite precision). The log losses are :func:`logloss_mpfr`."""
    if not metric.supports_mpfr:
        raise ConfigurationError(f"metric {metric.name!r} is only available in float64 arithmetic")
    if metric.mpfr_row is None:
        return logloss_mpfr(texts, labels, eps, bits, binary=binary)
    if len(labels) == 0:
        raise NonFiniteScoreError(f"{metric.name}: there are no rows to score")
    with bignum.local_precision(bits):
        eps_m = bignum.mpfr(repr(eps))
        total = bignum.mpfr(0)
        for row, label in zip(texts, labels, strict=True):
            total += metric.mpfr_row([bignum.mpfr(t) for t in row], int(label), eps_m, binary)
        result = total / len(labels)
        if not bignum.gmpy2.is_finite(result):
            raise NonFiniteScoreError(f"{metric.name} is not finite")
        return Decimal(bignum.mpfr_to_decimal_text(result))


_NON_NEGATIVE = (0.0, math.inf)
_UNIT = (0.0, 1.0)
NORM_LIKE_DEFAULT_ALPHA = 3.0


def _smallest_read(eps: float) -> float:
    """The smallest probability a clipped float64 row can hand to a loss: ``eps``, or ``1 − fl(1 − eps)`` where
    that is smaller and not 0 (when ``1 − eps`` rounds to 1 the binary loss is refused, :func:`check_clipping`,
    or computed at φ bits, where ``1 − eps`` is exact)."""
    rounded = 1.0 - (1.0 - eps)
    return rounded if 0.0 < rounded < eps else eps


def _log_ratio_spread(eps: float, n_classes: int) -> float:
    """A row of ``−ln q_y`` with ``q`` clipped to ``[eps, 1 − eps]`` (renormalising keeps the ratio of two
    entries within ``(1 − eps)/eps``) moves by at most ``ln((1 − eps)/eps)`` when its label changes — with
    ``eps`` replaced by ``1 − fl(1 − eps)`` where that is smaller: the binary log loss reads ``1 − p`` of the
    clipped ``p ≤ fl(1 − eps)``, which at ``eps = 1e-15`` is 9.992e-16, not 1e-15 (0.0008 more per row)."""
    smallest = _smallest_read(eps) if n_classes == 2 else eps
    return math.log1p(-smallest) - math.log(smallest)


def _clipped_log_spread(eps: float, n_classes: int) -> float:
    """The cross-entropies on logits clip ``ln q_y`` itself to ``[ln eps, ln(1 − eps)]``."""
    return math.log1p(-eps) - math.log(eps)


def _itakura_saito_spread(eps: float, n_classes: int) -> float:
    """``g(x) = 1/x + ln x − 1`` decreases on (0, 1] to ``g(1) = 0``, so ``|g(q_a) − g(q_b)| ≤ g(e)`` for the
    smallest probability read, ``e = min(eps, 1 − fl(1 − eps))`` (binary label 0 reads ``1 − p``)."""
    smallest = _smallest_read(eps) if n_classes == 2 else eps
    return 1.0 / smallest + math.log(smallest) - 1.0


def _brier_spread(eps: float, n_classes: int) -> float:
    """Binary ``(p − y)²`` moves by ``|1 − 2p| ≤ 1``; K classes by ``2|p_a − p_b| ≤ 2``."""
    return 1.0 if n_classes == 2 else 2.0


def _accuracy_spread(eps: float, n_classes: int) -> float:
    return 1.0


def _norm_like_spread(alpha: float) -> Callable[[float, int], float]:
    """A label change moves ``α |q_a^(α−1) − q_b^(α−1)| ≤ α`` (eq. 11: only the label's term depends on it)."""
    return lambda eps, n_classes: alpha

def norm_like_metric(name: str, alpha: float) -> Metric:
    """The norm-like loss with parameter ``alpha`` (≥ 2, finite), registered as ``name``."""
    if not (math.isfinite(alpha) and alpha >= 2.0):
        raise ConfigurationError(f"norm_like needs a finite α ≥ 2 (paper 001 App. C.3.1), got {alpha!r}")
    rows = norm_like_rows(alpha)
    return Metric(
        name, False, frozenset({"binary", "multiclass"}), _mean_of(rows), rows, binary_range=(0.0, alpha),
        multiclass_range=(0.0, alpha), label_spread=_norm_like_spread(alpha), alpha=alpha, supports_mpfr=True,
        mpfr_row=_norm_like_mpfr(alpha),
    )


METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "binary_logloss", False, frozenset({"binary"}), _mean_of(binary_logloss_rows),
            binary_logloss_rows, supports_mpfr=True, binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE,
            canonical=_clipped, clips=True, label_spread=_log_ratio_spread,
        ),
        Metric(
            "multiclass_logloss", False, frozenset({"binary", "multiclass"}), _mean_of(multiclass_logloss_rows),
            multiclass_logloss_rows, supports_mpfr=True, binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE,
            canonical=_probability_matrix, clips=True, label_spread=_log_ratio_spread,
        ),
        Metric(
            "auc", True, frozenset({"binary"}), roc_auc, None, binary_range=_UNIT, multiclass_range=_UNIT,
            canonical=_order,
        ),
        Metric(
            "accuracy", True, frozenset({"binary", "multiclass"}), _mean_of(accuracy_rows), accuracy_rows,
            binary_range=_UNIT, multiclass_range=_UNIT, canonical=_predicted_class, label_spread=_accuracy_spread,
        ),
        # Binary: (p - y)^2 <= 1; K classes: the squared distance between two points of the simplex <= 2.
        Metric(
            "brier", False, frozenset({"binary", "multiclass"}), _mean_of(brier_rows), brier_rows,
            binary_range=_UNIT, multiclass_range=(0.0, 2.0), label_spread=_brier_spread, supports_mpfr=True,
            mpfr_row=_brier_mpfr,
        ),
        Metric(
            "kl", False, frozenset({"binary", "multiclass"}), _mean_of(kl_rows), kl_rows, supports_mpfr=True,
            binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE, canonical=_kl_form, clips=True,
            label_spread=_log_ratio_spread,
        ),
        Metric(
            "itakura_saito", False, frozenset({"binary", "multiclass"}), _mean_of(itakura_saito_rows),
            itakura_saito_rows, binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE, canonical=_clipped,
            clips=True, label_spread=_itakura_saito_spread, supports_mpfr=True, mpfr_row=_itakura_saito_mpfr,
        ),
        norm_like_metric("norm_like", NORM_LIKE_DEFAULT_ALPHA),
        Metric(
            "softmax_ce", False, frozenset({"binary", "multiclass"}), _mean_of(softmax_ce_rows), softmax_ce_rows,
            binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE, canonical=_log_probabilities_of_logits,
            logits=True, clips=True, label_spread=_clipped_log_spread, supports_mpfr=True,
            mpfr_row=_softmax_ce_mpfr,
        ),
        Metric(
            "sigmoid_ce", False, frozenset({"binary"}), _mean_of(sigmoid_ce_rows), sigmoid_ce_rows,
            binary_range=_NON_NEGATIVE, multiclass_range=_NON_NEGATIVE, canonical=_sigmoid_log_probabilities,
            logits=True, clips=True, label_spread=_clipped_log_spread, supports_mpfr=True,
            mpfr_row=_softmax_ce_mpfr,
        ),
    )
}


#: The metrics that take a parameter, named ``family:value`` (``norm_like:2.5``).
PARAMETRIC = ("norm_like",)
_PARAMETER = re.compile(r"^(?P<family>[a-z_]+):(?P<value>[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)$")


def get_metric(name: str) -> Metric:
    """The metric named ``name``: a registry name, or ``norm_like:α`` for the norm-like loss with that α.

    >>> get_metric("norm_like").alpha, get_metric("norm_like:2.5").alpha
    (3.0, 2.5)
    """
    metric = METRICS.get(name)
    if metric is not None:
        return metric
    return _parametric_metric(name)


@functools.lru_cache(maxsize=64)
def _parametric_metric(name: str) -> Metric:
    match = _PARAMETER.match(name) if isinstance(name, str) and len(name) <= 40 else None
    if match is None or match["family"] not in PARAMETRIC:
        raise ConfigurationError(
            f"unknown metric {name!r}; choose one of {', '.join(sorted(METRICS))} (or norm_like:α with α ≥ 2)"
        )
    return norm_like_metric(name, float(match["value"]))


def is_metric_name(name: object) -> bool:
    """Whether ``name`` names a metric (:func:`get_metric` would return one)."""
    if not isinstance(name, str):
        return False
    try:
        get_metric(name)
    except ConfigurationError:
        return False
    return True


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
    'multiclass_logloss (or accuracy, brier, itakura_saito, kl, norm_like, softmax_ce)'
    """
    fitting = sorted(name for name, other in METRICS.items() if task in other.tasks)
    family = metric.name.rsplit("_", 1)[-1]
    fitting.sort(key=lambda name: not name.endswith(family))
    return fitting[0] + (f" (or {', '.join(fitting[1:])})" if len(fitting) > 1 else "")


#: The largest value one row may take: a mean over up to 10^8 rows of such values still sums without overflow.
MAX_ROW_VALUE = 1e300


def check_clipping(metric: Metric, n_classes: int, eps: float, arithmetic: Arithmetic) -> None:
    """Reject a clipping ``eps`` the arithmetic cannot honour: when ``1 - eps`` rounds to 1, a confident wrong
    prediction has an infinite loss (and Itakura–Saito's ``1/eps`` overflows for a tiny ``eps``), so whether a
    submission *fails* would depend on the hidden labels before any defense runs — a free label oracle.
    Checked by scoring the worst rows a participant can send (vertices of the simplex; for logits, the
    largest finite logits of either sign): each row must be finite and at most :data:`MAX_ROW_VALUE`, so that
    no sum over the rows overflows either."""
    if not metric.clips:  # the metrics without clipping (AUC, accuracy, Brier, norm-like) are always finite
        return
    k = max(n_classes, 2)
    labels = np.array([1, 0])
    try:
        if arithmetic.is_float64:
            big = np.finfo(np.float64).max
            if metric.logits:
                worst = np.array([-big, big]) if k == 2 else np.array([[big, -big, *[-big] * (k - 2)]] * 2)
            else:
                worst = np.array([0.0, 1.0]) if k == 2 else np.eye(k)[[0, 1]]
            assert metric.row_values is not None
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                rows = metric.row_values(worst, labels, eps)
            if not np.all(np.isfinite(rows)) or float(np.max(rows)) > MAX_ROW_VALUE:
                raise NonFiniteScoreError("infinite")
            metric.score(worst, labels, eps)
        else:
            assert arithmetic.bits is not None
            if metric.logits:
                top = "1e308"
                texts = (("-" + top,), (top,)) if k == 2 else ((top, *["-" + top] * (k - 1)),) * 2
            else:
                texts = (("0",), ("1",)) if k == 2 else (("1", *["0"] * (k - 1)), ("0", "1", *["0"] * (k - 2)))
            for row, label in zip(texts, labels, strict=True):  # each worst row alone: none may exceed the cap
                value = score_mpfr(metric, (row,), np.array([label]), eps, arithmetic.bits, binary=k == 2)
                if not math.isfinite(float(value)) or float(value) > MAX_ROW_VALUE:
                    raise NonFiniteScoreError("infinite")
    except NonFiniteScoreError:
        floor = 2.0 ** -(arithmetic.bits or 53) * 4
        if arithmetic.bits is None:
            rounds = 1.0 - eps == 1.0
        else:
            with bignum.local_precision(arithmetic.bits):
                rounds = bool(1 - bignum.mpfr(repr(eps)) == 1)
        why = "1 - eps rounds to 1 there" if rounds else f"a row can score up to 1/eps, past {MAX_ROW_VALUE:g}"
        if metric.name == "itakura_saito":
            floor = max(floor, 1.0 / MAX_ROW_VALUE)
        raise ConfigurationError(
            f"eps = {eps!r} is too small for {arithmetic} with {metric.name}: {why}, so a confident wrong "
            "prediction would score an infinite loss and fail, telling its sender the label; "
            f"use eps of at least {floor:.3g}"
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


def mpfr_canonical_form(texts: tuple[tuple[str, ...], ...], eps: float, bits: int, *, clip: bool = True) -> bytes:
    """What :func:`score_mpfr` reads of the submitted decimal strings: each value at φ bits, clipped to
    ``[eps, 1 - eps]`` for a metric that clips probabilities (``clip``; never logits) — so ``0.5``, ``0.50``
    and ``5e-1``, or two strings that differ beyond φ bits, agree."""
    out = []
    with bignum.local_precision(bits):
        eps_m = bignum.mpfr(repr(eps))
        high = bignum.mpfr(1) - eps_m
        for row in texts:
            cells = []
            for text in row:
                value = bignum.mpfr(text)
                mantissa, exponent, _ = (min(max(value, eps_m), high) if clip else value).digits(16)
                cells.append(f"{mantissa}p{exponent}")
            out.append(",".join(cells))
    return "\n".join(out).encode()
