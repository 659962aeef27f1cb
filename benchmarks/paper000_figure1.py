"""Paper 000's Figure 1, single-query curves: the largest N whose labels one query recovers in full, against
the noise scale (0, 0.01, 0.1, 1), beside the paper's.

Noise 0 is ``prime_single`` (Theorem 1) on a float64 server releasing the full score; noise s > 0 is
``robust_single`` (Algorithm 2) with τ = s against a server that adds bounded noise uniform in [−s, s] to the
exact score (the paper's "bounded noise of scale s"). "Fully recovered" means every one of the trials (seeded
random labelings plus all zeros, all ones, alternating and one positive) returns every label; N grows until
one does not (the attack then fails loudly — it never returns wrong labels here). Two clipping settings:
Kaggle's eps = 1e-15, which caps ``ln v`` at 34.5, and eps = 1e-300, which leaves about the float64 range the
paper's own computation had.

    .venv/bin/python -m benchmarks.paper000_figure1 [--trials 20]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from attacks import AttackFailed, LocalOracle, run

PAPER = {0.0: 10, 0.01: 12, 0.1: 8, 1.0: 6}  # Figure 1(a) and 1(e)
MAX_N = 20


class BoundedNoiseOracle:
    """The exact float64 score plus noise uniform in ``[-scale, scale]`` (paper 000's bounded noise)."""

    def __init__(self, labels: np.ndarray, *, scale: float, eps: float, seed: int) -> None:
        self.inner = LocalOracle(labels, decimals=None, eps=eps)
        self.scale = scale
        self.rng = np.random.default_rng(seed)
        self.n_rows, self.n_classes, self.metric = self.inner.n_rows, self.inner.n_classes, self.inner.metric
        self.eps, self.arithmetic = eps, "float64"
        self.decimals: int | None = None
        self.queries = 0

    def submit(self, predictions: Any) -> float | None:
        self.queries += 1
        raw = self.inner.submit(predictions)
        return None if raw is None else float(raw) + float(self.rng.uniform(-self.scale, self.scale))


def trials(n: int, count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    one = np.zeros(n, dtype=np.int64)
    one[n // 2] = 1
    fixed = [np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64), np.arange(n) % 2, one]
    return [rng.integers(0, 2, n) for _ in range(count)] + fixed


def recovers_all(n: int, scale: float, eps: float, count: int) -> bool:
    for i, labels in enumerate(trials(n, count, seed=n)):
        oracle = BoundedNoiseOracle(labels, scale=scale, eps=eps, seed=1000 * n + i)
        try:
            if scale == 0:
                result = run("prime_single", oracle)
            else:
                result = run("robust_single", oracle, tau=scale, verify=False)
        except AttackFailed:
            return False
        if result.labels.tolist() != labels.tolist():
            raise AssertionError(f"N = {n}, scale {scale}: a wrong labeling was returned as a success")
    return True


def largest(scale: float, eps: float, count: int) -> int:
    best = 0
    for n in range(1, MAX_N + 1):
        if not recovers_all(n, scale, eps, count):
            break
        best = n
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="random labelings per N (plus 4 adversarial)")
    args = parser.parse_args()
    print("largest N fully recovered from ONE query (float64 server, full score released)")
    print(f"{'noise scale':>12} {'paper':>6} {'ours eps=1e-15':>15} {'ours eps=1e-300':>16} {'seconds':>8}")
    for scale, paper in PAPER.items():
        started = time.perf_counter()
        kaggle = largest(scale, 1e-15, args.trials)
        loose = largest(scale, 1e-300, args.trials)
        print(f"{scale:>12g} {paper:>6} {kaggle:>15} {loose:>16} {time.perf_counter() - started:>8.1f}")
    print(f"(ours capped at N = {MAX_N}: the exhaustive decoders enumerate at most 2^20 labelings)")


if __name__ == "__main__":
    main()
