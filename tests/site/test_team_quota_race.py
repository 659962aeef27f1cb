"""A team's one quota under concurrency, on the session's own database (SQLite, or PostgreSQL with
``DATABASE_URL``): three members upload 18 files at once against a daily limit of 5; exactly 5 exist after."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User

from leaderboard.competitions.services import competition_create
from leaderboard.errors import QuotaExceeded
from leaderboard.submissions.models import Invitation, Submission
from leaderboard.submissions.services import submission_create
from leaderboard.submissions.teams import invitation_accept, team_create, team_invite
from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv
from tests.site.races import race


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

    def upload(who: Any, data: bytes) -> Callable[[], str]:
        return lambda: (submission_create(competition=competition, participant=who, data=data), "created")[1]

    outcomes = race([upload(members[i % 3], data) for i, data in enumerate(files)],
                    outcomes={QuotaExceeded: "quota"})
    assert sorted(outcomes) == ["created"] * 5 + ["quota"] * 13
    assert Submission.objects.filter(competition=competition).count() == 5


@pytest.mark.django_db(transaction=True)
def test_a_merge_racing_with_both_teams_uploads_keeps_one_limit_and_never_deadlocks(enqueued: list[int]) -> None:
    from leaderboard.errors import TeamConflict
    from leaderboard.submissions.models import Participation
    from leaderboard.submissions.teams import team_merge

    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(slug="merge-race", labels_csv=labels_csv(labels), daily_limit=5)
    ann, ben = User.objects.create_user("ann"), User.objects.create_user("ben")
    owls = team_create(competition=competition, user=ann, name="Owls")
    larks = team_create(competition=competition, user=ben, name="Larks")
    assert team_merge(team=owls, other_id=larks.pk, user=ann).merged is False  # asked; ben agrees in the race
    rng = np.random.default_rng(2)
    files = [predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)) for _ in range(8)]

    def upload(who: Any, data: bytes) -> Callable[[], str]:
        return lambda: (submission_create(competition=competition, participant=who, data=data), "created")[1]

    def agree() -> str:
        return "merged" if team_merge(team=larks, other_id=owls.pk, user=ben).merged else "asked"

    jobs = [upload((ann, ben)[i % 2], data) for i, data in enumerate(files)] + [agree]
    outcomes = race(jobs, outcomes={QuotaExceeded: "quota", TeamConflict: "merge refused"})
    assert set(outcomes) <= {"created", "quota", "merged", "merge refused"}, outcomes
    count = Submission.objects.filter(competition=competition).count()
    if "merged" in outcomes:
        assert count <= 5 and Participation.objects.filter(team=larks).count() == 2
    else:
        assert count <= len(files)  # each team alone, under its own limit of 5
        for who in (ann, ben):
            assert Submission.objects.filter(competition=competition, participant=who).count() <= 5
