"""Idempotent uploads in the service: one ``Idempotency-Key`` is one submission, even when uploads race.

``submission_create(idempotency_key=...)`` returns the participant's earlier submission under that key; two
concurrent uploads with one key create one row (the participation lock serialises them, and the unique
constraint on (participant, competition, key) backs that up when the lock is bypassed).
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connections, transaction

from leaderboard.competitions.services import competition_create
from leaderboard.submissions import services
from leaderboard.submissions.models import Submission
from leaderboard.submissions.services import submission_create
from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv


@pytest.mark.django_db(transaction=True)
def test_parallel_uploads_with_one_key_create_one_submission(enqueued: list[int]) -> None:
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(slug="key-race", labels_csv=labels_csv(labels), daily_limit=5)
    racer = User.objects.create_user("racer")
    data = predictions_csv(competition, np.random.default_rng(1).uniform(0.05, 0.95, N_ROWS))
    barrier = threading.Barrier(8)
    outcomes: list[Any] = []
    lock = threading.Lock()

    def upload() -> None:
        outcome: Any
        try:
            barrier.wait()
            submission = submission_create(competition=competition, participant=racer, data=data,
                                           idempotency_key="same")
            outcome = (submission.pk, submission.replayed)
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=upload) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    (only,) = Submission.objects.filter(participant=racer)
    assert sorted(outcomes, key=str) == sorted([(only.pk, False)] + [(only.pk, True)] * 7, key=str)
    assert enqueued == [only.pk]  # scored once


@pytest.mark.django_db
def test_the_unique_constraint_catches_a_key_the_lock_did_not(
    make_competition: Any, participant: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    competition = make_competition()
    data = predictions_csv(competition, np.full(N_ROWS, 0.5))
    with django_capture_on_commit_callbacks(execute=True):
        first = submission_create(competition=competition, participant=participant, data=data, idempotency_key="k")
    # Two rows with one key cannot exist ...
    with pytest.raises(IntegrityError), transaction.atomic():
        Submission.objects.create(competition=competition, participant=participant, upload=data, idempotency_key="k")
    # ... so an upload that missed the earlier one in both look-ups still ends with it, not a second row or a 500.
    real = services._submission_for_key
    calls: list[int] = []

    def blind_twice(*args: Any) -> Any:
        calls.append(1)
        return None if len(calls) <= 2 else real(*args)

    monkeypatch.setattr(services, "_submission_for_key", blind_twice)
    again = submission_create(competition=competition, participant=participant, data=data, idempotency_key="k")
    assert again.pk == first.pk and again.replayed and len(calls) == 3
    assert Submission.objects.count() == 1
    # Without a key, every upload is a new submission (the constraint ignores rows without one).
    for _ in range(2):
        submission_create(competition=competition, participant=participant, data=data)
    assert Submission.objects.count() == 3
