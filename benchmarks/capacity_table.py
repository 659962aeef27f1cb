"""Labels per query of the ``capacity`` attack against the counting bound and the classic designs.

For N in {306, 569, 2,201, 25,000} and a release of 5 decimals, 8 decimals or the full float64 value:
the counting bound of FIELD_NOTES (``2^m <= m·M + 1``), the labels per query of scaled powers of two and of
Conway–Guy sets (one-shot distinct subset sums at the same resolution), and ours — measured on seeded random
labelings through ``LocalOracle`` (mean over ``--runs``) and on the adversarial ones (all zeros, all ones,
alternating, one positive), with the design queries, the total queries for full recovery (design + the one
verification query) and the wall time, both for the random labelings.

    .venv/bin/python -m benchmarks.capacity_table [--runs 3] [--sizes 306,569,2201,25000] [--markdown]

``capacity_rows()`` returns the rows (dicts) for a combined table of every attack vs the bound.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

from attacks import LocalOracle
from attacks.capacity import capacity_attack, capacity_split_attack
from attacks.capacity.design import conway_guy_per_query, counting_bound, powers_of_two_per_query

SIZES = (306, 569, 2201, 25000)
PRECISIONS: tuple[int | None, ...] = (5, 8, None)


@dataclass
class CapacityRow:
    n: int
    precision: str
    bound: int
    powers_of_two: int
    conway_guy: int
    ours: float
    ours_min: float
    fraction_of_bound: float
    adversarial: float
    adversarial_min: float
    design_queries: float
    total_queries: float
    seconds: float
    all_recovered: bool


def precision_name(decimals: int | None) -> str:
    return "float64" if decimals is None else f"{decimals} decimals"


def adversarial_labelings(n: int) -> dict[str, np.ndarray]:
    """All zeros, all ones, alternating, and one positive row."""
    one = np.zeros(n, dtype=np.int64)
    one[n // 3] = 1
    return {
        "zeros": np.zeros(n, dtype=np.int64),
        "ones": np.ones(n, dtype=np.int64),
        "alternating": np.arange(n, dtype=np.int64) % 2,
        "one_positive": one,
    }


def measure(n: int, decimals: int | None, runs: int, seed: int = 0) -> CapacityRow:
    """Run the attack ``runs`` times on seeded random labelings of ``n`` rows."""
    rates: list[float] = []
    design: list[int] = []
    total: list[int] = []
    seconds: list[float] = []
    ok = True
    for run in range(runs):
        labels = np.random.default_rng(seed + run).integers(0, 2, n)
        oracle = LocalOracle(labels, decimals=decimals)
        started = time.perf_counter()
        result = capacity_attack(oracle)
        seconds.append(time.perf_counter() - started)
        ok = ok and bool(np.array_equal(result.labels, labels))
        design.append(result.details["design_queries"])
        total.append(result.queries)
        rates.append(n / result.details["design_queries"])
    adversarial_rates: list[float] = []
    for labels in adversarial_labelings(n).values():
        result = capacity_attack(LocalOracle(labels, decimals=decimals), check=False)
        ok = ok and bool(np.array_equal(result.labels, labels))
        adversarial_rates.append(n / result.details["design_queries"])
    bound = counting_bound(n, decimals)
    return CapacityRow(
        n=n,
        precision=precision_name(decimals),
        bound=bound,
        powers_of_two=powers_of_two_per_query(n, decimals),
        conway_guy=conway_guy_per_query(n, decimals),
        ours=float(np.mean(rates)),
        ours_min=float(np.min(rates)),
        fraction_of_bound=float(np.mean(rates)) / bound,
        adversarial=float(np.mean(adversarial_rates)),
        adversarial_min=float(np.min(adversarial_rates)),
        design_queries=float(np.mean(design)),
        total_queries=float(np.mean(total)),
        seconds=float(np.mean(seconds)),
        all_recovered=ok,
    )


def capacity_rows(
    sizes: tuple[int, ...] = SIZES, precisions: tuple[int | None, ...] = PRECISIONS, runs: int = 3
) -> list[dict[str, object]]:
    """The table's rows as dicts (for a combined "every attack vs the counting bound" table)."""
    return [asdict(measure(n, d, runs if n < 25000 else 1)) for d in precisions for n in sizes]


HEADER = (
    "| N | precision | bound | powers of 2 | Conway–Guy | ours: random (mean) | random (min) | % of bound | "
    "adversarial (mean) | adversarial (min) | queries (design) | queries (total) | seconds |"
)


def format_row(row: dict[str, object]) -> str:
    return (
        f"| {row['n']:,} | {row['precision']} | {row['bound']} | {row['powers_of_two']} | {row['conway_guy']} | "
        f"{row['ours']:.2f} | {row['ours_min']:.2f} | {100 * float(row['fraction_of_bound']):.1f} | "  # type: ignore[arg-type]
        f"{row['adversarial']:.2f} | {row['adversarial_min']:.2f} | "
        f"{row['design_queries']:.1f} | {row['total_queries']:.1f} | {row['seconds']:.2f} |"
    )


def split_estimate(n: int, n_public: int, eps: float, window: float) -> float:
    """Queries if each carried ``log2(A / window)`` bits of the ``log2(C(N, n_pub)·2^n_pub)`` needed."""
    bits = (math.lgamma(n + 1) - math.lgamma(n_public + 1) - math.lgamma(n - n_public + 1)) / math.log(2)
    return (bits + n_public) / math.log2(math.log((1 - eps) / eps) / window)


def split_rows(sizes: tuple[int, ...] = (306, 569, 2201), fraction: float = 0.3) -> list[dict[str, object]]:
    """``capacity_split`` at 5 decimals on a public split: queries against the information estimate
    ``log2(C(N, n_pub)·2^n_pub) / log2(A / window)`` and recovery."""
    rows: list[dict[str, object]] = []
    for n in sizes:
        labels = np.random.default_rng(n).integers(0, 2, n)
        oracle = LocalOracle(labels, decimals=5, public_fraction=fraction, seed=1)
        started = time.perf_counter()
        result = capacity_split_attack(oracle)
        mask = oracle.spec.hidden.public_mask
        rows.append(
            {
                "n": n,
                "n_public": int(mask.sum()),
                "queries": result.queries,
                "design_queries": result.details["design_queries"],
                "estimate": split_estimate(n, int(mask.sum()), oracle.eps, result.details["window"]),
                "largest_carried": result.details["largest_carried"],
                "exact": bool(
                    np.array_equal(result.details["public_mask"], mask)
                    and np.array_equal(result.labels, np.where(mask, labels, -1))
                ),
                "seconds": time.perf_counter() - started,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="seeded random labelings per cell (1 at N = 25,000)")
    parser.add_argument("--sizes", default=",".join(str(n) for n in SIZES))
    args = parser.parse_args(argv)
    sizes = tuple(int(s) for s in args.sizes.split(","))
    print(HEADER)
    print("|" + "---|" * 13)
    failed = False
    for decimals in PRECISIONS:
        for n in sizes:
            row = asdict(measure(n, decimals, args.runs if n < 25000 else 1))
            failed = failed or not row["all_recovered"]
            print(format_row(row), flush=True)
    print()
    print("capacity_split, 5 decimals, 30 % public split (labels for public rows + the public mask):")
    print("| N | public rows | queries | design queries | information estimate | largest carried set | exact | s |")
    print("|" + "---|" * 8)
    for split in split_rows(tuple(n for n in sizes if n < 25000)):
        failed = failed or not split["exact"]
        print(
            f"| {split['n']:,} | {split['n_public']} | {split['queries']} | {split['design_queries']} | "
            f"{split['estimate']:.0f} | {split['largest_carried']} | {split['exact']} | {split['seconds']:.2f} |"
        )
    if failed:
        print("some labeling was not fully recovered", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
