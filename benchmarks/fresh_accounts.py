"""``auto`` given k accounts on Ladder boards, where every account's first submission is released unconditionally:
``fresh_accounts`` reads the board one account a query once the accounts suffice, else one account's Ladder
attack (or the best guess) plays as before.

Label vectors (none tuned to): scikit-learn's breast cancer (569 rows, 63 % benign), its digits as "digit < 5"
(1,797 rows, balanced), and a seeded 2,201-row vector with 68 % ones. Chains: the parameter-free Ladder, the fixed
Ladder at η = 0.01, and the README's ``combined`` chain (fresh randomized response 2 %, Laplace 1e-4,
parameter-free Ladder), 5 decimals; every row scored, or a 30 % public split. Each cell: labels right on the rows
the board scores (the public ones on a split), the exact labels and how many of them are wrong, the queries, and
the majority rate of those rows; beside it the information bound: the fewest first releases that could carry the
scored rows' labels (their entropy over the bits one release at the board's precision carries,
:func:`attacks.information.rounding_bits`; at the fixed Ladder's step for that chain).

    .venv/bin/python -m benchmarks.fresh_accounts [--accounts 1,2,30,100,1000] [--budget 5000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits

from attacks import LocalOracle, run
from attacks.information import accounts_needed
from scoring import public_split_mask

DECIMALS = 5
FRACTION = 0.3
CHAINS: dict[str, list[dict[str, object]]] = {
    "ladder-parameter-free": [{"name": "ladder", "mode": "parameter_free"}],
    "ladder-fixed-0.01": [{"name": "ladder", "mode": "fixed", "eta": 0.01}],
    "combined": [{"name": "randomized_response", "p": 0.02, "mode": "fresh"},
                 {"name": "noise", "kind": "laplace", "scale": 1e-4},
                 {"name": "ladder", "mode": "parameter_free"}],
}


def label_sets() -> dict[str, np.ndarray]:
    digits = load_digits().target
    return {
        "breast_cancer": load_breast_cancer().target.astype(np.int64),
        "digits<5": (digits < 5).astype(np.int64),
        "skewed_2201": (np.random.default_rng(2201).random(2201) < 0.68).astype(np.int64),
        "skewed_306": (np.random.default_rng(306).random(306) < 0.68).astype(np.int64),
    }


def first_release_bound(rows: int, chain: str, positives: int) -> int:
    """The fewest first releases that can carry the labels of ``rows`` scored rows (``positives`` of them 1)."""
    step = 0.01 if chain == "ladder-fixed-0.01" else None
    return accounts_needed(rows, positives / rows, step, DECIMALS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", default="1,2,30,100,1000")
    parser.add_argument("--budget", type=int, default=5000)
    parser.add_argument("--sets", default="breast_cancer,digits<5,skewed_2201,skewed_306")
    parser.add_argument("--chains", default=",".join(CHAINS))
    parser.add_argument("--splits", default="all,0.3")
    args = parser.parse_args()
    accounts = [int(a) for a in args.accounts.split(",")]
    sets = label_sets()
    cells: dict[tuple[str, str, int, float, int], dict[int, str]] = {}
    print("| labels | chain | rows scored | accounts | attack | labels right | exact (wrong) | queries | majority | "
          "first releases needed ≥ | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for set_name in args.sets.split(","):
        labels = sets[set_name]
        n = len(labels)
        for chain in args.chains.split(","):
            for split in args.splits.split(","):
                fraction = None if split == "all" else float(split)
                scored = np.ones(n, bool) if fraction is None else public_split_mask(n, fraction, 7)
                truth = labels[scored]
                majority = max(truth.mean(), 1 - truth.mean())
                bound = first_release_bound(int(scored.sum()), chain, int(truth.sum()))
                for k in accounts:
                    board = LocalOracle(labels, decimals=DECIMALS, defenses=CHAINS[chain], public_fraction=fraction,
                                        seed=7, accounts=k)
                    started = time.perf_counter()
                    result = run("auto", board, budget=args.budget)
                    seconds = time.perf_counter() - started
                    got = result.labels[scored]
                    exact = (got >= 0) & (result.fill_confidence()[scored] >= 1.0)
                    wrong = int((exact & (got != truth)).sum())
                    course = result.course
                    played = "?" if course is None else course.attack + (
                        f" → {course.fallback}" if course.fallback else "")
                    print(f"| {set_name} | {chain} | {int(scored.sum())} | {k:,} | {played} | "
                          f"{(got == truth).mean():.3f} | {int(exact.sum())} ({wrong}) | {result.queries:,} | "
                          f"{majority:.3f} | {bound:,} | {seconds:.1f} |", flush=True)
                    cells.setdefault((set_name, chain, int(scored.sum()), majority, bound), {})[k] = (
                        f"{(got == truth).mean():.3f} ({int(exact.sum())})")
    print()
    print(pivot(cells, accounts))


def pivot(cells: dict[tuple[str, str, int, float, int], dict[int, str]], accounts: list[int]) -> str:
    """One row per board, one column per account count: labels right on the scored rows (exact ones in brackets),
    beside the majority rate and the fewest first releases that could carry the labels."""
    head = " | ".join(f"{k:,} account{'s' if k > 1 else ''}" for k in accounts)
    lines = [f"| labels | chain | rows scored | majority | {head} | first releases needed ≥ |",
             "|---|---|---|---|" + "---|" * len(accounts) + "---|"]
    for (set_name, chain, rows, majority, bound), by_k in cells.items():
        row = " | ".join(by_k.get(k, "–") for k in accounts)
        lines.append(f"| {set_name} | {chain} | {rows} | {majority:.3f} | {row} | {bound:,} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
