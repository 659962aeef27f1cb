"""Thin Celery task of the screen: release, one at a time and in upload order, the submissions a host's decision
let go (each back to ``queued``, then scored by the worker's own service, as a fresh upload is)."""

from __future__ import annotations

import logging

from leaderboard.celery import app
from leaderboard.screening import services
from leaderboard.submissions.services import TransientScoringError, submission_score

logger = logging.getLogger(__name__)


@app.task(name=services.RELEASE_TASK, acks_late=True, ignore_result=True, max_retries=8, bind=True)
def held_release(self: object, competition_id: int) -> int:
    """Release the competition's submissions marked ``releasing``; returns how many were scored now. A row
    whose scoring hits a transient error stays queued for the sweep (its order among the rest is then lost)."""
    done = 0
    for submission_id in services.held_release_order(competition_id=int(competition_id)):
        if not services.held_requeue(submission_id=submission_id):
            continue
        try:
            submission_score(submission_id=submission_id)
        except TransientScoringError as exc:
            logger.warning("releasing held submission %s: %s; the sweep will score it", submission_id, exc)
            continue
        done += 1
    return done
