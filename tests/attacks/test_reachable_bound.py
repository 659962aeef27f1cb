"""The counting bound on reachable rows (issue 11): it never exceeds the plain K-ary bound, equals it where every
offset vector of the box is reachable (log losses, two classes, K = 3), its row variance is the largest a
probability row has (brute force through the scoring core), and no design found by search — zero-error
one-query designs, or any design's release entropy — beats it."""

from __future__ import annotations

import math
from itertools import combinations, product

import numpy as np
import pytest

from attacks.capacity.design import counting_bound
from attacks.capacity.reachable_bound import (
    box_variance,
    counting_root,
    entropy_labels,
    metric_spread,
    reachable_bound,
    reachable_spread,
    reachable_variance,
    variance_ratio,
)
from scoring.metrics import get_metric

SIMPLEX_METRICS = ("brier", "norm_like", "norm_like:2", "norm_like:4.5")


def probability_grid(classes: int, steps: int) -> np.ndarray:
    """Every probability row with entries in multiples of ``1/steps`` (stars and bars)."""
    rows = []
    for bars in combinations(range(steps + classes - 1), classes - 1):
        edges = np.array((-1, *bars, steps + classes - 1))
        rows.append((np.diff(edges) - 1) / steps)
    return np.array(rows)


def label_losses(metric: str, rows: np.ndarray) -> np.ndarray:
    """``rows × K``: each row's loss under each label, from the scoring core (not the attack's model)."""
    scorer = get_metric(metric)
    assert scorer.row_values is not None
    k = rows.shape[1]
    out = np.empty_like(rows)
    for c in range(k):
        out[:, c] = scorer.row_values(rows, np.full(len(rows), c), 1e-15)
    return out


def min_separation(rows: np.ndarray) -> float:
    """The smallest gap between the ``K^m`` label sums of ``m`` rows of losses (0 if two coincide): the finest
    resolution at which one query decodes every labeling."""
    sums = np.zeros(1)
    for row in rows:
        sums = (sums[:, None] + row[None, :]).ravel()
    return float(np.diff(np.sort(sums)).min())


@pytest.mark.parametrize("metric", ["multiclass_logloss", "kl", "itakura_saito", *SIMPLEX_METRICS])
def test_equals_plain_bound_where_every_offset_vector_is_reachable(metric: str) -> None:
    classes = [3, 6, 10] if metric in ("multiclass_logloss", "kl", "itakura_saito") else [3]
    for k in classes:
        for n in (50, 306, 2201):
            plain = counting_bound(n, 5, classes=k, spread=metric_spread(metric, k))
            assert reachable_bound(n, 5, metric=metric, classes=k) == plain
    binary = "binary_logloss" if metric == "multiclass_logloss" else metric
    assert reachable_bound(306, 5, metric=binary, classes=2) == counting_bound(
        306, 5, classes=2, spread=metric_spread(binary, 2))


@pytest.mark.parametrize("metric", ["multiclass_logloss", "itakura_saito", *SIMPLEX_METRICS])
def test_never_exceeds_plain_bound_and_is_below_it_for_simplex_rows_from_four_classes(metric: str) -> None:
    for k, n, decimals in product(range(2, 13), (20, 306, 2201, 25000), (3, 5, 8)):
        plain = counting_bound(n, decimals, classes=k, spread=metric_spread(metric, k))
        assert reachable_bound(n, decimals, metric=metric, classes=k) <= plain
        real = counting_root(n, decimals, classes=k, spread=reachable_spread(metric, k))
        assert real <= counting_root(n, decimals, classes=k, spread=metric_spread(metric, k))
        assert math.floor(real) == reachable_bound(n, decimals, metric=metric, classes=k) or real == 1.0
    if metric in SIMPLEX_METRICS:
        assert [variance_ratio(metric, k) for k in (4, 6, 10)] == [3 / 4, 5 / 9, 9 / 25]
        assert reachable_spread(metric, 10) < metric_spread(metric, 10)


@pytest.mark.parametrize("metric", SIMPLEX_METRICS)
@pytest.mark.parametrize(("k", "steps"), [(3, 24), (4, 12), (5, 8), (6, 6)])
def test_reachable_variance_is_the_largest_a_probability_row_has(metric: str, k: int, steps: int) -> None:
    """Every row of a probability grid (one-hot rows included) scored by the scoring core: the largest variance
    of its K label losses is the bound's ``v_reach``, attained; the box's is larger from K = 4 on."""
    variances = label_losses(metric, probability_grid(k, steps)).var(axis=1)
    v_reach = reachable_variance(metric, k)
    assert variances.max() <= v_reach * (1 + 1e-9)
    assert variances.max() == pytest.approx(v_reach, rel=1e-9)
    assert v_reach <= box_variance(k, metric_spread(metric, k)) * (1 + 1e-12)


def searched_designs(metric: str, k: int, m: int, seed: int) -> list[np.ndarray]:
    """Zero-error candidates for ``m`` rows of ``K`` classes: mixed-radix ladders at the largest reachable
    step, one-hot-plus-cluster rows, and a seeded hill climb on the smallest gap between the ``K^m`` sums."""
    rng = np.random.default_rng(seed)
    designs = []
    # Ladders: row j's probabilities on a ladder of step K^j·t, t as large as a probability row allows.
    for order in (np.arange(m), np.arange(m)[::-1]):
        ladder = np.arange(k, dtype=np.float64)
        rows = np.array([ladder * k ** int(j) for j in order])
        rows = rows / rows.sum(axis=1, keepdims=True).max()
        rows[:, 0] += 1.0 - rows.sum(axis=1)
        designs.append(rows)
    # Hill climb on rows of probabilities.
    for _ in range(6):
        rows = rng.dirichlet(np.full(k, 0.3), size=m)
        best = min_separation(label_losses(metric, rows))
        for step in range(400):
            scale = 0.2 * (1 - step / 400) + 1e-3
            trial = np.abs(rows + rng.normal(0, scale, rows.shape))
            trial /= trial.sum(axis=1, keepdims=True)
            gap = min_separation(label_losses(metric, trial))
            if gap > best:
                rows, best = trial, gap
        designs.append(rows)
    return designs


@pytest.mark.parametrize("metric", ["brier", "norm_like"])
@pytest.mark.parametrize(("k", "m"), [(4, 1), (4, 2), (4, 3), (6, 1), (6, 2), (10, 1)])
def test_no_zero_error_design_beats_the_reachable_bound(metric: str, k: int, m: int) -> None:
    """A design whose ``K^m`` sums are ``s`` apart decodes ``m`` labels in one query at resolution ``s``: the
    reachable bound at that resolution (``N·10^-5 <= s``) must allow ``m``."""
    found = 0.0
    for rows in searched_designs(metric, k, m, seed=100 * k + m):
        gap = min_separation(label_losses(metric, rows))
        found = max(found, gap)
        if gap <= 0:
            continue
        n_rows = max(1, math.floor(gap / 1e-5))
        assert reachable_bound(n_rows, 5, metric=metric, classes=k) >= m
    assert found > 0  # the search found zero-error designs to check


@pytest.mark.parametrize("metric", ["brier", "norm_like"])
@pytest.mark.parametrize(("k", "m"), [(3, 4), (4, 3), (6, 2), (10, 2)])
def test_no_design_releases_more_entropy_than_the_bound(metric: str, k: int, m: int) -> None:
    """Random probability rows (one-hot rows among them), uniform labels, the release ``round(S/res + c)``:
    its exact entropy stays below :func:`entropy_labels` with the reachable variance."""
    rng = np.random.default_rng(k * 10 + m)
    n_rows, decimals = 2000, 5
    res = n_rows * 1e-5
    allowed = entropy_labels(n_rows, decimals, classes=k, variance=reachable_variance(metric, k), rows=m)
    for trial in range(40):
        rows = rng.dirichlet(np.full(k, 0.2 if trial % 2 else 1.0), size=m)
        if trial % 5 == 0:
            rows[0] = np.eye(k)[0]
        losses = label_losses(metric, rows)
        sums = np.zeros(1)
        for row in losses:
            sums = (sums[:, None] + row[None, :]).ravel()
        _, counts = np.unique(np.round(sums / res + rng.random()), return_counts=True)
        p = counts / counts.sum()
        assert float(-(p * np.log2(p)).sum()) / math.log2(k) <= allowed
