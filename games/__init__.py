"""Attacker-vs-defender games: a TOML game file lists data sets, defense chains, attacks and seeds; the runner
plays every cell offline through :class:`attacks.LocalOracle` (or, in live mode, against a running site) with
an honest population scored on the same leaderboard, and the report writes CSV, JSON, PNG charts and a
self-contained HTML page (from ``games/templates``) that states the mode.

``leaderboard-game run GAMEFILE --out DIR`` (or ``python -m games run ...``) is the command line. With
``--backend celery`` the cells go as JSON units (:mod:`games.units`) to the site's Celery workers
(:mod:`games.distributed`, :mod:`games.executors`), journaled so an interrupted run resumes (:mod:`games.journal`).
"""

from __future__ import annotations

from games.gamefile import GameFileError, GameSpec, load_game, parse_game
from games.runner import GameResult, run_game

__all__ = ["GameFileError", "GameResult", "GameSpec", "load_game", "parse_game", "run_game"]
