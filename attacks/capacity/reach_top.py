"""The top digit for Brier and the norm-like loss: rows drawn under the simplex, not under the top row's cap.

:func:`attacks.capacity.kary.top_weights_k` draws every top row in one band ``[top_low·V, V]`` with ``V`` the cap
(:meth:`~attacks.capacity.row_loss.RowLoss.with_spread_cap`: the *least* reachable row of that band). A probability
row is held to a joint budget instead (Brier: ``K·max d − Σ d <= 2``): a row whose other classes sit close below its
largest offset reaches far beyond the cap (one-hot: the whole spread), one with a wide band less. So the top rows
here are drawn with their own largest weight (up to the spread) and band, each checked by
:meth:`RowLoss.feasible`, and the draw whose sum over a uniform labeling has the most entropy is kept. Rows are
independent under a uniform labeling, so that entropy is the entropy of the convolution of the rows' value
histograms (no ``K^m`` enumeration). Offline at K = 6 (Brier): +0.4–0.5 bits per query's top digit against the
``[¾V, V]`` band at the same position.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from attacks.capacity.row_loss import RowLoss

#: Random draws of a whole top digit (m rows) per position.
DRAWS = 96


def sum_entropy(weights: np.ndarray) -> float:
    """Entropy (bits) of the sum of one weight per row, each row's class uniform and independent of the others."""
    pmf = np.ones(1)
    classes = weights.shape[1]
    for row in weights:
        pmf = np.convolve(pmf, np.bincount(row, minlength=int(row.max()) + 1) / classes)
    p = pmf[pmf > 0]
    return float(-(p * np.log2(p)).sum())


def reach_top_weights(loss: RowLoss, v_cap: int, m: int, scale: float) -> np.ndarray | None:
    """``m × K`` top weights (one 0 per row) every row of which ``loss`` reaches at ``scale`` (the real offset of
    weight 1: the digit's position times the lattice unit), with the most entropic sum found; ``None`` if no
    draw is reached. ``v_cap`` (the cap's room at this position) sets where the draws' largest weights start."""
    found = _search(loss.metric, loss.classes, loss.eps, v_cap, m, float(scale))
    return None if found is None else np.array(found, dtype=np.int64).reshape(m, loss.classes)


@lru_cache(maxsize=2048)
def _search(metric: str, classes: int, eps: float, v_cap: int, m: int, scale: float) -> tuple[int, ...] | None:
    loss = RowLoss.for_metric(metric, classes, eps)
    v_limit = max(1, int(loss.spread / scale))  # no row's offset exceeds the label spread
    rng = np.random.default_rng(v_cap * 1_000_003 + m * 101 + classes)
    best: tuple[float, tuple[int, ...]] | None = None
    for _ in range(DRAWS):
        low = rng.uniform(0.3, 0.98)
        v_draw = rng.uniform(0.8, max(0.81, v_limit / max(v_cap, 1))) * v_cap
        rows = np.empty((0, classes), dtype=np.int64)
        for _ in range(12):  # shrink the draw's largest weight until m rows are reached
            tops = np.maximum(1, (rng.uniform(0.6, 1.0, size=4 * m) * min(v_draw, v_limit)).astype(np.int64))
            lows = (tops * low).astype(np.int64)
            others = lows[:, None] + (rng.random((4 * m, classes - 2)) * (tops - lows + 1)[:, None]).astype(np.int64)
            cand = np.column_stack([np.zeros(4 * m, dtype=np.int64), tops, np.minimum(others, tops[:, None])])
            ok = loss.feasible(cand * scale)
            rows = np.vstack([rows, cand[ok]])[:m]
            if len(rows) == m:
                break
            v_draw *= 0.8
        if len(rows) < m:
            continue
        weights = np.array([rng.permutation(row) for row in rows], dtype=np.int64)
        h = sum_entropy(weights)
        if best is None or h > best[0]:
            best = (h, tuple(int(w) for w in weights.ravel()))
    return None if best is None else best[1]


