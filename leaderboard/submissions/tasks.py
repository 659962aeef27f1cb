"""Thin Celery tasks: they take ids, load nothing themselves and call the services."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from celery.signals import worker_init, worker_ready
from django.utils import timezone

from leaderboard.celery import app
from leaderboard.submissions import services

logger = logging.getLogger(__name__)


@app.task(
    bind=True,
    name=services.SCORE_TASK,
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
    if result.action == "busy":
        # Another worker holds the claim and may be alive: come back when its claim would be stale, so a
        # worker that died (on another machine) is taken over without waiting for the sweep.
        raise self.retry(countdown=result.retry_after)
    return result.action


_started_at: datetime | None = None


@worker_init.connect
def _record_start(**kwargs: Any) -> None:
    """When this worker started (before it consumes anything): claims its node made earlier are orphans."""
    global _started_at
    _started_at = timezone.now()


@worker_ready.connect
def _recover_at_start(sender: Any = None, **kwargs: Any) -> None:
    """Take back what a killed worker left (its claims, unpublished uploads) without waiting for the sweep."""
    from django.db import connections

    try:
        services.submissions_recover(node=getattr(sender, "hostname", "") or "", started_at=_started_at)
    except Exception:  # a database hiccup here must not stop the worker; the sweep still runs
        logger.exception("recovery at worker start failed")
    finally:
        connections.close_all()


@app.task(name="leaderboard.submissions.tasks.submissions_sweep", ignore_result=True, acks_late=False)
def submissions_sweep() -> dict[str, int]:
    """Periodic (celery beat): re-enqueue submissions stuck in queued or scoring."""
    result = services.submissions_sweep()
    return {"requeued": len(result.requeued), "reenqueued": len(result.reenqueued)}
