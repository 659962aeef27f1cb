"""A team's one quota under concurrency, on the session's own database (SQLite, or PostgreSQL with
``DATABASE_URL``): three members upload 18 files at once against a daily limit of 5; exactly 5 exist after."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connections

from leaderboard.competitions.services import competition_create
from leaderboard.errors import QuotaExceeded
from leaderboard.submissions.models import Invitation, Submission
from leaderboard.submissions.services import submission_create
from leaderboard.submissions.teams import invitation_accept, team_create, team_invite
from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv


@pytest.mark.django_db(transaction=True)
def test_parallel_uploads_by_three_members_share_one_limit_of_five(enqueued: list[int]) -> None:
    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(slug="team-race", labels_csv=labels_csv(labels), daily_limit=5)
    members = [User.objects.create_user(name) for name in ("ann", "ben", "cat")]
    team = team_create(competition=competition, user=members[0], name="Racers")
    for member in members[1:]:
        invitation: Invitation = team_invite(team=team, inviter=members[0], username=member.username)
        invitation_accept(invitation_id=invitation.pk, user=member)
    rng = np.random.default_rng(1)
    files = [predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)) for _ in range(18)]
    barrier = threading.Barrier(len(files))
    outcomes: list[str] = []
    lock = threading.Lock()

    def upload(who: Any, data: bytes) -> None:
        outcome: str
        try:
            barrier.wait()
            submission_create(competition=competition, participant=who, data=data)
            outcome = "created"
        except QuotaExceeded:
            outcome = "quota"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [
        threading.Thread(target=upload, args=(members[i % 3], data)) for i, data in enumerate(files)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["created"] * 5 + ["quota"] * 13
    assert Submission.objects.filter(competition=competition).count() == 5
