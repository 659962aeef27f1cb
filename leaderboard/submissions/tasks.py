"""Thin Celery tasks: they take ids, load nothing themselves and call the services."""

from __future__ import annotations

import logging
from typing import Any

from leaderboard.celery import app
from leaderboard.submissions import services

logger = logging.getLogger(__name__)


@app.task(
    bind=True,
    name="leaderboard.submissions.tasks.submission_score",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=8,
    ignore_result=True,
)
def submission_score(self: Any, submission_id: int) -> str:
    """Score one submission. Retries with exponential backoff only for transient (database/broker) errors."""
    try:
        result = services.submission_score(submission_id=int(submission_id))
    except services.TransientScoringError as exc:
        countdown = min(2 ** self.request.retries, 60)
        logger.warning("%s; retrying in %s s", exc, countdown)
        # Past max_retries the row stays queued and the periodic sweep picks it up later.
        raise self.retry(exc=exc, countdown=countdown) from exc
    return result.action


@app.task(name="leaderboard.submissions.tasks.submissions_sweep", ignore_result=True, acks_late=False)
def submissions_sweep() -> dict[str, int]:
    """Periodic (celery beat): re-enqueue submissions stuck in queued or scoring."""
    result = services.submissions_sweep()
    return {"requeued": len(result.requeued), "reenqueued": len(result.reenqueued)}
