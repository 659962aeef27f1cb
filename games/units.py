"""A game as independent units of work in JSON, so any executor — this process, a process pool, the site's
Celery workers on other machines — can play them and the results are the same.

Two kinds of unit, both plain JSON in and out (never pickle: a worker must not run what a message says):

- a **board** unit (data set × defense × seed): the honest population submits once to the competition
  (:func:`games.runner.play_honest`); its result is the :class:`Board`;
- a **cell** unit (the board's competition × attack × budget × accounts): one attack against a fresh competition,
  ranked on that board (:func:`games.runner.play_cell`); its result is the :class:`Cell`.

A unit carries the whole game as the tables of a game file (:meth:`GameSpec.document`), which the worker
validates again, and names its data set, defense and attack; the worker rebuilds the population itself (seeded,
cached per process). Floats cross JSON exactly (``repr`` round-trips), so a cell played anywhere equals the
cell played in process but for its wall time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from functools import lru_cache
from typing import Any

from games.gamefile import GameFileError, GameSpec, parse_game
from games.population import load_population
from games.runner import Board, Cell, Participant, jsonable, play_cell, play_honest
from games.utility import AttackerOutcome, HonestUtility

BOARD = "board"
CELL = "cell"
#: The version of the unit format; a worker refuses a unit of another version instead of misreading it.
FORMAT = 1


#: The game-level settings a unit's result depends on (the name, description and utility tolerance do not).
SETTINGS = ("metric", "eps", "decimals", "final_confidence")


def unit_key(
    document: dict[str, Any], dataset: str, defense: str, seed: int, attack: str | None = None,
    budget: int | None = None, accounts: int = 1,
) -> str:
    """The journal key of a board (``attack=None``) or a cell: a digest of exactly what its result depends on —
    the game's scoring settings, its data set, defense and (for a cell) attack entries, the seed, the budget and
    the accounts.

    So a finished unit is found again when the game around it grows (another seed, attack or defense) and is
    played again when anything it depends on changes; the unit format version is part of it.
    """
    game = document["game"]
    content: dict[str, Any] = {
        "format": FORMAT,
        "settings": {key: game.get(key) for key in SETTINGS},
        "dataset": _entry(document, "datasets", dataset),
        "defense": _entry(document, "defenses", defense),
        "seed": seed,
    }
    if attack is not None:
        content.update(attack=_entry(document, "attacks", attack), budget=budget, accounts=accounts)
    text = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _entry(document: dict[str, Any], table: str, name: str) -> dict[str, Any]:
    return next(entry for entry in document[table] if entry["name"] == name)  # type: ignore[no-any-return]


def board_unit(document: dict[str, Any], dataset: str, defense: str, seed: int) -> dict[str, Any]:
    """The unit that plays the honest board of ``dataset`` × ``defense`` × ``seed``."""
    return {"format": FORMAT, "kind": BOARD, "game": document, "dataset": dataset, "defense": defense, "seed": seed}


def cell_unit(
    document: dict[str, Any], board: Board, attack: str, budget: int | None, accounts: int = 1
) -> dict[str, Any]:
    """The unit that plays ``attack`` at ``budget`` with ``accounts`` against ``board``'s competition (the board
    travels along, so the cell needs nothing else from the run that made it)."""
    return {
        "format": FORMAT, "kind": CELL, "game": document, "dataset": board.dataset, "defense": board.defense,
        "seed": board.seed, "attack": attack, "budget": budget, "accounts": accounts, "board": board_to_json(board),
    }


def play_unit(unit: dict[str, Any]) -> dict[str, Any]:
    """Play one unit; its result as JSON. What a Celery worker runs (``leaderboard.gameplay.tasks``).

    Raises :class:`GameFileError` for a unit that is not well formed (unknown format, kind or name, or a game
    that does not validate); an attack's own failure or crash is the cell's status, as in process.
    """
    if not isinstance(unit, dict) or unit.get("format") != FORMAT:
        raise GameFileError(f"not a game unit of format {FORMAT}")
    spec = _spec(json.dumps(unit.get("game"), sort_keys=True))
    dataset = _named(spec.datasets, unit.get("dataset"), "data set")
    defense = _named(spec.defenses, unit.get("defense"), "defense")
    seed = unit.get("seed")
    if seed not in spec.seeds:
        raise GameFileError(f"seed {seed!r} is not one of the game's seeds")
    population = load_population(dataset)
    if unit.get("kind") == BOARD:
        return board_to_json(play_honest(spec, dataset, population, defense, seed))
    if unit.get("kind") != CELL:
        raise GameFileError(f"unknown unit kind {unit.get('kind')!r}")
    attack = _named(spec.attacks, unit.get("attack"), "attack")
    budget = unit.get("budget")
    accounts = unit.get("accounts", 1)
    if (budget, accounts) not in spec.plays_of(attack):
        raise GameFileError(f"attack {attack.name!r} is not played at budget {budget!r} with {accounts!r} accounts "
                            "in this game")
    board = board_from_json(unit["board"])
    return cell_to_json(play_cell(spec, dataset, population, defense, attack, seed, board, budget=budget,
                                  accounts=accounts))


@lru_cache(maxsize=16)
def _spec(document: str) -> GameSpec:
    """The unit's game, validated once per process and game (a worker plays many cells of one game)."""
    data = json.loads(document)
    if not isinstance(data, dict):
        raise GameFileError("the unit's game is not a table")
    return parse_game(data, source="<game unit>")


def _named(items: Any, name: object, what: str) -> Any:
    for item in items:
        if item.name == name:
            return item
    raise GameFileError(f"unknown {what} {name!r} in the unit's game")


# --- codecs: every field explicitly, so a result is plain JSON and decodes to the same dataclasses ----------


def board_to_json(board: Board) -> dict[str, Any]:
    return jsonable(
        {
            "dataset": board.dataset, "defense": board.defense, "seed": board.seed,
            "participants": [asdict(p) for p in board.participants], "utility": asdict(board.utility),
        }
    )


def board_from_json(data: dict[str, Any]) -> Board:
    return Board(
        dataset=data["dataset"], defense=data["defense"], seed=int(data["seed"]),
        participants=[Participant(**p) for p in data["participants"]], utility=HonestUtility(**data["utility"]),
    )


def cell_to_json(cell: Cell) -> dict[str, Any]:
    data = asdict(cell)  # nested dataclasses (outcome, utility) become tables
    return jsonable(data)  # type: ignore[no-any-return]


def cell_from_json(data: dict[str, Any]) -> Cell:
    fields = dict(data)
    fields["outcome"] = AttackerOutcome(**fields["outcome"])
    fields["utility"] = HonestUtility(**fields["utility"])
    return Cell(**fields)
