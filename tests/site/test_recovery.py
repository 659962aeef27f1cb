"""Prompt recovery without the sweep (issue 9, item 5): a claim whose worker is gone is taken over by the next
delivery or by a worker's start, a database error while claiming is retried instead of dropping the message,
and a publish that failed (broker down at upload time) is retried in the background, by the next upload and by
a worker's start. The same with real worker processes killed mid-score: ``tests/site/test_integration.py``."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.db import OperationalError
from django.db.models.query import QuerySet
from django.utils import timezone

from leaderboard.submissions import services, tasks
from leaderboard.submissions.models import Status, Submission
from tests.site.factories import N_ROWS, predictions_csv

pytestmark = pytest.mark.django_db


def _probs(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.05, 0.95, N_ROWS)


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _strand(submission: Any, *, claimed_by: str, heartbeat_age: float, started_age: float | None = None) -> None:
    """Leave ``submission`` in ``scoring`` as a worker that claimed it would (attempt 1)."""
    now = timezone.now()
    Submission.objects.filter(pk=submission.pk).update(
        status=Status.SCORING, claim_token="their-claim", claimed_by=claimed_by, attempts=1,
        heartbeat_at=now - timedelta(seconds=heartbeat_age),
        scoring_started_at=now - timedelta(seconds=started_age if started_age is not None else heartbeat_age),
    )


# --- a redelivered message takes over a dead claim ---------------------------------------------------------


def test_a_redelivery_takes_over_a_claim_whose_heartbeat_stopped(competition, participant, submit) -> None:
    # Today's code skipped every redelivery of a row in 'scoring' and left it to the sweep (300 s, with beat).
    submission = submit(competition, participant, _probs(1))
    _strand(submission, claimed_by="w1@elsewhere elsewhere 4242", heartbeat_age=60)
    assert services.submission_score(submission_id=submission.pk).action == "scored"
    submission.refresh_from_db()
    assert submission.status == Status.SCORED and submission.attempts == 2 and submission.public_score_text


def test_a_redelivery_takes_over_at_once_when_the_claiming_process_of_this_machine_is_gone(
    competition, participant, submit
) -> None:
    # A killed prefork child: Celery redelivers its message at once (reject_on_worker_lost); the claim's
    # heartbeat is still fresh, but its process is gone.
    submission = submit(competition, participant, _probs(2))
    _strand(submission, claimed_by=f"w1@here {socket.gethostname()} {_dead_pid()}", heartbeat_age=1)
    assert services.submission_score(submission_id=submission.pk).action == "scored"
    assert Submission.objects.get(pk=submission.pk).attempts == 2


def test_a_live_claim_is_left_alone_and_its_message_comes_back_when_the_claim_would_be_stale(
    competition, participant, submit, monkeypatch
) -> None:
    submission = submit(competition, participant, _probs(3))
    _strand(submission, claimed_by="w2@elsewhere elsewhere 4242", heartbeat_age=2)
    result = services.submission_score(submission_id=submission.pk)
    assert result.action == "busy"
    assert 20 < result.retry_after <= 60
    after = Submission.objects.get(pk=submission.pk)
    assert (after.status, after.claim_token, after.attempts) == (Status.SCORING, "their-claim", 1)
    # The task asks the broker to deliver it again then, instead of dropping it.
    retried: list[dict[str, Any]] = []

    class Retry(Exception):
        pass

    def retry(**kwargs: Any) -> Exception:
        retried.append(kwargs)
        return Retry()

    monkeypatch.setattr(tasks.submission_score, "retry", retry)
    with pytest.raises(Retry):
        tasks.submission_score.run(submission.pk)
    assert retried and retried[0]["countdown"] > 20


def test_a_claim_older_than_the_hard_time_limit_is_taken_over(competition, participant, submit, settings) -> None:
    submission = submit(competition, participant, _probs(4))
    limit = settings.LEADERBOARD_SCORING_HARD_TIME_LIMIT + settings.LEADERBOARD_CLAIM_STALE_AFTER
    _strand(submission, claimed_by="w3@elsewhere elsewhere 4242", heartbeat_age=1, started_age=limit + 5)
    assert services.submission_score(submission_id=submission.pk).action == "scored"


def test_a_database_error_while_claiming_is_retried_not_dropped(competition, participant, submit, monkeypatch) -> None:
    # Today's claim ran outside the try: the OperationalError escaped, Celery acked the failed message and the
    # row stayed queued until the sweep.
    submission = submit(competition, participant, _probs(5))
    real_update = QuerySet.update

    def failing_update(self: QuerySet, **kwargs: Any) -> int:
        if kwargs.get("status") == Status.SCORING:
            raise OperationalError("server closed the connection unexpectedly")
        return real_update(self, **kwargs)

    monkeypatch.setattr(QuerySet, "update", failing_update)
    with pytest.raises(services.TransientScoringError):
        services.submission_score(submission_id=submission.pk)
    retried: list[dict[str, Any]] = []
    def retry(**kwargs: Any) -> Exception:
        retried.append(kwargs)
        return RuntimeError()

    monkeypatch.setattr(tasks.submission_score, "retry", retry)
    with pytest.raises(RuntimeError):
        tasks.submission_score.run(submission.pk)
    assert retried and isinstance(retried[0]["exc"], services.TransientScoringError)
    monkeypatch.setattr(QuerySet, "update", real_update)
    assert Submission.objects.get(pk=submission.pk).status == Status.QUEUED
    assert services.submission_score(submission_id=submission.pk).action == "scored"


@pytest.mark.django_db(transaction=True)  # the heartbeat thread writes through a connection of its own
def test_a_scoring_worker_keeps_its_claim_alive(competition, participant, submit, settings, monkeypatch) -> None:
    settings.LEADERBOARD_CLAIM_HEARTBEAT = 0.05
    submission = submit(competition, participant, _probs(6))
    seen: list[Any] = []
    real_load = services._load_predictions

    def slow_load(*args: Any, **kwargs: Any) -> Any:
        first = Submission.objects.get(pk=submission.pk).heartbeat_at
        deadline = timezone.now() + timedelta(seconds=10)
        while Submission.objects.get(pk=submission.pk).heartbeat_at == first and timezone.now() < deadline:
            pass
        seen.append((first, Submission.objects.get(pk=submission.pk).heartbeat_at))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(services, "_load_predictions", slow_load)
    assert services.submission_score(submission_id=submission.pk).action == "scored"
    (first, later), = seen
    assert later > first
    scored = Submission.objects.get(pk=submission.pk)
    assert scored.claimed_by.split(" ")[1:] == [socket.gethostname(), str(os.getpid())]


# --- a worker's start ---------------------------------------------------------------------------------------


def test_a_restarted_worker_takes_back_its_earlier_selfs_claims_at_start(
    competition, participant, submit, enqueued
) -> None:
    # A worker killed with its whole process (solo pool, or the machine's container restarted): its message
    # stays unacknowledged in Redis for the visibility timeout (an hour). The worker restarting under the same
    # node name knows every claim its name made before it started is an orphan.
    mine = submit(competition, participant, _probs(7))
    theirs = submit(competition, participant, _probs(8))
    _strand(mine, claimed_by="w1@box box 1", heartbeat_age=3)
    _strand(theirs, claimed_by="w9@other other 1", heartbeat_age=3)
    enqueued.clear()
    result = services.submissions_recover(node="w1@box", started_at=timezone.now() - timedelta(seconds=1))
    assert result.requeued == [mine.pk] and enqueued == [mine.pk]
    assert Submission.objects.get(pk=mine.pk).status == Status.QUEUED
    assert Submission.objects.get(pk=theirs.pk).status == Status.SCORING  # alive, elsewhere
    assert services.submission_score(submission_id=mine.pk).action == "scored"


def test_the_worker_start_signal_runs_the_recovery(competition, participant, submit, enqueued) -> None:
    submission = submit(competition, participant, _probs(9))
    _strand(submission, claimed_by="w1@box box 1", heartbeat_age=3)
    enqueued.clear()
    tasks._record_start()

    class Consumer:
        hostname = "w1@box"

    tasks._recover_at_start(sender=Consumer())
    assert enqueued == [submission.pk]


# --- the sweep ----------------------------------------------------------------------------------------------


def test_the_sweep_takes_back_a_silent_claim_after_the_stale_time_not_five_minutes(
    competition, participant, submit, enqueued, django_capture_on_commit_callbacks
) -> None:
    silent = submit(competition, participant, _probs(10))
    busy = submit(competition, participant, _probs(11))
    _strand(silent, claimed_by="w1@elsewhere elsewhere 1", heartbeat_age=60)
    _strand(busy, claimed_by="w2@elsewhere elsewhere 1", heartbeat_age=1, started_age=100)
    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        result = services.submissions_sweep()
    assert result.requeued == [silent.pk] and enqueued == [silent.pk]
    assert Submission.objects.get(pk=busy.pk).status == Status.SCORING


# --- a failed publish ---------------------------------------------------------------------------------------


@pytest.fixture
def broker(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The real ``submission_enqueue`` over a fake broker that is down until ``state["up"]`` is set."""
    from leaderboard.submissions.services import REPUBLISHER

    monkeypatch.setattr(services, "submission_enqueue", ORIGINAL_ENQUEUE)
    state: dict[str, Any] = {"up": False, "published": []}

    def apply_async(args: tuple[Any, ...], **kwargs: Any) -> None:
        if not state["up"]:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        state["published"].append(args[0])

    monkeypatch.setattr(tasks.submission_score, "apply_async", apply_async)
    yield state
    with REPUBLISHER._lock:
        REPUBLISHER._pending.clear()


ORIGINAL_ENQUEUE = services.submission_enqueue


def test_an_upload_made_while_the_broker_is_down_is_published_when_it_is_back(
    competition, participant, broker, django_capture_on_commit_callbacks
) -> None:
    # Today's code logged the failure and left the row queued for the sweep (five minutes, and only with beat).
    with django_capture_on_commit_callbacks(execute=True):
        first = services.submission_create(
            competition=competition, participant=participant, data=predictions_csv(competition, _probs(12))
        )
    assert Submission.objects.get(pk=first.pk).enqueued_at is None  # marked unpublished
    assert services.REPUBLISHER.pending == {first.pk}
    assert services.REPUBLISHER.flush() == []  # still down: it stays pending
    broker["up"] = True
    # The next upload finds the broker back and publishes the one the outage left behind too.
    with django_capture_on_commit_callbacks(execute=True):
        second = services.submission_create(
            competition=competition, participant=participant, data=predictions_csv(competition, _probs(13))
        )
    assert broker["published"] == [second.pk, first.pk]
    assert services.REPUBLISHER.pending == set()
    assert Submission.objects.get(pk=first.pk).enqueued_at is not None


@pytest.mark.django_db(transaction=True)  # the retry thread writes through a connection of its own
def test_the_background_retry_publishes_without_another_upload(
    competition, participant, broker, settings, django_capture_on_commit_callbacks
) -> None:
    settings.LEADERBOARD_PUBLISH_RETRY_FOR = 30
    with django_capture_on_commit_callbacks(execute=True):
        created = services.submission_create(
            competition=competition, participant=participant, data=predictions_csv(competition, _probs(14))
        )
    broker["up"] = True
    thread = services.REPUBLISHER._thread
    assert thread is not None
    thread.join(timeout=10)
    assert broker["published"] == [created.pk] and services.REPUBLISHER.pending == set()


def test_a_worker_start_publishes_what_a_broker_outage_left_unpublished(
    competition, participant, broker, django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        created = services.submission_create(
            competition=competition, participant=participant, data=predictions_csv(competition, _probs(15))
        )
    with services.REPUBLISHER._lock:
        services.REPUBLISHER._pending.clear()  # as if the web process that took the upload had stopped
    broker["up"] = True
    assert services.submissions_recover(node="w1@box").reenqueued == [created.pk]
    assert broker["published"] == [created.pk]
    assert Submission.objects.get(pk=created.pk).enqueued_at is not None
