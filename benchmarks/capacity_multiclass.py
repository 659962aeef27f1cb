"""Labels per query of the K-ary ``capacity`` attack against the K-ary counting bound, with the binary attack
and paper 000's ``prime_powers`` measured in the same run as baselines.

For K in {3, 6, 10} and N in {306, 569, 2,201} at 5 released decimals: the bound ``K^m <= m·M + 1``
(``M = A/(N·10^-5)``), labels per query of ``capacity`` on a ``multiclass_logloss`` board (mean and minimum
over ``--runs`` seeded random labelings, and the minimum over adversarial ones: constant, sorted, cyclic),
its share of the bound, every label recovered, and the same for the split-aware variant on the default 30 %
public split (queries including the public-count calibration; labels are the public ones). Baselines from the
same run: the binary ``capacity`` (K = 2, ``binary_logloss``) against its bound, and ``prime_powers``'
labels per query on the K-class board.

    .venv/bin/python -m benchmarks.capacity_multiclass [--runs 3] [--sizes 306,569,2201] [--classes 3,6,10]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from attacks import LocalOracle, run
from attacks.capacity import capacity_attack, capacity_split_attack, counting_bound

DECIMALS = 5


def adversarial(n: int, k: int) -> list[np.ndarray]:
    return [np.zeros(n, dtype=np.int64), np.full(n, k - 1), np.sort(np.arange(n) % k), np.arange(n) % k]


def measure(n: int, k: int, runs: int) -> dict[str, Any]:
    metric = "binary_logloss" if k == 2 else "multiclass_logloss"
    rates: list[float] = []
    seconds: list[float] = []
    ok = True
    for seed in range(runs):
        labels = np.random.default_rng(1000 * k + seed).integers(0, k, n)
        started = time.perf_counter()
        result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), check=False)
        seconds.append(time.perf_counter() - started)
        ok &= bool((result.labels == labels).all())
        rates.append(float(result.details["labels_per_query"]))
    worst = float("inf")
    for labels in adversarial(n, k):
        result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), check=False)
        ok &= bool((result.labels == labels).all())
        worst = min(worst, float(result.details["labels_per_query"]))
    labels = np.random.default_rng(7 * k).integers(0, k, n)
    oracle = LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS, public_fraction=0.3, seed=k)
    split = capacity_split_attack(oracle, check=False)
    mask = split.details["public_mask"]
    ok &= bool((split.labels[mask] == labels[mask]).all() and (mask == oracle.spec.hidden.public_mask).all())
    prime = None
    if k > 2:
        pp = run("prime_powers", LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), confirm=False)
        prime = float(pp.details["batch_size"])
    bound = counting_bound(n, DECIMALS, classes=k)
    return {
        "K": k, "N": n, "bound": bound, "mean": statistics.mean(rates), "min": min(rates), "adversarial": worst,
        "share": statistics.mean(rates) / bound, "split_queries": split.queries,
        "split_public": int(mask.sum()), "prime_powers": prime, "seconds": statistics.median(seconds), "ok": ok,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="306,569,2201")
    parser.add_argument("--classes", default="3,6,10")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    classes = [2] + [int(k) for k in args.classes.split(",")]
    print("| K | N | bound K^m <= m·M+1 | capacity labels/query (mean, min; adversarial min) | % of bound | "
          "prime_powers rows/query | capacity_split (30 %): queries for the public labels | median s | all exact |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in classes:
        for n in sizes:
            row = measure(n, k, args.runs)
            prime = "—" if row["prime_powers"] is None else f"{row['prime_powers']:.0f}"
            name = f"{k} (binary baseline)" if k == 2 else str(k)
            rates = f"{row['mean']:.2f} ({row['min']:.2f}; {row['adversarial']:.2f})"
            print(f"| {name} | {n:,} | {row['bound']} | {rates} | "
                  f"{100 * float(row['share']):.0f} % | {prime} | {row['split_queries']} for {row['split_public']} | "
                  f"{row['seconds']:.1f} | {'yes' if row['ok'] else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
