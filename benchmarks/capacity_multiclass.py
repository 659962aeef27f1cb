"""Labels per query of the K-ary ``capacity`` attack against the K-ary counting bound, with the binary attack
and paper 000's ``prime_powers`` measured in the same run as baselines.

For K in {3, 6, 10} and N in {306, 569, 2,201} at 5 released decimals: the bound ``K^m <= m·M + 1``
(``M = A/(N·10^-5)``), labels per query of ``capacity`` on a ``multiclass_logloss`` board (mean and minimum
over ``--runs`` seeded random labelings, and the minimum over adversarial ones: constant, sorted, cyclic),
its share of the bound, every label recovered, and the same for the split-aware variant on the default 30 %
public split (queries including the public-count calibration; labels are the public ones). Baselines from the
same run: the binary ``capacity`` (K = 2, ``binary_logloss``) against its bound, and ``prime_powers``'
labels per query on the K-class board.

``--metrics`` adds paper 001's losses (``kl``, ``brier``, ``norm_like``, ``itakura_saito``; K = 2 too), each
against the K-ary bound with *its* label spread ``A`` (2 for K-class Brier, 1 binary; α for the norm-like loss;
``≈ 1/eps`` for Itakura–Saito), and beside it the bound on the rows a probability vector reaches
(:mod:`attacks.capacity.reachable_bound`: the spread ``A·√ρ``; real roots of both bounds in brackets, free of the
integer steps) and the entropy bound of a query spending all ``N`` rows; ``--adversarial`` prints one row per
adversarial labeling (constant, sorted, cyclic, 90 % one class) instead of the random ones, with its share of the
bound.

    .venv/bin/python -m benchmarks.capacity_multiclass [--runs 3] [--sizes 306,569,2201] [--classes 3,6,10]
        [--metrics multiclass_logloss,kl,brier,norm_like,itakura_saito] [--adversarial]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

from attacks import LocalOracle, run
from attacks.capacity import capacity_attack, capacity_split_attack, counting_bound
from attacks.capacity.reachable_bound import (
    counting_root,
    entropy_labels,
    metric_spread,
    reachable_bound,
    reachable_spread,
    reachable_variance,
)
from attacks.capacity.row_loss import RowLoss
from attacks.result import AttackFailed

DECIMALS = 5


def adversarial(n: int, k: int) -> list[np.ndarray]:
    return [labels for _, labels in named_adversarial(n, k)]


def named_adversarial(n: int, k: int) -> list[tuple[str, np.ndarray]]:
    """Constant (first and last class), sorted, cyclic and skewed (90 % class 0, the rest random) labelings."""
    skewed = np.where(np.random.default_rng(n + k).random(n) < 0.9, 0,
                      np.random.default_rng(n * k).integers(1, k, n))
    return [("all 0", np.zeros(n, dtype=np.int64)), (f"all {k - 1}", np.full(n, k - 1)),
            ("sorted", np.sort(np.arange(n) % k)), ("cyclic", np.arange(n) % k), ("90 % class 0", skewed)]


def bound_for(metric: str, n: int, k: int) -> int:
    """The K-ary counting bound with the metric's own label spread."""
    spread = None if metric in ("binary_logloss", "multiclass_logloss", "kl") else RowLoss.for_metric(
        metric, k, 1e-15).spread
    return counting_bound(n, DECIMALS, classes=k, spread=spread)


def float64_bound(metric: str, n: int, k: int) -> int:
    """The K-ary counting bound with the window a sound decoder must leave for the server's float64 rounding
    of ``m`` rows of loss up to ``A`` (:meth:`attacks.server_model.ServerModel.formula_row_error` and the
    summation depth, as the lattice and ``bregman_powers`` use): ``K^m <= m·A/w(m) + 1``. It binds only where
    ``A`` is huge (Itakura–Saito, ``A ≈ 1/eps``); elsewhere it is the counting bound."""
    from attacks.server_model import ServerModel

    spread = RowLoss.for_metric(metric, k, 1e-15).spread
    server = ServerModel(n, n_classes=k, eps=1e-15, decimals=DECIMALS)

    def fits(m: int) -> bool:
        magnitude = m * spread + n * (k + 3)
        window = 2 * float(server.error_bound(magnitude, server.formula_row_error(magnitude, None if k == 2 else k)))
        return k**m <= m * spread / window + 1

    m = 1
    while fits(m + 1):
        m += 1
    return m


def measure_metric(n: int, k: int, runs: int, metric: str) -> dict[str, Any]:
    """``capacity`` on a paper-001 loss: labels per query over seeded random labelings and the adversarial ones."""
    rates: list[float] = []
    seconds: list[float] = []
    ok = True
    worst = float("inf")
    refused = None
    try:
        for seed in range(runs):
            labels = np.random.default_rng(1000 * k + seed).integers(0, k, n)
            started = time.perf_counter()
            result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), check=False)
            seconds.append(time.perf_counter() - started)
            ok &= bool((result.labels == labels).all())
            rates.append(float(result.details["labels_per_query"]))
        for labels in adversarial(n, k):
            result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), check=False)
            ok &= bool((result.labels == labels).all())
            worst = min(worst, float(result.details["labels_per_query"]))
    except AttackFailed as exc:
        refused = str(exc)
    bound = bound_for(metric, n, k)
    mean = statistics.mean(rates) if rates else 0.0
    return {"K": k, "N": n, "bound": bound, "float64_bound": float64_bound(metric, n, k), "mean": mean,
            "min": min(rates, default=0.0), "adversarial": worst, "share": mean / bound,
            "seconds": statistics.median(seconds) if seconds else 0.0, "ok": ok, "refused": refused,
            **reachable_columns(metric, n, k)}


def reachable_columns(metric: str, n: int, k: int) -> dict[str, float]:
    """The bound on the rows a probability vector reaches (:mod:`attacks.capacity.reachable_bound`): integer
    and real roots of the plain and reachable counting bounds, and the entropy bound of a query spending all
    ``N`` rows (what an adaptive attack is held to)."""
    return {
        "reachable": reachable_bound(n, DECIMALS, metric=metric, classes=k),
        "plain_root": counting_root(n, DECIMALS, classes=k, spread=metric_spread(metric, k)),
        "reachable_root": counting_root(n, DECIMALS, classes=k, spread=reachable_spread(metric, k)),
        "entropy": entropy_labels(n, DECIMALS, classes=k, variance=reachable_variance(metric, k)),
    }


def measure_adversarial(n: int, k: int, metric: str) -> list[dict[str, Any]]:
    """One row per adversarial labeling: labels per query against the bound."""
    out = []
    bound = bound_for(metric, n, k)
    for name, labels in named_adversarial(n, k):
        result = capacity_attack(LocalOracle(labels, metric=metric, n_classes=k, decimals=DECIMALS), check=False)
        rate = float(result.details["labels_per_query"])
        out.append({"K": k, "N": n, "labeling": name, "bound": bound, "rate": rate, "share": rate / bound,
                    "queries": result.queries, "ok": bool((result.labels == labels).all())})
    return out


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
    parser.add_argument("--metrics", default="multiclass_logloss")
    parser.add_argument("--adversarial", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    metrics = args.metrics.split(",")
    if args.adversarial:
        print("| metric | K | N | labeling | bound | labels/query | % of bound | queries | exact |")
        print("|---|---|---|---|---|---|---|---|---|")
        for metric in metrics:
            for k in [int(k) for k in args.classes.split(",")]:
                for n in sizes:
                    for row in measure_adversarial(n, k, metric):
                        print(f"| {metric} | {k} | {n:,} | {row['labeling']} | {row['bound']} | {row['rate']:.2f} | "
                              f"{100 * row['share']:.0f} % | {row['queries']} | {'yes' if row['ok'] else 'NO'} |",
                              flush=True)
        return
    if metrics != ["multiclass_logloss"]:
        print("| metric | K | N | bound K^m <= m·M+1 (M = A/(N·δ)) (real root) | reachable bound, A√ρ (real root) "
              "| float64-aware bound | entropy bound, N rows | capacity labels/query (mean, min; adversarial min) | "
              "% of bound | % of reachable | % of real roots: plain, reachable | % of float64-aware | median s | "
              "all exact |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for metric in metrics:
            for k in [2] + [int(k) for k in args.classes.split(",")]:
                for n in sizes:
                    row = measure_metric(n, k, args.runs, metric)
                    if row["refused"]:
                        print(f"| {metric} | {k} | {n:,} | {row['bound']} | {row['reachable']} | "
                              f"{row['float64_bound']} | {row['entropy']:.2f} | refused: {row['refused'][:90]} | "
                              "— | — | — | — | — | — |", flush=True)
                        continue
                    rates = f"{row['mean']:.2f} ({row['min']:.2f}; {row['adversarial']:.2f})"
                    floats = 100 * row["mean"] / row["float64_bound"]
                    roots = (f"{100 * row['mean'] / row['plain_root']:.0f} %, "
                             f"{100 * row['mean'] / row['reachable_root']:.0f} %")
                    reach = 100 * row["mean"] / row["reachable"]
                    print(f"| {metric} | {k} | {n:,} | {row['bound']} ({row['plain_root']:.2f}) | {row['reachable']} "
                          f"({row['reachable_root']:.2f}) | {row['float64_bound']} | {row['entropy']:.2f} | {rates} | "
                          f"{100 * float(row['share']):.0f} % | {reach:.0f} % | {roots} | "
                          f"{floats:.0f} % | {row['seconds']:.1f} | {'yes' if row['ok'] else 'NO'} |", flush=True)
        return
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
