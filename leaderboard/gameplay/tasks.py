"""The worker side of games over Celery: one task, one game unit, JSON in and JSON out."""

from __future__ import annotations

from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from games.units import play_unit
from leaderboard.celery import app

#: The task's registered name (what the ``celery`` backend sends; it imports neither Django nor this module).
TASK = "leaderboard.gameplay.tasks.play_game_unit"


@app.task(
    name=TASK,
    ignore_result=False,  # the result store is how the unit's result gets back to the command
    # A unit is a pure function of its message, so playing it twice is harmless: acknowledged when done, a unit
    # whose worker machine vanished is redelivered by the broker. A unit whose pool process died (killed, out of
    # memory) fails instead of going back to the queue — no poisoned unit killing worker after worker — and the
    # command retries a failed unit once before it stops (the journal keeps everything finished).
    acks_late=True,
    reject_on_worker_lost=False,
    soft_time_limit=settings.LEADERBOARD_GAME_UNIT_TIME_LIMIT,
    time_limit=settings.LEADERBOARD_GAME_UNIT_TIME_LIMIT + 30,
)
def play_game_unit(unit: dict[str, Any]) -> dict[str, Any]:
    """Play one board or cell of a game (:func:`games.units.play_unit`).

    A cell cut by this worker's soft time limit is not a result the local backend would give (the game reports
    a crashing attack as an ``error`` cell, and the limit arrives as an exception inside the attack), so the unit
    fails instead of being recorded: the command retries it, then stops and names it.
    """
    result = play_unit(unit)
    if str(result.get("error", "")).startswith(f"{SoftTimeLimitExceeded.__name__}:"):
        raise SoftTimeLimitExceeded(f"the unit ran past LEADERBOARD_GAME_UNIT_TIME_LIMIT "
                                    f"({settings.LEADERBOARD_GAME_UNIT_TIME_LIMIT} s)")
    return result
