"""The thin Celery tasks and the Celery/Django settings the issue asks for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.conf import settings

from leaderboard.celery import app
from leaderboard.submissions import services, tasks
from leaderboard.submissions.models import Status
from tests.site.factories import N_ROWS

REPO = Path(__file__).resolve().parents[2]


def test_celery_is_configured_for_safe_scoring() -> None:
    conf = app.conf
    assert conf.task_serializer == "json" and conf.result_serializer == "json" and conf.accept_content == ["json"]
    assert conf.task_acks_late is True and conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert 0 < conf.task_soft_time_limit < conf.task_time_limit
    assert conf.task_time_limit < settings.LEADERBOARD_STUCK_AFTER
    assert conf.beat_schedule["sweep-stuck-submissions"]["task"] == tasks.submissions_sweep.name
    assert tasks.submission_score.acks_late is True
    assert tasks.submission_score.name in app.tasks and tasks.submissions_sweep.name in app.tasks


def test_the_scoring_core_imports_without_django_or_celery() -> None:
    assert (REPO / "leaderboard" / "__init__.py").read_text() == ""
    code = (
        "import sys, scoring, defenses; "
        "bad = [m for m in ('celery', 'django', 'kombu') if m in sys.modules]; "
        "sys.exit(f'imported {bad}' if bad else 0)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


@pytest.mark.django_db
def test_the_task_calls_the_service_and_is_idempotent(competition, participant, submit) -> None:
    submission = submit(competition, participant, np.full(N_ROWS, 0.4))
    assert tasks.submission_score.run(submission.pk) == "scored"
    assert tasks.submission_score.run(submission.pk) == "skipped"
    submission.refresh_from_db()
    assert submission.status == Status.SCORED


def test_the_task_retries_transient_errors_with_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    class Retried(Exception):
        pass

    def transient(*, submission_id: int) -> Any:
        raise services.TransientScoringError("database is locked")

    def retry(**kwargs: Any) -> Exception:
        calls.append(kwargs)
        return Retried()

    monkeypatch.setattr(services, "submission_score", transient)
    monkeypatch.setattr(tasks.submission_score, "retry", retry)
    with pytest.raises(Retried):
        tasks.submission_score.run(7)
    assert calls and calls[0]["countdown"] >= 1


def test_permanent_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(services, "submission_score", lambda *, submission_id: services.ScoreResult("failed", "x"))
    monkeypatch.setattr(tasks.submission_score, "retry", lambda **kwargs: pytest.fail("retried a permanent error"))
    assert tasks.submission_score.run(7) == "failed"


@pytest.mark.django_db
def test_a_broker_outage_at_upload_time_loses_nothing(
    competition, participant, monkeypatch, django_capture_on_commit_callbacks
) -> None:
    """The on-commit publish fails; the upload still succeeds, and the row stays queued, marked unpublished and
    pending a retry (tests/site/test_recovery.py)."""
    from leaderboard.submissions.models import Submission
    from tests.site.factories import predictions_csv

    monkeypatch.undo()  # the real submission_enqueue, not the recorder
    monkeypatch.setattr(settings, "LEADERBOARD_PUBLISH_RETRY_FOR", 0)  # no background retry in a unit test
    attempts: list[tuple[Any, ...]] = []

    def down(args: tuple[Any, ...], **kwargs: Any) -> Any:
        attempts.append(args)
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.submission_score, "apply_async", down)
    with django_capture_on_commit_callbacks(execute=True):
        created = services.submission_create(
            competition=competition, participant=participant, data=predictions_csv(competition, np.full(N_ROWS, 0.3))
        )
    assert attempts == [(created.pk,)]
    assert Submission.objects.get(pk=created.pk).status == Status.QUEUED
    assert Submission.objects.get(pk=created.pk).enqueued_at is None
    assert created.pk in services.REPUBLISHER.pending
    with services.REPUBLISHER._lock:
        services.REPUBLISHER._pending.clear()
