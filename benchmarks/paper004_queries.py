"""Queries paper 004's attacks need to recover every label, against the counting bound.

For N in {306, 569, 2,201, 25,000} and a release of 5 decimals, 8 decimals or the full float64 value, each
attack's planner gives its batch size (labels per query) and so its query count; the attack is then run
against a ``LocalOracle`` on a seeded balanced labeling to confirm it recovers every label with exactly that
many queries (N = 25,000 only with ``--full``). The bound is FIELD_NOTES' "How much a score can carry":
``2^m ≤ m·M + 1`` with ``M = A/(N·δ)``, ``A = ln((1-eps)/eps)``, ``δ = 10^-d`` (float64: an error of 1e-10 on the
summed loss, ``M = A/1e-10``). It bounds one released log loss; ``auc_logloss`` also reads an AUC, so its
column can beat it. ``auc_logloss_ranks`` (the AUC also codes rows by rank) is adaptive, so it is run, not
planned, and its labels per query is the median over its queries.

    .venv/bin/python -m benchmarks.paper004_queries [--full]
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from attacks import LocalOracle, run
from attacks.paper004 import auc, binary, twin
from attacks.paper004.server import ServerModel
from attacks.planning import largest_feasible
from attacks.result import AttackFailed

SIZES = (306, 569, 2_201, 25_000)
PRECISIONS: dict[str, int | None] = {"5 decimals": 5, "8 decimals": 8, "float64": None}
ATTACKS = ("twin_primes", "binary_representation", "auc_logloss", "auc_logloss_ranks")
ADAPTIVE = ("auc_logloss_ranks",)  # its batches depend on what is decoded: measured, never planned
EPS = 1e-15


@dataclass(frozen=True)
class Row:
    attack: str
    n_rows: int
    precision: str
    labels_per_query: int | None  # None: infeasible
    queries: int | None
    bound_labels_per_query: int
    bound_queries: int
    measured: str  # "ok (q queries, s s)", "planned", or why it is infeasible

    @property
    def share_of_bound(self) -> float | None:
        """Bound queries / our queries: 1.0 means the attack meets the bound."""
        return None if self.queries is None else self.bound_queries / self.queries


def bound_labels_per_query(n_rows: int, decimals: int | None, eps: float = EPS) -> int:
    """The largest ``m`` with ``2^m ≤ m·M + 1`` (FIELD_NOTES, "How much a score can carry")."""
    a = math.log((1 - eps) / eps)
    m_scale = a / 1e-10 if decimals is None else a / (n_rows * 10.0**-decimals)
    m = 1
    while 2.0 ** (m + 1) <= (m + 1) * m_scale + 1:
        m += 1
    return m


def balanced_labels(n_rows: int, seed: int = 4) -> np.ndarray:
    labels = np.zeros(n_rows, dtype=np.int64)
    labels[: n_rows // 2] = 1
    return np.random.default_rng(seed).permutation(labels)


def _oracle(labels: np.ndarray, decimals: int | None, attack: str) -> LocalOracle:
    also = ("auc",) if attack.startswith("auc_logloss") else ()
    return LocalOracle(labels, decimals=decimals, eps=EPS, also_report=also)


def planned_queries(attack: str, labels: np.ndarray, decimals: int | None) -> tuple[int, int]:
    """(labels per query, queries) from the attack's own planner; raises AttackFailed when infeasible."""
    n = len(labels)
    model = ServerModel.of(_oracle(labels, decimals, attack))
    if attack == "auc_logloss":
        positives = int(labels.sum())
        full = auc.plan(model, positives, n)
        queries, start = 1, 0  # the first probe counts the positives
        while start < n:  # the attack's own loop: full batches, then plans for what is left
            rows = min(n - start, full.size)
            size = full.size if rows == full.size else auc.plan(model, positives, rows).size
            start, queries = start + size, queries + 1
        return full.size, queries
    feasible = twin.batch_is_decodable if attack == "twin_primes" else binary.batch_is_decodable
    size = largest_feasible(n, lambda b: feasible(model, b))
    if size == 0:
        one_row = twin.batch_tolerance(model, (5,)) if attack == "twin_primes" else binary.batch_tolerance(model, 1)
        needed = math.log(6 / 5) / 2 if attack == "twin_primes" else math.log(2) / 2
        raise AttackFailed(f"one row needs the summed loss to ±{needed:.3g}, the release gives ±{float(one_row):.3g}")
    return size, -(-n // size)


def rows(*, full: bool = False, sizes: tuple[int, ...] = SIZES) -> list[Row]:
    """One row per attack × N × precision; runs the attack where ``full`` or N ≤ 2,201."""
    table: list[Row] = []
    for n in sizes:
        labels = balanced_labels(n)
        for precision, decimals in PRECISIONS.items():
            bound_m = bound_labels_per_query(n, decimals)
            bound_q = -(-n // bound_m)
            for attack in ATTACKS:
                if attack in ADAPTIVE:
                    table.append(measured_row(attack, labels, precision, decimals, bound_m, bound_q, full))
                    continue
                try:
                    per_query, queries = planned_queries(attack, labels, decimals)
                except AttackFailed as exc:
                    reason = "infeasible: " + str(exc).split(": ", 1)[-1]
                    table.append(Row(attack, n, precision, None, None, bound_m, bound_q, reason))
                    continue
                measured = "planned"
                if full or n <= 2_201:
                    started = time.perf_counter()
                    result = run(attack, _oracle(labels, decimals, attack), confirm=False)
                    seconds = time.perf_counter() - started
                    assert (result.labels == labels).all(), f"{attack} mis-decoded N={n} {precision}"
                    assert result.queries == queries, f"{attack}: {result.queries} queries, planned {queries}"
                    measured = f"ok, {seconds:.1f} s"
                table.append(Row(attack, n, precision, per_query, queries, bound_m, bound_q, measured))
    return table


def measured_row(
    attack: str, labels: np.ndarray, precision: str, decimals: int | None, bound_m: int, bound_q: int, full: bool
) -> Row:
    """An adaptive attack's row: run it (N ≤ 2,201 unless ``full``); labels per query is the median batch."""
    n = len(labels)
    if not (full or n <= 2_201):
        return Row(attack, n, precision, None, None, bound_m, bound_q, "not run (adaptive: --full)")
    started = time.perf_counter()
    try:
        result = run(attack, _oracle(labels, decimals, attack), confirm=False)
    except AttackFailed as exc:
        return Row(attack, n, precision, None, None, bound_m, bound_q, "infeasible: " + str(exc).split(": ", 1)[-1])
    seconds = time.perf_counter() - started
    assert (result.labels == labels).all(), f"{attack} mis-decoded N={n} {precision}"
    per_query = int(np.median(result.details["labels_per_query"]))
    return Row(attack, n, precision, per_query, result.queries, bound_m, bound_q, f"ok, {seconds:.1f} s")


def format_table(table: list[Row]) -> str:
    header = (
        f"{'attack':<22} {'N':>6} {'release':<10} {'labels/q':>8} {'queries':>8} "
        f"{'bound l/q':>9} {'bound q':>8} {'bound/ours':>10}  run"
    )
    lines = [header, "-" * len(header)]
    for r in table:
        per_q = "-" if r.labels_per_query is None else str(r.labels_per_query)
        queries = "-" if r.queries is None else str(r.queries)
        share = "-" if r.share_of_bound is None else f"{r.share_of_bound:.0%}"
        lines.append(
            f"{r.attack:<22} {r.n_rows:>6} {r.precision:<10} {per_q:>8} {queries:>8} "
            f"{r.bound_labels_per_query:>9} {r.bound_queries:>8} {share:>10}  {r.measured}"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also run the attacks at N = 25,000 (about a minute)")
    args = parser.parse_args()
    print(format_table(rows(full=args.full)))


if __name__ == "__main__":
    main()
