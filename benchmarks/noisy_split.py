"""``auto`` on binary log-loss boards with the default 30 % public split under Laplace noise too large for
``capacity_split``: it falls back to ``noisy_split`` (three states a row: label 0, label 1, not scored).

Beside it, in the same run: ``auto`` with ``noisy_split`` taken out of the registry (what it did before: its
best guess after ``capacity_split`` failed, through the majority-class floor), and ``noisy`` on a board of the
public rows alone with the same noise on the same released mean (an attacker told the mask: the reference
``noisy_split`` pays the unknown split against). Public labels right, queries, seconds; median over ``--runs``
seeded labelings, a budget of ``20·N``.

    .venv/bin/python -m benchmarks.noisy_split [--runs 3] [--sizes 300] [--scales 0.03,0.1,0.3,1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from attacks import LocalOracle, run
from attacks.registry import ATTACKS

DECIMALS = 5
FRACTION = 0.3


def _board(labels: np.ndarray, scale: float, seed: int, fraction: float | None) -> LocalOracle:
    return LocalOracle(labels, metric="binary_logloss", decimals=DECIMALS, seed=seed, public_fraction=fraction,
                       defenses=[{"name": "noise", "kind": "laplace", "scale": scale}])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="300")
    parser.add_argument("--scales", default="0.03,0.1,0.3,1")
    args = parser.parse_args()
    print("| N | Laplace | public majority | auto: public labels right | auto queries | auto without "
          "noisy_split: public labels right · queries | noisy told the mask: queries | seconds (auto) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (int(v) for v in args.sizes.split(",")):
        for scale in (float(v) for v in args.scales.split(",")):
            acc, queries, boost, told, majority, secs = [], [], [], [], [], []
            boost_q: list[int] = []
            for seed in range(args.runs):
                y = np.random.default_rng(1000 + seed).integers(0, 2, n)
                board = _board(y, scale, seed, FRACTION)
                public = board.spec.hidden.public_mask
                majority.append(max(float(y[public].mean()), 1 - float(y[public].mean())))
                started = time.perf_counter()
                result = run("auto", board, budget=20 * n, seed=seed)
                secs.append(time.perf_counter() - started)
                acc.append(float((result.labels[public] == y[public]).mean()))
                queries.append(board.queries)
                old = _board(y, scale, seed, FRACTION)
                kept = ATTACKS.pop("noisy_split")
                try:
                    before = run("auto", old, budget=20 * n, seed=seed)
                finally:
                    ATTACKS["noisy_split"] = kept
                boost.append(float((before.labels[public] == y[public]).mean()))
                boost_q.append(old.queries)
                # The public rows alone, with the noise the split board's release carries on their mean.
                alone = _board(y[public], scale, seed, None)
                run("noisy", alone, budget=20 * n, seed=seed)
                told.append(alone.queries)
            print(f"| {n:,} | {scale:g} | {statistics.median(majority):.3f} | {statistics.median(acc):.3f} "
                  f"(min {min(acc):.3f}) | {statistics.median(queries):,.0f} | {statistics.median(boost):.3f} · "
                  f"{statistics.median(boost_q):,.0f} | "
                  f"{statistics.median(told):,.0f} | {statistics.median(secs):.1f} |", flush=True)


if __name__ == "__main__":
    main()
