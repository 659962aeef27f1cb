"""The ``subsetting`` and ``randomized_response`` attacks (and ``capacity`` under fixed flips) beside the
information bound.

For each data set (breast cancer's 171-row test split from ``games.population``, seeded 2,201-row vectors with
Titanic's balance 711/2201, optionally 25,000 balanced rows) and each label-side defense at 5 released
decimals: label accuracy, submissions used, the per-query bound of :mod:`attacks.information` (``f × C`` for
subsetting, ``(1−2p)² × C`` for fresh flips, ``C`` for fixed flips, ``C`` the rounding bound), the fewest
submissions it allows (``N·h(π)/bound``), the ratio used/fewest, the wall time, and a note: the subset
design (ternary + heavy rows per query), the observations per row of the fresh-flip vote, or for fixed flips
the share of labels the defense flipped (the attack recovers the flipped labels exactly; ``1 − share`` is the
ceiling fixed randomized response promises). ``--auto B`` also plays ``auto`` with budget ``B`` and prints
its accuracy beside the majority-class rate.

    .venv/bin/python -m benchmarks.subset_rr_attacks [--sizes 171,2201,25000] [--defenses ...] [--auto 0]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import attacks
from attacks import LocalOracle
from attacks import information as info

DEFENSES: dict[str, tuple[str, dict[str, Any], bool]] = {
    # name: (attack, defense, same_file_same_score)
    "subsetting 0.9": ("subsetting", {"name": "subsetting", "fraction": 0.9}, False),
    "subsetting 0.9 sfss": ("subsetting", {"name": "subsetting", "fraction": 0.9}, True),
    "subsetting 0.5": ("subsetting", {"name": "subsetting", "fraction": 0.5}, False),
    "subsetting 0.5 sfss": ("subsetting", {"name": "subsetting", "fraction": 0.5}, True),
    "fresh RR 0.05": ("randomized_response", {"name": "randomized_response", "p": 0.05, "mode": "fresh"}, False),
    "fresh RR 0.2": ("randomized_response", {"name": "randomized_response", "p": 0.2, "mode": "fresh"}, False),
    "fixed RR 0.05": ("capacity", {"name": "randomized_response", "p": 0.05, "mode": "fixed"}, False),
    "fixed RR 0.2": ("capacity", {"name": "randomized_response", "p": 0.2, "mode": "fixed"}, False),
}


def labels_for(size: int, seed: int) -> tuple[str, np.ndarray]:
    if size == 171:
        from games.population import honest_population

        return "breast cancer", honest_population(seed=seed).labels
    balance = 711 / 2201 if size == 2201 else 0.5
    return f"seeded {size:,}", (np.random.default_rng(seed).random(size) < balance).astype(np.int64)


def bound_bits(defense: dict[str, Any], n: int) -> float:
    base = info.rounding_bits(n, 5)
    if defense["name"] == "subsetting":
        return info.subsetting_bits(float(defense["fraction"]), base)
    if defense["mode"] == "fresh":
        return info.randomized_response_bits(float(defense["p"]), base)
    return base  # fixed flips: the board releases its flipped labels through rounding alone


def note_for(result: attacks.AttackResult, y: np.ndarray) -> str:
    d = result.details
    if result.attack == "subsetting":
        lo, hi = d["subset_size"]
        size = f"m={lo}" if lo == hi else f"m in [{lo}, {hi}]"
        return f"{d['design']['ternary']}+{d['design']['heavy']} rows/query, {size}"
    if result.attack == "randomized_response":
        return f"p̂={d['flip_rate']:.3f}, {d['observations_per_row']:.1f} obs/row, K={d['group_rows']}"
    return f"flipped share {float((result.labels != y).mean()):.4f} (ceiling 1 − share)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="171,2201")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--defenses", default=",".join(DEFENSES))
    parser.add_argument("--auto", type=int, default=0, help="also play auto with this budget (0: not)")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    header = ["data", "defense", "attack", "accuracy", "queries", "bound bits/q", "fewest queries", "ratio",
              "seconds", "note"]
    if args.auto:
        header += [f"auto@{args.auto}", "majority"]
    sep = " | " if args.markdown else "  "
    print(sep.join(header))
    if args.markdown:
        print("|".join("---" for _ in header))
    for size in (int(s) for s in args.sizes.split(",")):
        data, y = labels_for(size, args.seed)
        balance = float(np.mean(y))
        for name in args.defenses.split(","):
            attack, defense, same_file = DEFENSES[name]

            def board(y: np.ndarray = y, defense: dict[str, Any] = defense, same_file: bool = same_file
                      ) -> LocalOracle:
                return LocalOracle(y, decimals=5, defenses=[defense], same_file_same_score=same_file,
                                   seed=100 + args.seed)

            started = time.perf_counter()
            result = attacks.run(attack, board())
            seconds = time.perf_counter() - started
            bits = bound_bits(defense, len(y))
            fewest = info.queries_lower_bound(len(y), bits, balance)
            row = [data, name, attack, f"{result.accuracy(y):.4f}", str(result.queries), f"{bits:.1f}",
                   f"{fewest:.0f}", f"{result.queries / fewest:.1f}", f"{seconds:.1f}", note_for(result, y)]
            if args.auto:
                auto = attacks.run("auto", board(), budget=args.auto)
                row += [f"{auto.accuracy(y):.4f}", f"{max(balance, 1 - balance):.4f}"]
            print(sep.join(row), flush=True)


if __name__ == "__main__":
    main()
