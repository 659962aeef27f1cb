"""The attackers' own time: ``capacity`` against the code as first written, ``prime_batched``'s decode
against paper 000's Table 2.

``capacity`` (binary log loss, 5 released decimals, the default board) at N = 2,201 and 25,000: the
attacker's own CPU time — the thread's CPU time for the whole attack minus the CPU time spent inside the
oracle (``LocalOracle`` scoring and releasing each query) — median of ``--runs`` runs, each cold (every cache
emptied) on seeded random labels, beside the same attack with ``reference=True`` (the search and row terms
as first written) measured in the same run on the same labels; queries used and labels recovered for both
(they must be identical).

``prime_batched`` at paper 000's Table 2 setting for D1: N = 25,000, m = 5 (N/5 = 5,000 queries), float64
server releasing the full score; decode time as the attack reports it (the time spent decoding the released
scores), median of ``--runs``, with the memo on (default) and off (every batch decoded afresh), beside the
paper's 53.41 ms. The machine is shared: medians, and every baseline from the same run.

    .venv/bin/python -m benchmarks.attacker_speed [--runs 5] [--sizes 2201,25000] [--markdown]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from attacks import LocalOracle, run
from attacks.capacity import capacity_attack, decoder, design, search

PAPER_DECODE_MS = 53.41  # paper 000, Table 2, D1 (N = 25,000, N/5 queries)


class TimedOracle(LocalOracle):
    """A :class:`LocalOracle` that adds up the CPU time spent answering (scoring and releasing)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cpu = 0.0

    def submit_all(self, predictions: Any) -> Any:
        started = time.thread_time()
        try:
            return super().submit_all(predictions)
        finally:
            self.cpu += time.thread_time() - started


def clear_caches() -> None:
    """Empty every cache the capacity attack fills (either code path), so each run starts cold like a fresh
    process: runs on other labels share many candidate sets, which would flatter the later runs."""
    for function in (
        search.search_realization, search._searched_sets, search.search_realization_reference, decoder.row_terms,
        decoder.subset_sums, decoder.fresh_patterns, decoder.batch_row_error, decoder.free_row_error,
        design.top_weights, design.fresh_fill, design.all_patterns,
    ):
        function.cache_clear()


def capacity_once(n: int, seed: int, reference: bool) -> tuple[float, int, int]:
    """(attacker's own CPU seconds, queries, labels recovered) for one cold run on seeded random labels."""
    clear_caches()
    labels = np.random.default_rng(seed).integers(0, 2, n)
    oracle = TimedOracle(labels, decimals=5)
    started = time.thread_time()
    result = capacity_attack(oracle, check=False, reference=reference)
    total = time.thread_time() - started
    recovered = int((result.labels == labels).sum())
    return total - oracle.cpu, result.queries, recovered


def capacity_rows(sizes: Sequence[int], runs: int) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        fast: list[float] = []
        old: list[float] = []
        same = True
        queries: list[int] = []
        recovered: list[int] = []
        for run_index in range(runs):
            # Alternate which goes first, so neither always runs on a warmer (or busier) machine.
            order = (False, True) if run_index % 2 == 0 else (True, False)
            measured = {reference: capacity_once(n, run_index, reference) for reference in order}
            fast.append(measured[False][0])
            old.append(measured[True][0])
            same = same and measured[False][1:] == measured[True][1:]
            queries.append(measured[False][1])
            recovered.append(measured[False][2])
        rows.append({
            "n": n, "fast": statistics.median(fast), "old": statistics.median(old),
            "queries": statistics.median(queries), "recovered": min(recovered), "same": same,
        })
    return rows


def prime_decode_ms(runs: int) -> dict[str, float]:
    """Median decode milliseconds of ``prime_batched`` at Table 2's D1 setting, memo on and off."""
    labels = np.random.default_rng(1).integers(0, 2, 25_000)
    times: dict[str, list[float]] = {"memo": [], "fresh": []}
    for _ in range(runs):
        for name, memo in (("memo", True), ("fresh", False)):
            result = run("prime_batched", LocalOracle(labels, decimals=None), batch_size=5, memo=memo, confirm=False)
            assert result.queries == 5_000 and np.array_equal(result.labels, labels)
            times[name].append(1000 * result.details["decode_seconds"])
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="2201,25000")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = capacity_rows(sizes, args.runs)
    prime = prime_decode_ms(args.runs)
    if args.markdown:
        print("| attacker | N | ours (median) | code as first written, same run | queries | labels recovered |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| capacity, own CPU | {r['n']:,} | {r['fast']:.3f} s | {r['old']:.3f} s | {r['queries']:,.0f}"
                f"{'' if r['same'] else ' (DIFFER)'} | {r['recovered']:,} / {r['n']:,} |"
            )
        print(
            f"| prime_batched decode, m = 5 | 25,000 | {prime['memo']:.2f} ms | {prime['fresh']:.2f} ms "
            f"(paper 000: {PAPER_DECODE_MS} ms) | 5,000 | 25,000 / 25,000 |"
        )
        return
    print(f"capacity (binary log loss, 5 decimals), attacker's own CPU time, median of {args.runs} runs")
    for r in rows:
        print(
            f"  N = {r['n']:>6,}: ours {r['fast']:7.3f} s   as first written {r['old']:7.3f} s   "
            f"({r['old'] / max(r['fast'], 1e-9):.1f}x)   queries {r['queries']:,.0f} (median)   recovered (fewest) "
            f"{r['recovered']:,}/{r['n']:,}   identical queries and labels: {r['same']}"
        )
    print(f"prime_batched decode, N = 25,000, m = 5 (5,000 queries), float64 full score, median of {args.runs}")
    print(
        f"  memo {prime['memo']:.2f} ms   every batch afresh {prime['fresh']:.2f} ms   "
        f"paper 000 Table 2 (D1): {PAPER_DECODE_MS} ms"
    )


if __name__ == "__main__":
    main()
