"""Output statistics of a submitted model on the hidden rows (model competitions; paper 001, Section 5): does
its output behave like a function of the features, as a trained classifier's does, or like a stored vector of
probe values keyed by row?

Pure numpy on what the host already has after a model run: the hidden features and the model's outputs, row for
row. Signals:

* ``unpredictable`` — the output is not predictable from the features: the Pearson correlation between each
  row's output and the mean output of its ``neighbours`` nearest rows (standardised features, the row itself
  left out) is below ``min_correlation``. A classifier gives close rows close outputs (that is what it learned
  from); a MutNet head keyed by a hash or a rank of the row gives neighbours unrelated probe values, and a
  probe that is constant except on a few rows has no relation to the features at all.
* ``near_constant`` — at least ``constant_share`` of the rows within ``tolerance`` of the median output, the
  others elsewhere: the batched probes' constant rows (the probe detector's ``spike``/``near_spike``, but on a
  model's float32 output).

``benchmarks/mutnet_detection.py`` measures both on honest scikit-learn models and MutNet heads.
"""

from __future__ import annotations

import numpy as np

#: Honest scikit-learn models on breast cancer and digits (benchmarks/mutnet_detection.py, 40 models, 2 splits)
#: have a neighbour correlation of 0.81 at the lowest (an unpruned tree on digits); MutNet heads carrying the
#: attacks' probes mostly below 0.3, except an attack's last query (its confirmation: the labels themselves, 0.9).
MIN_CORRELATION = 0.35
NEIGHBOURS = 5
#: At most this many rows are compared (a seeded sample): the distance matrix is quadratic.
SAMPLE_ROWS = 2000


def neighbour_correlation(outputs: np.ndarray, features: np.ndarray, *, neighbours: int = NEIGHBOURS,
                          seed: int = 0) -> float | None:
    """Correlation between the outputs and their leave-one-out ``neighbours``-nearest-rows mean (per class column,
    centred, pooled); ``None`` when the outputs do not vary (nothing to correlate)."""
    matrix = np.asarray(outputs, dtype=np.float64)
    matrix = matrix[:, None] if matrix.ndim == 1 else matrix
    x = np.asarray(features, dtype=np.float64)
    if len(x) > SAMPLE_ROWS:
        keep = np.sort(np.random.default_rng(seed).choice(len(x), SAMPLE_ROWS, replace=False))
        x, matrix = x[keep], matrix[keep]
    if len(x) <= neighbours or not np.isfinite(matrix).all():
        return None
    spread = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    squared = (x * x).sum(axis=1)
    distances = squared[:, None] + squared[None, :] - 2.0 * (x @ x.T)
    np.fill_diagonal(distances, np.inf)
    nearest = np.argpartition(distances, neighbours, axis=1)[:, :neighbours]
    predicted = matrix[nearest].mean(axis=1)
    centred = matrix - matrix.mean(axis=0)
    centred_predicted = predicted - predicted.mean(axis=0)
    denominator = float(np.sqrt((centred**2).sum() * (centred_predicted**2).sum()))
    if denominator <= 1e-18:
        return None
    return float((centred * centred_predicted).sum() / denominator)


def output_signals(
    outputs: np.ndarray, features: np.ndarray, *, min_correlation: float = MIN_CORRELATION,
    neighbours: int = NEIGHBOURS, constant_share: float = 0.9, tolerance: float = 1e-3, seed: int = 0,
) -> list[str]:
    """The signals above for a model's ``outputs`` (``[N]`` or ``[N, K]``) on the hidden ``features`` ``[N, d]``.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((200, 3))
    >>> output_signals(1 / (1 + np.exp(-x[:, 0])), x)
    []
    >>> output_signals(rng.uniform(0, 1, 200), x)  # doctest: +ELLIPSIS
    ['unpredictable: ...']
    """
    matrix = np.asarray(outputs, dtype=np.float64)
    matrix = matrix[:, None] if matrix.ndim == 1 else matrix
    signals: list[str] = []
    correlation = neighbour_correlation(matrix, features, neighbours=neighbours, seed=seed)
    if correlation is not None and correlation < min_correlation:
        signals.append(f"unpredictable: outputs correlate {correlation:.2f} with the mean of the {neighbours} "
                       f"nearest rows (below {min_correlation:g})")
    centre = np.median(matrix, axis=0)
    inside = int((np.abs(matrix - centre).max(axis=1) <= tolerance).sum())
    if constant_share * len(matrix) <= inside < len(matrix):
        signals.append(f"near_constant: {inside}/{len(matrix)} rows within {tolerance:g} of the median output")
    return signals
