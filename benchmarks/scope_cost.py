"""The honest cost of a team- or competition-scoped Ladder: how far the public board's order of honest models drifts
from their true (private) order, 1 − Kendall τ, with the Ladder kept per account, per team and for the whole board.

The board and the models are the ``scope`` game's (``games/files/scope.toml``): breast cancer's 171 held-out rows,
a 30 % public split, the 13 honest scikit-learn models, each submitting once. Behind one Ladder for the board a
model is released only if it beats the best released so far, so the result depends on the order the models
arrive in: the game's own order (the population's), then ``--orders`` seeded random orders (mean and range). A
model released nothing ranks last on the public board (as on the site: no score, no rank).

Team scope (``"scope": "team"`` on the same Ladder): the 13 models are put in teams of ``--team-sizes`` (2 and 3)
by their position in the population (models 0–1, 2–3, ... or 0–2, 3–5, ...; the last team is what is left), and
keep their team through every order; each team has one Ladder, as the site keeps one per team. τ is over the models,
as in the other rows (the site's board shows a team's best as its one row; the models ranked here are what its
members see released).

    .venv/bin/python -m benchmarks.scope_cost [--orders 200] [--seeds 0,1] [--team-sizes 2,3]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np

from attacks import LocalOracle
from games.gamefile import DefenseSpec, load_game
from games.population import Population, load_population
from games.runner import as_submitted, make_oracle, release_once
from games.utility import honest_utility
from scoring.parsing import ParsedPredictions, validate_array
from scoring.pipeline import raw_score
from scoring.release import States, release_submission

GAME = Path(__file__).resolve().parent.parent / "games" / "files" / "scope.toml"
CHAINS = ("ladder-parameter-free", "ladder-fixed-0.01")


def team_scoped(defense: DefenseSpec) -> DefenseSpec:
    """The account-scoped chain ``defense`` with its Ladder kept per team (``"scope": "team"``)."""
    chain = [{**entry, "scope": "team"} if entry["name"] == "ladder" else dict(entry) for entry in defense.chain]
    return replace(defense, name=f"{defense.name}-team", chain=chain)


def release_in_team(
    oracle: LocalOracle, predictions: np.ndarray, *, submission_id: str, split: str, team: dict[str, States]
) -> tuple[float | None, float]:
    """(released score or ``None``, raw score) of one first-and-only submission of a member of a team whose
    team-scoped state is ``team`` (updated in place), through the same ``release_submission`` the site's worker
    runs with a team's state."""
    parsed = ParsedPredictions(validate_array(np.asarray(predictions, dtype=np.float64), oracle.spec.submission_format))
    release = release_submission(oracle.spec, parsed, submission_id=submission_id, splits=(split,), team=team)
    if release.reject is not None:
        return None, float(raw_score(oracle.spec, parsed, oracle.spec.split_rows[split]))
    for metric, by_split in release.team.items():
        team.setdefault(metric, {}).update(by_split)
    result = release.primary[split]
    return result.released, float(result.raw)


def one_board(
    defense: str, seed: int, order: list[int], population: Population, team_size: int | None = None
) -> tuple[float, int]:
    """(1 − τ of the honest public board against the private truth, models released nothing) for one order; with
    ``team_size``, the account-scoped chain ``defense`` kept per team of that many models (by population position)."""
    spec = load_game(GAME)
    dataset = spec.datasets[0]
    chain = next(d for d in spec.defenses if d.name == defense)
    if team_size is not None:
        chain = team_scoped(chain)
    oracle = make_oracle(spec, dataset, population, chain, seed)
    names = list(population.predictions)
    shared_public: dict[str, States] = {}
    shared_private: dict[str, States] = {}
    team_public: dict[int, dict[str, States]] = {}
    team_private: dict[int, dict[str, States]] = {}
    released: dict[int, float | None] = {}
    raw_public: dict[int, float] = {}
    raw_private: dict[int, float] = {}
    for position in order:
        values = as_submitted(oracle, population.predictions[names[position]])
        if team_size is not None:
            team = position // team_size
            released[position], raw_public[position] = release_in_team(
                oracle, values, submission_id=f"honest-{position}", split="public",
                team=team_public.setdefault(team, {}))
            _, raw_private[position] = release_in_team(
                oracle, values, submission_id=f"honest-{position}-private", split="private",
                team=team_private.setdefault(team, {}))
            continue
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
    parser.add_argument("--team-sizes", default="2,3", help="team scope: teams of this many models (comma list)")
    args = parser.parse_args()
    spec = load_game(GAME)
    population = load_population(spec.datasets[0])
    n = len(population.predictions)
    sizes = [int(size) for size in args.team_sizes.split(",") if size.strip()]
    print("| chain | scope | seed | 1 − τ, game order | withheld, game order | 1 − τ, random orders: mean [min, max] | "
          "withheld, mean |")
    print("|---|---|---|---|---|---|---|")
    for base in CHAINS:
        scopes: list[tuple[str, str, int | None]] = [(base, "account", None)]
        scopes += [(base, f"team of {size}", size) for size in sizes]
        scopes.append((f"{base}-competition", "competition", None))
        for defense, scope, team_size in scopes:
            for seed in (int(s) for s in args.seeds.split(",")):
                game_cost, game_withheld = one_board(defense, seed, list(range(n)), population, team_size)
                rng = np.random.default_rng(seed)
                runs = [one_board(defense, seed, list(rng.permutation(n)), population, team_size)
                        for _ in range(args.orders)]
                costs = np.array([c for c, _ in runs])
                withheld = np.array([w for _, w in runs])
                print(f"| {base} | {scope} | {seed} | {game_cost:.3f} | {game_withheld}/{n} | {costs.mean():.3f} "
                      f"[{costs.min():.3f}, {costs.max():.3f}] | {withheld.mean():.1f}/{n} |", flush=True)


if __name__ == "__main__":
    main()
