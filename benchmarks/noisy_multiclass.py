"""``auto`` on noisy boards no exact design carries, where it falls back to ``one_vs_rest`` (binary questions
"is the label in S?" decoded by ``noisy``): K-class log loss, and Brier and norm-like on any number of classes.

Beside ``auto``, in the same run: the majority-class rate (where ``auto`` ended on K-class boards before
``one_vs_rest`` existed, and on Brier and norm-like until it took them), ``one_vs_rest`` asking one class at a time
(``code="classes"``, K − 1 questions: the design before the balanced bit questions), and the binary ``noisy``
attack on one question with the same noise (binary log loss: the per-question reference).

For each metric, K, N and Laplace scale at 5 released decimals and a budget of ``20·N``: labels right, queries,
queries per row, seconds; ``--runs`` seeded labelings each (median).

    .venv/bin/python -m benchmarks.noisy_multiclass [--runs 3] [--metrics multiclass_logloss,brier,norm_like]
        [--sizes 200,1000] [--classes 2,3,6,10] [--scales 1e-3,5e-3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attacks import LocalOracle, run
from attacks.one_vs_rest import reducible

DECIMALS = 5


def _board(labels: np.ndarray, metric: str, scale: float, seed: int) -> LocalOracle:
    return LocalOracle(labels, metric=metric, decimals=DECIMALS, seed=seed,
                       defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--metrics", default="multiclass_logloss,brier,norm_like")
    parser.add_argument("--sizes", default="200,1000")
    parser.add_argument("--classes", default="2,3,6,10")
    parser.add_argument("--scales", default="1e-3,5e-3")
    args = parser.parse_args()
    print("| metric | K | N | Laplace | majority rate | auto accuracy | auto queries | queries/row | one class at a "
          "time: queries | binary noisy (one question) | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for metric in args.metrics.split(","):
        for k in (int(v) for v in args.classes.split(",")):
            if not reducible(metric, k):
                continue  # binary log loss: noisy itself
            for n in (int(v) for v in args.sizes.split(",")):
                for scale in (float(v) for v in args.scales.split(",")):
                    _cell(metric, k, n, scale, args.runs)


def _cell(metric: str, k: int, n: int, scale: float, runs: int) -> None:
    acc, queries, majority, classes, binary, secs = [], [], [], [], [], []
    for seed in range(runs):
        y = np.random.default_rng(100 * k + seed).integers(0, k, n)
        majority.append(float(np.bincount(y, minlength=k).max() / n))
        board = _board(y, metric, scale, seed)
        started = time.perf_counter()
        result = run("auto", board, budget=20 * n, seed=seed)
        secs.append(time.perf_counter() - started)
        acc.append(result.accuracy(y))
        queries.append(board.queries)
        if k > 2:
            one_at_a_time = _board(y, metric, scale, seed)
            run("one_vs_rest", one_at_a_time, code="classes", budget=20 * n, seed=seed)
            classes.append(one_at_a_time.queries)
        one = _board((y == 0).astype(int), "binary_logloss", scale, seed)
        run("noisy", one, budget=20 * n, seed=seed)
        binary.append(one.queries)
    q = statistics.median(queries)
    per_class = f"{statistics.median(classes):,.0f}" if classes else "—"
    print(f"| {metric} | {k} | {n:,} | {scale:g} | {statistics.median(majority):.3f} | "
          f"{statistics.median(acc):.3f} (min {min(acc):.3f}) | {q:,.0f} | {q / n:.2f} | {per_class} | "
          f"{statistics.median(binary):,.0f} | {statistics.median(secs):.1f} |", flush=True)


if __name__ == "__main__":
    main()
