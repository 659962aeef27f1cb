"""The worker side of games over Celery: one task plays a batch of game units, JSON in and JSON out."""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from leaderboard.celery import app

#: The task's registered name (what the ``celery`` backend sends; it imports neither Django nor this module).
TASK = "leaderboard.gameplay.tasks.play_game_units"


@app.task(
    name=TASK,
    ignore_result=False,  # the result store is how the unit's result gets back to the command
    # A unit is a pure function of its message, so playing it twice is harmless: acknowledged when done, a unit
    # whose worker machine vanished is redelivered by the broker. A unit whose pool process died (killed, out of
    # memory) fails instead of going back to the queue — no poisoned unit killing worker after worker — and the
    # command retries a failed unit once before it stops (the journal keeps everything finished).
    acks_late=True,
    reject_on_worker_lost=False,
    soft_time_limit=settings.LEADERBOARD_GAME_TASK_TIME_LIMIT,
    time_limit=settings.LEADERBOARD_GAME_TASK_TIME_LIMIT + 30,
)
def play_game_units(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Play a batch of boards or cells of a game (:func:`games.units.play_unit`), their results in order: a
    batch of fast cells pays the broker's per-task cost once.

    A cell cut by this worker's soft time limit is not a result the local backend would give (the game reports
    a crashing attack as an ``error`` cell, and the limit arrives as an exception inside the attack), so the unit
    fails instead of being recorded: the command retries it, then stops and names it.
    """
    from games.units import play_unit  # here: it loads every attack, which a scoring-only start never needs

    if not isinstance(units, list):
        raise TypeError("a game task carries a list of units")
    results = [play_unit(unit) for unit in units]
    if any(str(result.get("error", "")).startswith(f"{SoftTimeLimitExceeded.__name__}:") for result in results):
        raise SoftTimeLimitExceeded(f"the task ran past LEADERBOARD_GAME_TASK_TIME_LIMIT "
                                    f"({settings.LEADERBOARD_GAME_TASK_TIME_LIMIT} s)")
    return results
