"""``brep`` (paper 002, boundary repulsion) against ``boosting`` (Blum & Hardt) on boards that release only a
hard label, on the same query budget.

The hidden set is a seeded balanced 0/1 vector of ``--rows`` rows (default 8,000) with a public split of one
half (4,000 public rows: FIELD_NOTES' n = 4,000); the metric is accuracy (FIELD_NOTES' 0/1 loss). Boards:

* ``ladder``: the parameter-free Ladder releasing only its accept/reject decision;
* ``threshold``: a badge for beating 0.5 accuracy (``threshold``, t = 0.5);
* ``medal``: a badge for beating 0.51 (about 1.3 standard deviations of a coin at 4,000 rows).

For each board, attack and budget: the public accuracy of the attacker's labels, the private accuracy (rows the
board never scored: fresh data) and the public–private gap, each a mean over ``--runs`` seeds (± the standard
deviation). A second table sweeps ``brep``'s N, R0 and γ on the threshold board at one budget.

    .venv/bin/python -m benchmarks.hard_label [--rows 8000] [--runs 5] [--budgets 100,200,400,800]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import attacks
from attacks import AttackFailed, LocalOracle

BOARDS: dict[str, list[dict[str, Any]]] = {
    "ladder": [{"name": "ladder", "mode": "parameter_free"}, {"name": "accept_reject"}],
    "threshold": [{"name": "threshold", "t": 0.5}],
    "medal": [{"name": "threshold", "t": 0.51}],
}
ATTACKS: dict[str, tuple[str, dict[str, Any]]] = {
    "boosting": ("boosting", {}),
    "brep (paper: N=32)": ("brep", {}),
    "brep N=8": ("brep", {"n_samples": 8}),
    "brep N=4": ("brep", {"n_samples": 4}),
}
SWEEP = [
    {"n_samples": n, "r0": r0, "gamma": gamma}
    for n in (4, 8, 32) for r0 in (0.5, 2.0, 8.0) for gamma in (1.1, 1.3, 2.0)
]


def play(hidden: np.ndarray, board: list[dict[str, Any]], attack: str, params: dict[str, Any], budget: int,
         seed: int) -> tuple[float, float] | None:
    """Public and private accuracy of one run (``None``: the attack failed, e.g. no accepted start)."""
    oracle = LocalOracle(hidden, metric="accuracy", decimals=5, defenses=board, public_fraction=0.5, seed=seed)
    try:
        result = attacks.run(attack, oracle, seed=seed, budget=budget, **params)
    except AttackFailed:
        return None
    public = oracle.spec.hidden.public_mask
    return (float((result.labels[public] == hidden[public]).mean()),
            float((result.labels[~public] == hidden[~public]).mean()))


def summary(outcomes: list[tuple[float, float] | None]) -> str:
    done = [o for o in outcomes if o is not None]
    if not done:
        return f"{'failed':>15} {'':>15} {'':>15}"
    public = np.array([o[0] for o in done])
    private = np.array([o[1] for o in done])
    gap = public - private
    failed = f" ({len(outcomes) - len(done)} failed)" if len(done) < len(outcomes) else ""
    return (f"{public.mean():.3f} ± {public.std():.3f}  {private.mean():.3f} ± {private.std():.3f}  "
            f"{gap.mean():+.3f} ± {gap.std():.3f}{failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=8000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budgets", default="100,200,400,800")
    parser.add_argument("--sweep-budget", type=int, default=400)
    parser.add_argument("--boards", default=",".join(BOARDS))
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    hidden = np.random.default_rng(4000).integers(0, 2, args.rows)
    print(f"{args.rows:,} rows (half public), accuracy, mean ± sd over {args.runs} runs")
    print(f"{'board':<10} {'attack':<19} {'queries':>7}  {'public acc':>15} {'private acc':>15} {'gap':>15}")
    for board in args.boards.split(","):
        started = time.perf_counter()
        for label, (attack, params) in ATTACKS.items():
            for budget in budgets:
                outcomes = [play(hidden, BOARDS[board], attack, params, budget, seed) for seed in range(args.runs)]
                print(f"{board:<10} {label:<19} {budget:>7}  {summary(outcomes)}", flush=True)
        print(f"  ({board}: {time.perf_counter() - started:.0f} s)")
    print(f"\nbrep sweep on the threshold board, {args.sweep_budget} queries")
    print(f"{'N':>3} {'R0':>4} {'gamma':>5}  {'public acc':>15} {'private acc':>15} {'gap':>15}")
    for params in SWEEP:
        outcomes = [play(hidden, BOARDS["threshold"], "brep", params, args.sweep_budget, seed)
                    for seed in range(args.runs)]
        print(f"{params['n_samples']:>3} {params['r0']:>4} {params['gamma']:>5}  {summary(outcomes)}", flush=True)


if __name__ == "__main__":
    main()
