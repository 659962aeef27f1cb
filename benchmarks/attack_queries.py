"""Queries every attack needs to recover all labels, against the counting bound (issue "Attacks I").

For each N and released precision (5 decimals, 8 decimals, full float64), runs each binary attack on a seeded
balanced labeling through ``LocalOracle`` (the site's own scoring) and prints the queries to full recovery,
labels per query, and the FIELD_NOTES counting bound ``2^m ≤ m·M + 1`` with ``M = A/(N·δ)``. Queries count the
attack's construction only (``confirm=False``; ``attacks.run`` adds one confirmation query by default).

    .venv/bin/python -m benchmarks.attack_queries [--full]     # --full adds N = 25,000 (a few minutes)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attacks import AttackFailed, LocalOracle, run
from benchmarks.paper004_queries import balanced_labels, bound_labels_per_query

ATTACKS = ("prime_batched", "twin_primes", "binary_representation", "auc_logloss", "capacity")
PRECISIONS: dict[str, int | None] = {"5 decimals": 5, "8 decimals": 8, "float64": None}


def measure(attack: str, labels: np.ndarray, decimals: int | None) -> tuple[str, str, str]:
    """(queries, labels per query, seconds) as text, or the loud failure's reason."""
    also = ("auc",) if attack == "auc_logloss" else ()
    oracle = LocalOracle(labels, decimals=decimals, also_report=also)
    started = time.perf_counter()
    try:
        result = run(attack, oracle, confirm=False)
    except AttackFailed as exc:
        return "fails loudly", str(exc).split(": ", 1)[-1][:48], "-"
    seconds = time.perf_counter() - started
    if not (result.labels == labels).all():
        return "WRONG", "-", f"{seconds:.1f}"
    return str(result.queries), f"{len(labels) / result.queries:.2f}", f"{seconds:.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--full", action="store_true", help="also N = 25,000")
    args = parser.parse_args(argv)
    sizes = (306, 569, 2_201, 25_000) if args.full else (306, 569, 2_201)
    print("| N | precision | bound (labels/query) | bound (queries) | attack | queries | labels/query | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        labels = balanced_labels(n)
        for precision, decimals in PRECISIONS.items():
            bound = bound_labels_per_query(n, decimals)
            for attack in ATTACKS:
                queries, per_query, seconds = measure(attack, labels, decimals)
                print(f"| {n:,} | {precision} | {bound} | {-(-n // bound)} | {attack} | {queries} | {per_query} "
                      f"| {seconds} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
