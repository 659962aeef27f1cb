"""The honest cost of a competition-scoped Ladder: how far the public board's order of honest models drifts from
their true (private) order, 1 − Kendall τ, with the Ladder kept per account and kept for the whole board.

The board and the models are the ``scope`` game's (``games/files/scope.toml``): breast cancer's 171 held-out rows,
a 30 % public split, the 13 honest scikit-learn models, each submitting once. Behind one Ladder for the board a
model is released only if it beats the best released so far, so the result depends on the order the models
arrive in: the game's own order (the population's), then ``--orders`` seeded random orders (mean and range). A
model released nothing ranks last on the public board (as on the site: no score, no rank).

    .venv/bin/python -m benchmarks.scope_cost [--orders 200] [--seeds 0,1]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from games.gamefile import load_game
from games.population import Population, load_population
from games.runner import as_submitted, make_oracle, release_once
from games.utility import honest_utility
from scoring.release import States

GAME = Path(__file__).resolve().parent.parent / "games" / "files" / "scope.toml"
CHAINS = ("ladder-parameter-free", "ladder-fixed-0.01")


def one_board(defense: str, seed: int, order: list[int], population: Population) -> tuple[float, int]:
    """(1 − τ of the honest public board against the private truth, models released nothing) for one order."""
    spec = load_game(GAME)
    dataset = spec.datasets[0]
    chain = next(d for d in spec.defenses if d.name == defense)
    oracle = make_oracle(spec, dataset, population, chain, seed)
    names = list(population.predictions)
    shared_public: dict[str, States] = {}
    shared_private: dict[str, States] = {}
    released: dict[int, float | None] = {}
    raw_public: dict[int, float] = {}
    raw_private: dict[int, float] = {}
    for position in order:
        values = as_submitted(oracle, population.predictions[names[position]])
        released[position], raw_public[position], _ = release_once(
            oracle, values, submission_id=f"honest-{position}", split="public", shared=shared_public)
        _, raw_private[position], _ = release_once(
            oracle, values, submission_id=f"honest-{position}-private", split="private", shared=shared_private)
    keys = sorted(released)
    utility = honest_utility(
        released_public=[released[k] for k in keys], raw_public=[raw_public[k] for k in keys],
        raw_private=[raw_private[k] for k in keys], higher_is_better=False,
    )
    return 1 - utility.kendall_tau, utility.withheld


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--orders", type=int, default=200)
    parser.add_argument("--seeds", default="0,1")
    args = parser.parse_args()
    spec = load_game(GAME)
    population = load_population(spec.datasets[0])
    n = len(population.predictions)
    print("| chain | scope | seed | 1 − τ, game order | withheld, game order | 1 − τ, random orders: mean [min, max] | "
          "withheld, mean |")
    print("|---|---|---|---|---|---|---|")
    for base in CHAINS:
        for defense, scope in ((base, "account"), (f"{base}-competition", "competition")):
            for seed in (int(s) for s in args.seeds.split(",")):
                game_cost, game_withheld = one_board(defense, seed, list(range(n)), population)
                rng = np.random.default_rng(seed)
                runs = [one_board(defense, seed, list(rng.permutation(n)), population) for _ in range(args.orders)]
                costs = np.array([c for c, _ in runs])
                withheld = np.array([w for _, w in runs])
                print(f"| {base} | {scope} | {seed} | {game_cost:.3f} | {game_withheld}/{n} | {costs.mean():.3f} "
                      f"[{costs.min():.3f}, {costs.max():.3f}] | {withheld.mean():.1f}/{n} |", flush=True)


if __name__ == "__main__":
    main()
