"""``auto`` against the majority class, ``brep`` and ``boosting`` on boards that release only a hard label.

The headline board: 2,201 rows, 1,490 of class 0 (67.7 %, the share of a well-known 2,201-passenger survival
table, shuffled per seed), half of them public, the parameter-free Ladder releasing only its accept/reject
decision, 800 queries, 5 decimals, binary log loss (``--metric accuracy``: accuracy, and the badge at 0.5). The
same labels are also played with every row scored and behind an own-rank board and a badge (log loss below 17:
right at the edge on more than half the rows), and a balanced variant, and ``auto`` once more with a spare
account (the floor's constants and check go there; ``brep`` and ``boosting`` play one account). For each: the
accuracy on the public and on the private rows of ``auto``, of the public rows' majority class (what two constant
vectors read), of ``brep`` and of ``boosting`` (each given the whole budget), mean ± sd over ``--runs`` seeds, and
``auto``'s mean queries (every account's).

    .venv/bin/python -m benchmarks.hard_label_floor [--runs 3] [--rows 2201] [--budget 800] [--metric accuracy]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import attacks
from attacks import AttackFailed, LocalOracle

LADDER = [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}]
BOARDS: list[tuple[str, list[dict[str, Any]], float | None, int]] = [
    ("ladder accept/reject, 50 % public", LADDER, 0.5, 1),
    ("ladder accept/reject, every row", LADDER, None, 1),
    ("  the same, 2 accounts", LADDER, None, 2),
    ("own rank, every row", [{"name": "rank"}], None, 1),
    ("badge (log loss < 17), every row", [{"name": "threshold", "t": 17.0}], None, 1),
]


def _labels(rows: int, share: float | None, seed: int) -> np.ndarray:
    rng = np.random.default_rng([2201, seed])  # not the attacks' own generators (default_rng(seed))
    if share is None:
        return rng.integers(0, 2, rows)
    return rng.permutation(np.where(np.arange(rows) < round(share * rows), 0, 1))


def _split_accuracy(labels: np.ndarray, truth: np.ndarray, public: np.ndarray) -> tuple[float, float]:
    private = ~public
    pub = float((labels[public] == truth[public]).mean())
    priv = float((labels[private] == truth[private]).mean()) if private.any() else float("nan")
    return pub, priv


def play(truth: np.ndarray, chain: list[dict[str, Any]], split: float | None, budget: int,
         seed: int, accounts: int = 1, metric: str = "binary_logloss") -> dict[str, tuple[float, float]]:
    """Public and private accuracy per player on one seeded board (``nan`` where an attack failed)."""
    out: dict[str, tuple[float, float]] = {}
    public = LocalOracle(truth, defenses=chain, public_fraction=split, seed=seed).spec.hidden.public_mask
    majority = int(np.argmax(np.bincount(truth[public], minlength=2)))
    out["majority"] = _split_accuracy(np.full(len(truth), majority), truth, public)
    for name in ("auto", "brep", "boosting"):
        oracle = LocalOracle(truth, metric=metric, decimals=5, defenses=chain, public_fraction=split, seed=seed,
                             accounts=accounts if name == "auto" else 1)
        try:
            result = attacks.run(name, oracle, budget=budget, seed=seed)
        except AttackFailed:
            out[name] = (float("nan"), float("nan"))
            continue
        out[name] = _split_accuracy(np.asarray(result.labels), truth, public)
        if name == "auto":
            out["auto queries"] = (float(oracle.queries), float("nan"))
    return out


def _cell(values: list[float]) -> str:
    arr = np.array(values, dtype=np.float64)
    if np.isnan(arr).all():
        return f"{'—':>13}"
    done = arr[~np.isnan(arr)]
    failed = "" if len(done) == len(arr) else "*"
    return f"{done.mean():.3f} ± {done.std():.3f}{failed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2201)
    parser.add_argument("--share", type=float, default=1490 / 2201)
    parser.add_argument("--budget", type=int, default=800)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--metric", default="binary_logloss", choices=("binary_logloss", "accuracy"))
    args = parser.parse_args()
    players = ("auto", "majority", "brep", "boosting")
    print(f"{args.rows:,} rows, {args.budget} queries, 5 decimals, {args.metric}; accuracy on the public / private "
          f"rows, mean ± sd over {args.runs} seeds (* some runs failed: the mean of the others)")
    for balance, share in ((f"{args.share:.1%} class 0", args.share), ("balanced", None)):
        print(f"\n{balance}")
        print(f"{'board':<36} {'split':<8} " + " ".join(f"{p:>15}" for p in players) + f" {'auto queries':>13}")
        for label, chain, split, accounts in BOARDS:
            started = time.perf_counter()
            if args.metric == "accuracy" and chain[0]["name"] == "threshold":
                chain = [{"name": "threshold", "t": 0.5}]  # the same badge: right on more than half the rows
                label = "badge (accuracy > 0.5), every row"
            runs = [play(_labels(args.rows, share, seed), chain, split, args.budget, seed, accounts, args.metric)
                    for seed in range(args.runs)]
            for index, part in enumerate(("public", "private")):
                if split is None and part == "private":
                    continue
                cells = [_cell([run[p][index] for run in runs]) for p in players]
                queries = np.mean([run["auto queries"][0] for run in runs]) if index == 0 else float("nan")
                shown = f"{queries:>13.0f}" if index == 0 else ""
                name = label if index == 0 else ""
                print(f"{name:<36} {'all' if split is None else part:<8} " + " ".join(f"{c:>15}" for c in cells)
                      + f" {shown}", flush=True)
            print(f"{'':<36} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
