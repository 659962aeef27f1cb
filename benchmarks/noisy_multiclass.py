"""``auto`` on noisy K-class log-loss boards, where no exact design carries the noise: ``one_vs_rest`` (K − 1
binary questions decoded by ``noisy``) against the majority-class rate, where ``auto`` ended on these boards before
``one_vs_rest`` existed (its exact designs refuse or cannot decode, then it guesses), and beside the binary
``noisy`` attack on one question with the same noise, measured in the same run (the per-question reference:
``one_vs_rest`` should cost about K − 1 times it).

For K in {3, 6, 10}, N in {200, 1,000}, Laplace scale in {1e-3, 5e-3} at 5 released decimals, a budget of
``20·N``: labels right, queries, and queries per row; ``--runs`` seeded labelings each (median).

    .venv/bin/python -m benchmarks.noisy_multiclass [--runs 3] [--sizes 200,1000] [--classes 3,6,10]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attacks import LocalOracle, run

DECIMALS = 5


def _board(labels: np.ndarray, metric: str, scale: float, seed: int) -> LocalOracle:
    return LocalOracle(labels, metric=metric, decimals=DECIMALS, seed=seed,
                       defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="200,1000")
    parser.add_argument("--classes", default="3,6,10")
    parser.add_argument("--scales", default="1e-3,5e-3")
    args = parser.parse_args()
    print("| K | N | Laplace | majority rate | auto accuracy | auto queries | queries/row | binary noisy "
          "queries (one question) | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in (int(v) for v in args.classes.split(",")):
        for n in (int(v) for v in args.sizes.split(",")):
            for scale in (float(v) for v in args.scales.split(",")):
                acc, queries, majority, binary, secs = [], [], [], [], []
                for seed in range(args.runs):
                    y = np.random.default_rng(100 * k + seed).integers(0, k, n)
                    majority.append(float(np.bincount(y, minlength=k).max() / n))
                    board = _board(y, "multiclass_logloss", scale, seed)
                    started = time.perf_counter()
                    result = run("auto", board, budget=20 * n, seed=seed)
                    secs.append(time.perf_counter() - started)
                    acc.append(result.accuracy(y))
                    queries.append(board.queries)
                    one = _board((y == 0).astype(int), "binary_logloss", scale, seed)
                    run("noisy", one, budget=20 * n, seed=seed)
                    binary.append(one.queries)
                q = statistics.median(queries)
                print(f"| {k} | {n:,} | {scale:g} | {statistics.median(majority):.3f} | "
                      f"{statistics.median(acc):.3f} (min {min(acc):.3f}) | {q:,.0f} | {q / n:.2f} | "
                      f"{statistics.median(binary):,.0f} | {statistics.median(secs):.1f} |", flush=True)


if __name__ == "__main__":
    main()
