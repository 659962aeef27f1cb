"""Split-aware ``capacity_split`` on every metric it runs on: rows settled per query against an information bound,
with the log-loss construction measured in the same run as the baseline.

A board with a public split scores only the public rows, so every row is a ``(K + 1)``-valued unknown: private,
or public with one of ``K`` labels. With public fraction ``f`` the rows carry ``H = h(f) + f·log2 K`` bits each
(``h`` the binary entropy; 1.18 bits at ``f = 0.3``, ``K = 2``), and one released score separates at most
``m·M + 1`` summed losses (``M = A/(n_pub·δ)``, ``A`` the metric's label spread, ``δ`` the release step): the
*split bound* is the largest ``m`` with ``m·H <= log2(m·M + 1)`` — rows a query could settle if every released
value were equally likely. Per metric, K and N (seeded random labels, the default 30 % split, 5 decimals):
queries (public-count calibration included), rows settled per query (``N / queries``) and the public labels per
query, the share of the split bound, the seconds and whether the mask and every public label are right.

    .venv/bin/python -m benchmarks.capacity_split_metrics [--sizes 306,2201] [--classes 2,3,6,10]
        [--metrics multiclass_logloss,brier,norm_like,itakura_saito] [--runs 1]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Any

import numpy as np

from attacks import LocalOracle
from attacks.capacity import capacity_split_attack
from attacks.capacity.design import max_weight_real, sum_resolution
from attacks.capacity.row_loss import RowLoss
from attacks.result import AttackFailed

DECIMALS = 5
FRACTION = 0.3


def split_bound(n_pub: int, k: int, spread: float, fraction: float = FRACTION) -> int:
    """The largest ``m`` with ``m·(h(f) + f·log2 K) <= log2(m·M + 1)``, ``M = A/(n_pub·δ)`` (see the module).

    >>> split_bound(660, 2, max_weight_real(1e-15))
    13
    """
    entropy = -fraction * math.log2(fraction) - (1 - fraction) * math.log2(1 - fraction) + fraction * math.log2(k)
    big_m = spread / sum_resolution(n_pub, DECIMALS)
    m = 1
    while (m + 1) * entropy <= math.log2((m + 1) * big_m + 1):
        m += 1
    return m


def metric_name(metric: str, k: int) -> str:
    """``multiclass_logloss`` reads as ``binary_logloss`` on two classes (the site's binary metric)."""
    return "binary_logloss" if metric == "multiclass_logloss" and k == 2 else metric


def measure(metric: str, k: int, n: int, runs: int) -> dict[str, Any]:
    name = metric_name(metric, k)
    spread = (max_weight_real(1e-15) if name in ("binary_logloss", "multiclass_logloss", "kl")
              else RowLoss.for_metric(name, k, 1e-15).spread)
    queries: list[int] = []
    seconds: list[float] = []
    ok = True
    n_pub = 0
    for seed in range(runs):
        labels = np.random.default_rng(100 * k + seed).integers(0, k, n)
        oracle = LocalOracle(labels, metric=name, n_classes=k, decimals=DECIMALS, public_fraction=FRACTION,
                             seed=seed + 1)
        mask = oracle.spec.hidden.public_mask
        n_pub = int(mask.sum())
        started = time.perf_counter()
        try:
            result = capacity_split_attack(oracle, check=False)
        except AttackFailed as exc:
            return {"refused": str(exc), "n_pub": n_pub, "bound": split_bound(n_pub, k, spread)}
        seconds.append(time.perf_counter() - started)
        queries.append(result.queries)
        ok &= bool(np.array_equal(result.details["public_mask"], mask) and np.array_equal(result.labels[mask],
                                                                                          labels[mask]))
    q = statistics.median(queries)
    bound = split_bound(n_pub, k, spread)
    return {"refused": None, "n_pub": n_pub, "queries": q, "rows": n / q, "labels": n_pub / q, "bound": bound,
            "share": n / q / bound, "seconds": statistics.median(seconds), "ok": ok}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="306,2201")
    parser.add_argument("--classes", default="2,3,6,10")
    parser.add_argument("--metrics", default="multiclass_logloss,brier,norm_like,itakura_saito")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print("| metric | K | N | queries (calibration included) | rows settled / query | public labels / query | "
          "split bound (rows / query) | % of bound | median s | mask and labels exact |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for metric in args.metrics.split(","):
        for k in [int(k) for k in args.classes.split(",")]:
            for n in [int(s) for s in args.sizes.split(",")]:
                row = measure(metric, k, n, args.runs)
                name = metric_name(metric, k)
                if row["refused"]:
                    print(f"| {name} | {k} | {n:,} | refused: {row['refused'][:90]} | — | — | {row['bound']} | — | — "
                          "| — |", flush=True)
                    continue
                print(f"| {name} | {k} | {n:,} | {row['queries']:.0f} | {row['rows']:.2f} | {row['labels']:.2f} | "
                      f"{row['bound']} | {100 * row['share']:.0f} % | {row['seconds']:.1f} | "
                      f"{'yes' if row['ok'] else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
