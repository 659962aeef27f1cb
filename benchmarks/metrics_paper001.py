"""Paper 001's metrics in the scoring core: agreement with an independent implementation, and their cost
against the log loss measured in the same run.

For each metric, on random inputs (probabilities, or logits N(0, 4²) for the cross-entropies) with binary and
10-class labels:

* ``max rel. diff``: the largest relative difference of the score from the reference over ``--trials`` draws —
  scipy's ``kl_div`` (kl), scikit-learn's ``brier_score_loss`` (brier), scipy's ``log_softmax`` /
  ``log_expit`` (softmax_ce, sigmoid_ce), the paper's formula in plain Python floats (itakura_saito eq. 8,
  norm_like eq. 11 / the Bregman divergence for K classes);
* ``float64 ms``: the median time to score ``--rows`` rows (``Metric.score``), and its ratio to
  ``binary_logloss``/``multiclass_logloss`` on the same rows in the same run;
* ``mpfr:200 ms``: the median time of the φ-bit score (:func:`scoring.metrics.score_mpfr`) on ``--mpfr-rows``
  rows, and its ratio to the log loss's own φ-bit score on the same number of rows (timed alternately with each).

    .venv/bin/python -m benchmarks.metrics_paper001 [--rows 1000000] [--mpfr-rows 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from scipy import special
from sklearn import metrics as skm

from scoring import get_metric
from scoring.metrics import score_mpfr

EPS = 1e-15
METRICS = ("kl", "itakura_saito", "brier", "norm_like", "softmax_ce", "sigmoid_ce")


def draw(rng: np.random.Generator, n: int, k: int, logits: bool) -> tuple[np.ndarray, np.ndarray]:
    labels = rng.integers(0, k, n)
    if logits:
        return rng.normal(0, 4, n if k == 2 else (n, k)), labels
    return (rng.uniform(0.001, 0.999, n) if k == 2 else rng.dirichlet(np.ones(k), n)), labels


def reference(name: str, p: np.ndarray, y: np.ndarray, k: int) -> float:
    """The metric by an independent route (no code of ours)."""
    if name == "kl":
        q = np.column_stack([1 - p, p]) if k == 2 else p
        return float(special.kl_div(np.eye(k)[y], q).sum(axis=1).mean())
    if name == "brier":
        return float(skm.brier_score_loss(y, p) if k == 2 else skm.brier_score_loss(y, p, labels=list(range(k))))
    if name == "softmax_ce":
        z = np.column_stack([np.zeros_like(p), p]) if k == 2 else p
        return float(-special.log_softmax(z, axis=1)[np.arange(len(y)), y].mean())
    if name == "sigmoid_ce":
        return float(-np.where(y == 1, special.log_expit(p), special.log_expit(-p)).mean())
    rows = p.tolist()
    total = 0.0
    for row, label in zip(rows, y.tolist(), strict=True):
        probs: list[float] = [1 - row, row] if k == 2 else row
        if name == "itakura_saito":
            x = probs[label]
            total += 1 / x + math.log(x) - 1
        else:  # norm_like, α = 3: the Bregman divergence Σ_k p^α + (α−1) q^α − α p q^(α−1)
            total += sum((1.0 if c == label else 0.0) ** 3 + 2 * v**3 - 3 * (1.0 if c == label else 0.0) * v**2
                         for c, v in enumerate(probs))
    return total / len(y)


def paired_ms(fn: Callable[[], object], base: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median ms of ``fn`` and of ``base``, timed alternately so machine noise hits both alike."""
    fn(), base()
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(repeats):
        for call, times in ((fn, ours), (base, theirs)):
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(ours), statistics.median(theirs)


def texts_of(values: np.ndarray) -> tuple[tuple[str, ...], ...]:
    return tuple((repr(float(v)),) if np.ndim(v) == 0 else tuple(repr(float(x)) for x in v) for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--mpfr-rows", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(20261123)
    print(f"rows: {args.rows:,} (float64), {args.mpfr_rows:,} (mpfr:200); medians of {args.repeats} runs")
    print("| metric | K | max rel. diff vs reference | float64 ms (× log loss) | mpfr:200 ms (× log loss) |")
    print("|---|---|---|---|---|")
    for k in (2, 10):
        log_loss = get_metric("binary_logloss" if k == 2 else "multiclass_logloss")
        for name in METRICS:
            metric = get_metric(name)
            if "multiclass" not in metric.tasks and k > 2:
                continue
            worst = 0.0
            for _ in range(args.trials):
                p, y = draw(rng, 500, k, metric.logits)
                ours, theirs = metric.score(p, y, EPS), reference(name, p, y, k)
                worst = max(worst, abs(ours - theirs) / abs(theirs))
            p_big, y_big = draw(rng, args.rows, k, metric.logits)
            q_big, _ = draw(rng, args.rows, k, False)
            ms, base_ms = paired_ms(
                partial(metric.score, p_big, y_big, EPS), partial(log_loss.score, q_big, y_big, EPS), args.repeats
            )
            p_small, y_small = draw(rng, args.mpfr_rows, k, metric.logits)
            q_small, _ = draw(rng, args.mpfr_rows, k, False)
            mpfr_ms, base_mpfr = paired_ms(
                partial(score_mpfr, metric, texts_of(p_small), y_small, EPS, 200, binary=k == 2),
                partial(score_mpfr, log_loss, texts_of(q_small), y_small, EPS, 200, binary=k == 2),
                max(1, args.repeats // 2),
            )
            print(f"| {name} | {k} | {worst:.1e} | {ms:.1f} ({ms / base_ms:.2f}×) | "
                  f"{mpfr_ms:.0f} ({mpfr_ms / base_mpfr:.2f}×) |", flush=True)


if __name__ == "__main__":
    main()
