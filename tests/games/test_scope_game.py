"""The honest side of a competition-scoped Ladder in a game: one Ladder for the board releases a model only when it
beats the best released so far; per account, every model's one submission is released."""

from __future__ import annotations

from pathlib import Path

import pytest

from games.gamefile import load_game
from games.population import load_population
from games.runner import play_honest

GAME = Path(__file__).resolve().parents[2] / "games" / "files" / "scope.toml"


@pytest.mark.parametrize("chain", ["ladder-parameter-free", "ladder-fixed-0.01"])
def test_a_board_ladder_releases_only_the_honest_models_that_beat_the_best_so_far(chain: str) -> None:
    spec = load_game(GAME)
    dataset = spec.datasets[0]
    population = load_population(dataset)
    defenses = {d.name: d for d in spec.defenses}
    per_account = play_honest(spec, dataset, population, defenses[chain], 0)
    shared = play_honest(spec, dataset, population, defenses[f"{chain}-competition"], 0)
    assert per_account.utility.withheld == 0
    released = [p for p in shared.participants if p.released_public is not None]
    assert 1 <= len(released) < len(shared.participants)
    # In arrival order, each released model beats every model before it on the public rows.
    best = float("inf")
    for participant in shared.participants:
        if participant.released_public is not None:
            assert participant.raw_public < best
        best = min(best, participant.raw_public) if participant.released_public is not None else best
    assert shared.participants[0].released_public is not None  # the first submission meets an empty board


def test_the_budget_chains_of_the_scope_game_release_every_honest_model() -> None:
    spec = load_game(GAME)
    dataset = spec.datasets[0]
    population = load_population(dataset)
    for defense in spec.defenses:
        if defense.name.startswith("budget"):
            assert play_honest(spec, dataset, population, defense, 0).utility.withheld == 0
