"""The audit's Celery task: it takes the audit's id and calls the service (which never leaves it running)."""

from __future__ import annotations

from django.conf import settings

from leaderboard.audits import services
from leaderboard.celery import app


@app.task(
    name=services.AUDIT_TASK,
    # Not re-delivered after a worker dies: the row is failed by the heartbeat check and the host asks again,
    # rather than a poisoned audit killing worker after worker.
    acks_late=False,
    ignore_result=True,
    soft_time_limit=settings.LEADERBOARD_AUDIT_TIME_LIMIT + 60,
    time_limit=settings.LEADERBOARD_AUDIT_TIME_LIMIT + 90,
)
def audit_run(audit_id: int) -> str:
    """Run one queued audit (see :func:`leaderboard.audits.services.audit_run`)."""
    return services.audit_run(audit_id=int(audit_id))
