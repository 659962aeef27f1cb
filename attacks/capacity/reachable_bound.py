"""The K-ary counting bound restricted to the loss vectors a probability row can reach (issue 11).

The plain bound ``K^m <= m·M + 1`` (:func:`attacks.capacity.design.counting_bound`, ``M = A/res``, ``res =
N·10^-decimals``) lets every row put its ``K`` label losses anywhere in ``[0, A]``. A Brier or norm-like row is a
probability vector, so it cannot: its label ``y`` scores ``H(q) − a·q_y^β`` (``a = A``; Brier ``a = 2, β = 1``,
norm-like ``a = α, β = α − 1``; paper 001 App. C). What a query carries is measured here by the variance of a
row's loss under a uniform label — the quantity that sizes the entropy of a sum of rows:

* **box**: a vector of ``[0, A]^K`` has variance at most ``v_box = A²·⌊K/2⌋⌈K/2⌉/K²`` (half the classes at
  each end);
* **reachable**: ``z_c = q_c^β`` lies in the simplex ``{z >= 0, Σ z <= 1}`` (``q^β <= q`` on ``[0, 1]``), and
  a variance is convex in ``z``, so its maximum sits at a vertex — a one-hot row: ``v_reach = A²(K−1)/K²``.

So ``ρ = v_reach/v_box = (K−1)/(⌊K/2⌋⌈K/2⌉)``: 1 for K = 2 and 3, 3/4 at K = 4, 5/9 at K = 6, 9/25 at K = 10
(about ``4/K``). For log loss, ``kl`` and Itakura–Saito every offset vector of the box is reachable (the label
term is unbounded near 0), so ``ρ = 1``. The **reachable bound** is the counting bound with ``A`` replaced by
the variance-equivalent spread ``A·√ρ`` (:func:`reachable_bound`). It never exceeds the plain bound, equals it
where ``ρ = 1``, and is valid in the same sense:

* one query, ``m`` fresh rows, every labeling decoded (zero error): the ``K^m`` sums are distinct points at
  least ``res`` apart, whose variance under a uniform labeling is at least ``res²(K^{2m} − 1)/12`` and at most
  ``m·v_reach`` (independent rows), so ``K^{2m} − 1 <= 12·m·v_reach/res²``; for ``m >= 3`` that implies
  ``K^m <= m·A√ρ/res + 1`` (``12·⌊K/2⌋⌈K/2⌉/K² <= 3 <= m``). ``m = 1``: ``K`` distinct values ``res`` apart
  in one row need ``Σ_c q_c^β >= (res/A)·K(K−1)/2``, i.e. ``(K−1)·res <= 2A/K <= A√ρ``. ``m = 2`` is checked by
  search in the tests, not proved;
* averaged over queries, the release of a query on rows with uniform, independent labels has entropy at most
  ``½·log2(2πe((σ + ½)² + 1/12))``, ``σ² = Σ_rows v/res²`` (an integer variable of variance ``s²`` has entropy
  at most ``½·log2(2πe(s² + 1/12))``; the release rounds ``S/res`` by at most ½, which adds at most ½ to its
  standard deviation) — :func:`entropy_labels`. The simplex enters only through ``√v``: exactly the
  substitution ``A → A√ρ``.

Neither counting bound caps an *adaptive* attack: it carries ambiguous labelings to later queries (the binary
``capacity`` reaches up to 109 % of its bound), and over many queries every one of the ``N`` rows may carry
offsets. :func:`entropy_labels` with ``rows = N`` is the bound that holds there, for a uniform prior and
under the assumption that the rows a query spends have independent labels given what earlier releases said
(true of fresh rows; a row narrowed to a few classes may use a one-hot row, whose variance ``A²p(1−p)``
reaches the box's, so the simplex costs nothing on carried rows).
"""

from __future__ import annotations

import math

from attacks.capacity.design import counting_bound, max_weight_real, sum_resolution
from attacks.capacity.row_loss import LOG_LOSSES, RowLoss

TWO_PI_E = 2 * math.pi * math.e
#: The families whose rows are probability vectors with a bounded label term (``ρ < 1`` from K = 4 on).
SIMPLEX_FAMILIES = ("squared_euclidean", "norm_like")


def metric_spread(metric: str, classes: int, eps: float = 1e-15) -> float:
    """The plain bound's ``A``: the most one row's loss moves when its label changes."""
    if metric in LOG_LOSSES:
        return max_weight_real(eps)
    return RowLoss.for_metric(metric, classes, eps).spread


def box_variance(classes: int, spread: float) -> float:
    """The largest variance, over a uniform class, of a vector in ``[0, spread]^K``.

    >>> box_variance(2, 1.0), box_variance(3, 3.0)
    (0.25, 2.0)
    """
    k = int(classes)
    return spread**2 * (k // 2) * ((k + 1) // 2) / k**2


def reachable_variance(metric: str, classes: int, eps: float = 1e-15) -> float:
    """The largest variance, over a uniform label, of the losses of one row the metric accepts (see module)."""
    spread = metric_spread(metric, classes, eps)
    return box_variance(classes, spread) * variance_ratio(metric, classes, eps)


def variance_ratio(metric: str, classes: int, eps: float = 1e-15) -> float:
    """``ρ = v_reach/v_box``: ``(K−1)/(⌊K/2⌋⌈K/2⌉)`` for Brier and the norm-like loss, 1 otherwise.

    >>> [round(variance_ratio("brier", k), 4) for k in (2, 3, 4, 6, 10)]
    [1.0, 1.0, 0.75, 0.5556, 0.36]
    """
    k = int(classes)
    if metric in LOG_LOSSES or k == 2:
        return 1.0  # every offset of the box is reachable (two classes: any offset up to the spread)
    family = RowLoss.for_metric(metric, k, eps).family
    if family is None or family.name not in SIMPLEX_FAMILIES:
        return 1.0
    return (k - 1) / ((k // 2) * ((k + 1) // 2))


def reachable_spread(metric: str, classes: int, eps: float = 1e-15) -> float:
    """``A·√ρ``: the spread of a box whose rows carry what the metric's probability rows carry."""
    return metric_spread(metric, classes, eps) * math.sqrt(variance_ratio(metric, classes, eps))


def reachable_bound(
    n_rows: int, decimals: int | None, *, metric: str, classes: int, eps: float = 1e-15, noise_bound: float = 0.0
) -> int:
    """Largest ``m`` with ``K^m <= m·M_r + 1``, ``M_r = A√ρ/res``: the counting bound on the rows a probability
    vector reaches (see the module for why and where it holds).

    >>> [reachable_bound(2201, 5, metric=m, classes=6) for m in ("multiclass_logloss", "brier", "norm_like")]
    [5, 2, 3]
    """
    return counting_bound(n_rows, decimals, eps=eps, noise_bound=noise_bound, classes=classes,
                          spread=reachable_spread(metric, classes, eps))


def counting_root(n_rows: int, decimals: int | None, *, classes: int, spread: float, noise_bound: float = 0.0) -> float:
    """The real ``m >= 1`` where ``K^m = m·M + 1`` (the integer bound is its floor): a smooth scale for
    shares, free of the integer bound's steps.

    >>> round(counting_root(2201, 5, classes=6, spread=2.0), 2), counting_bound(2201, 5, classes=6, spread=2.0)
    (3.16, 3)
    """
    big_m = spread / sum_resolution(n_rows, decimals, noise_bound)

    def over(m: float) -> bool:
        return m * math.log(classes) > math.log(m * big_m + 1)

    if over(1.0):
        return 1.0
    lo, hi = 1.0, 2.0
    while not over(hi):
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if over(mid) else (mid, hi)
    return lo


def entropy_labels(
    n_rows: int, decimals: int | None, *, classes: int, variance: float, rows: int | None = None,
    noise_bound: float = 0.0,
) -> float:
    """Labels a query can reveal on average when ``rows`` rows (default all ``N``) with independent uniform
    labels carry losses of variance at most ``variance`` each: the release's entropy bound (see the module)
    over ``log2 K``.

    >>> round(entropy_labels(2201, 5, classes=6, variance=1.0, rows=3), 2)
    3.23
    """
    spent = n_rows if rows is None else rows
    sigma = math.sqrt(spent * variance) / sum_resolution(n_rows, decimals, noise_bound)
    bits = 0.5 * math.log2(TWO_PI_E * ((sigma + 0.5) ** 2 + 1.0 / 12.0))
    return bits / math.log2(classes)
