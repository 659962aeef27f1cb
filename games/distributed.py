"""Play a game as units on an executor (:mod:`games.executors`), with a journal, so a large matrix spreads
over the site's Celery workers and an interrupted run resumes where it stopped.

Two phases: the honest boards (one unit per data set × defense × seed), then every cell (one unit per
attack × budget × accounts on each board, the board travelling along). Each finished unit goes into the journal
before it counts, and a unit already in the journal is not played again. The result is assembled in :func:`run_game`'s
order, so the report is the one the local backend writes, but for wall times.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attacks
from games.executors import Executor, Unit
from games.gamefile import GameSpec
from games.journal import Journal
from games.progress import ProgressBar
from games.runner import Board, Cell, GameResult, check_game, describe
from games.units import board_from_json, board_unit, cell_from_json, cell_unit, unit_key

#: Makes a progress bar from (total, resumed, what: "boards" or "cells"); ``None``: no progress.
MakeBar = Callable[[int, int, str], ProgressBar]


def run_units(
    spec: GameSpec, executor: Executor, *, journal: Journal | None = None, bar: MakeBar | None = None
) -> GameResult:
    """Play every cell of ``spec`` on ``executor``; finished units come from and go to ``journal``.

    The same checks as :func:`games.runner.run_game` run first, in this process, so a bad game fails before
    any unit is sent. A unit whose key (:func:`games.units.unit_key`) is in ``journal`` is not played again.
    """
    started = time.perf_counter()
    check_game(spec)
    done = {} if journal is None else dict(journal.done)
    document = spec.document()
    groups = [(d.name, defense.name, seed) for d in spec.datasets for defense in spec.defenses for seed in spec.seeds]
    plays = [(attack.name, budget, accounts) for attack in spec.attacks for budget, accounts in spec.plays_of(attack)]

    def finished(key: str, result: Unit) -> None:
        done[key] = result
        if journal is not None:
            journal.add(key, result)

    board_keys = {group: unit_key(document, *group) for group in groups}
    todo = [group for group in groups if board_keys[group] not in done]
    units = [board_unit(document, *group) for group in todo]
    progress = None if bar is None or not units else bar(len(groups), len(groups) - len(units), "boards")
    try:
        for index, result in executor.map_unordered(units):
            finished(board_keys[todo[index]], result)
            if progress is not None:
                progress.advance("{} · {} · seed {}".format(*todo[index]))
    finally:
        if progress is not None:
            progress.close()
    boards = {group: board_from_json(done[board_keys[group]]) for group in groups}

    cells = [(group, attack, budget, accounts, unit_key(document, *group, attack, budget, accounts))
             for group in groups for attack, budget, accounts in plays]
    waiting = [(key, cell_unit(document, boards[group], attack, budget, accounts))
               for group, attack, budget, accounts, key in cells if key not in done]
    progress = None if bar is None else bar(len(cells), len(cells) - len(waiting), "cells")
    if progress is not None and progress.resumed:
        progress.show("from the journal")
    try:
        for index, result in executor.map_unordered([unit for _, unit in waiting]):
            finished(waiting[index][0], result)
            if progress is not None:
                progress.advance(describe(cell_from_json(result)))
    finally:
        if progress is not None:
            progress.close()
    played: list[Cell] = [cell_from_json(done[key]) for *_, key in cells]
    ordered: list[Board] = [boards[group] for group in groups]
    return GameResult(spec, played, ordered, time.perf_counter() - started, attacks.available())
