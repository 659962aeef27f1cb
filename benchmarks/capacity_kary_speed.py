"""The K-ary ``capacity`` attack's own time on paper 001's Brier loss (K = 10 by default, 5 released decimals)
against the code as first written (``reference=True``), measured in the same run on the same labels: the
attacker's CPU time (the oracle's scoring left out) and the wall time of the whole run, medians of ``--runs``
cold runs (every cache emptied), the queries, and whether the two sent byte-identical query vectors (a SHA-256
over every vector, in order) and recovered the same labels.

    .venv/bin/python -m benchmarks.capacity_kary_speed [--runs 3] [--sizes 600,2201] [--classes 10]
        [--metric brier]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from typing import Any

import numpy as np

from attacks.capacity import capacity_attack, kary
from benchmarks.attacker_speed import TimedOracle, clear_caches


class HashingOracle(TimedOracle):
    """A :class:`TimedOracle` that hashes every prediction vector it scores, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.digest = hashlib.sha256()

    def submit_all(self, predictions: Any) -> Any:
        self.digest.update(np.ascontiguousarray(np.asarray(predictions, dtype=np.float64)).tobytes())
        return super().submit_all(predictions)


def once(metric: str, n: int, k: int, seed: int, reference: bool) -> tuple[float, float, int, str, str]:
    """(attacker's own CPU seconds, wall seconds, queries, query digest, label digest) for one cold run."""
    clear_caches()
    for function in (kary._search, kary.top_weights_k, kary._kary_patterns):
        function.cache_clear()
    labels = np.random.default_rng(1000 * k + seed).integers(0, k, n)
    oracle = HashingOracle(labels, metric=metric, n_classes=k, decimals=5)
    started, wall = time.thread_time(), time.perf_counter()
    result = capacity_attack(oracle, check=False, reference=reference)
    total, wall = time.thread_time() - started, time.perf_counter() - wall
    if not np.array_equal(result.labels, labels):
        raise AssertionError(f"capacity did not recover every label (reference={reference})")
    labels_digest = hashlib.sha256(np.ascontiguousarray(result.labels, dtype=np.int64).tobytes()).hexdigest()
    return total - oracle.cpu, wall, result.queries, oracle.digest.hexdigest(), labels_digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="600,2201")
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--metric", default="brier")
    args = parser.parse_args()
    print("| metric | K | N | attacker CPU s: ours | as first written (same run) | speed-up | wall s: ours | "
          "as first written | queries | identical queries and labels |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(s) for s in args.sizes.split(",")]:
        fast: list[float] = []
        old: list[float] = []
        fast_wall: list[float] = []
        old_wall: list[float] = []
        same = True
        queries = 0
        for run_index in range(args.runs):
            # Alternate which goes first, so neither always runs on a warmer (or busier) machine.
            order = (False, True) if run_index % 2 == 0 else (True, False)
            measured = {ref: once(args.metric, n, args.classes, run_index, ref) for ref in order}
            fast.append(measured[False][0])
            old.append(measured[True][0])
            fast_wall.append(measured[False][1])
            old_wall.append(measured[True][1])
            same = same and measured[False][2:] == measured[True][2:]
            queries = measured[False][2]
        ours, first = statistics.median(fast), statistics.median(old)
        print(f"| {args.metric} | {args.classes} | {n:,} | {ours:.1f} | {first:.1f} | {first / ours:.1f}× | "
              f"{statistics.median(fast_wall):.1f} | {statistics.median(old_wall):.1f} | {queries} | "
              f"{'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
