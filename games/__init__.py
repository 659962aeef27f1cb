"""Attacker-vs-defender games: a TOML game file lists data sets, defense chains, attacks and seeds; the runner
plays every cell offline through :class:`attacks.LocalOracle` (or, in live mode, against a running site) with
an honest population scored on the same leaderboard, and the report writes CSV, JSON, PNG charts and a
self-contained HTML page (from ``games/templates``) that states the mode.

``leaderboard-game run GAMEFILE --out DIR`` (or ``python -m games run ...``) is the command line. With
``--backend celery`` the cells go as JSON units (:mod:`games.units`) to the site's Celery workers
(:mod:`games.distributed`, :mod:`games.executors`), journaled so an interrupted run resumes (:mod:`games.journal`).

The names below load on first use (PEP 562): the runner imports every attack (scipy included, ~2 s), which a
process that only needs a constant of a submodule (the site's manage.py, gunicorn, its scoring worker) never pays.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from games.gamefile import GameFileError, GameSpec, load_game, parse_game
    from games.runner import GameResult, run_game

__all__ = ["GameFileError", "GameResult", "GameSpec", "load_game", "parse_game", "run_game"]

_HOME = {"GameFileError": "gamefile", "GameSpec": "gamefile", "load_game": "gamefile", "parse_game": "gamefile",
         "GameResult": "runner", "run_game": "runner"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"games.{_HOME[name]}"), name)
        globals()[name] = value  # once: later lookups are plain module attributes
        return value
    raise AttributeError(f"module 'games' has no attribute {name!r}")
