"""``scope: "team"`` through the site: one Ladder, privacy budget … per team (a participant without a team is a
team of one), kept in :class:`TeamDefenseState`, handed over when a team is created, merged when teams merge
(never more lenient than either side), and locked so that teammates' submissions are scored one at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from tests.site.conftest import api_client

LADDER = [{"name": "ladder", "mode": "fixed", "eta": 0.01, "scope": "team"}]
BUDGET = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
          {"name": "privacy_budget", "epsilon": 2.0, "composition": "basic", "scope": "team"}]


def _join(team: Any, inviter: Any, user: Any) -> None:
    from leaderboard.submissions.teams import invitation_accept, team_invite

    invitation = team_invite(team=team, inviter=inviter, username=user.username)
    invitation_accept(invitation_id=invitation.pk, user=user)


def _released(user: Any, submission: Any) -> dict[str, Any]:
    result: dict[str, Any] = api_client(user).get(f"/api/v1/submissions/{submission.pk}/").json()
    return result


@pytest.mark.django_db
def test_teammates_share_one_ladder_the_second_members_first_submission_is_not_free(
    make_competition: Callable[..., Any], hidden_labels: np.ndarray, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any,
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.submissions.models import DefenseState, TeamDefenseState
    from leaderboard.submissions.teams import team_create

    competition = make_competition(daily_limit=None, defenses=LADDER)
    owls = team_create(competition=competition, user=participant, name="Owls")
    _join(owls, participant, other_participant)
    carol = User.objects.create_user("carol")  # no team: a team of one
    good = np.where(hidden_labels == 1, 0.8, 0.2)
    first = submit(competition, participant, good)
    bobs = submit(competition, other_participant, np.full(competition.n_rows, 0.5))
    carols = submit(competition, carol, np.full(competition.n_rows, 0.5))
    assert score_all() == ["scored"] * 3
    best = _released(participant, first)["public_score"]
    assert best is not None
    # Bob's worse first submission is released the team's best (which Alice already saw), not its own score.
    assert _released(other_participant, bobs)["public_score"] == best
    assert _released(carol, carols)["public_score"] not in (None, best)
    team_row = TeamDefenseState.objects.get(competition=competition, team=owls, split="public")
    assert team_row.state[0]["best"] == best
    own = DefenseState.objects.get(competition=competition, participant=other_participant, split="public")
    assert own.state == [{}]
    assert TeamDefenseState.objects.filter(competition=competition, participant=carol).count() == 2


@pytest.mark.django_db
def test_a_budget_spent_by_one_member_is_spent_for_the_other_and_a_new_team_is_no_fresh_budget(
    make_competition: Callable[..., Any], hidden_labels: np.ndarray, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any,
) -> None:
    from defenses.privacy_budget import TEAM_EXHAUSTED_MESSAGE
    from leaderboard.submissions.teams import team_create

    competition = make_competition(daily_limit=None, defenses=BUDGET)
    good = np.where(hidden_labels == 1, 0.8, 0.2)
    solo = submit(competition, participant, good)  # spent alone, before the team exists
    assert score_all() == ["scored"]
    assert _released(participant, solo)["public_score"] is not None
    owls = team_create(competition=competition, user=participant, name="Owls")  # takes Alice's spent budget along
    _join(owls, participant, other_participant)
    second = submit(competition, participant, good)
    bobs = submit(competition, other_participant, good)
    assert score_all() == ["scored", "scored"]
    assert _released(participant, second)["public_score"] is not None
    withheld = _released(other_participant, bobs)
    assert withheld["public_score"] is None and withheld["public_message"] == TEAM_EXHAUSTED_MESSAGE


@pytest.mark.django_db
def test_merging_two_teams_adds_up_their_budgets_and_keeps_the_better_ladder(
    make_competition: Callable[..., Any], hidden_labels: np.ndarray, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any,
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.submissions.models import TeamDefenseState
    from leaderboard.submissions.teams import team_create, team_merge

    chain = [{"name": "noise", "kind": "laplace", "epsilon": 1.0},
             {"name": "privacy_budget", "epsilon": 3.0, "composition": "basic", "scope": "team"},
             {"name": "ladder", "mode": "fixed", "eta": 0.01, "scope": "team"}]
    competition = make_competition(daily_limit=None, defenses=chain)
    owls = team_create(competition=competition, user=participant, name="Owls")
    larks = team_create(competition=competition, user=other_participant, name="Larks")
    submit(competition, participant, np.where(hidden_labels == 1, 0.8, 0.2))
    submit(competition, other_participant, np.where(hidden_labels == 1, 0.9, 0.1))
    submit(competition, other_participant, np.where(hidden_labels == 1, 0.9, 0.1))
    assert score_all() == ["scored"] * 3
    bests = {t.name: TeamDefenseState.objects.get(team=t, split="public").state[2]["best"] for t in (owls, larks)}
    assert team_merge(team=larks, other_id=owls.pk, user=other_participant).merged is False
    assert team_merge(team=owls, other_id=larks.pk, user=participant).merged is True
    merged = TeamDefenseState.objects.get(team=owls, split="public").state
    assert merged[1]["releases"] == 3 and merged[1]["sum_epsilon"] == pytest.approx(3.0)
    assert merged[2]["best"] == min(bests.values())  # log loss: the lower (better) leader
    assert not TeamDefenseState.objects.filter(team_id=larks.pk).exists()
    # The merged team has spent its 3 releases: no fresh budget for anyone in it, Bob included.
    later = submit(competition, other_participant, np.where(hidden_labels == 1, 0.95, 0.05))
    assert score_all() == ["scored"]
    assert _released(other_participant, later)["public_score"] is None
    # A newcomer with their own spending who accepts an invitation brings it along too.
    dan = User.objects.create_user("dan")
    submit(competition, dan, np.where(hidden_labels == 1, 0.7, 0.3))
    assert score_all() == ["scored"]
    _join(owls, participant, dan)
    assert TeamDefenseState.objects.get(team=owls, split="public").state[1]["releases"] == 4
    assert not TeamDefenseState.objects.filter(participant=dan).exists()


@pytest.mark.django_db(transaction=True)
def test_teammates_submissions_scored_in_parallel_spend_one_team_budget_one_release_at_a_time(
    enqueued: list[int],
) -> None:
    """Six submissions by three teammates, scored by six threads at once, on a team budget of two releases:
    exactly two are released. Without the team row's lock, workers reading the budget together would each spend it."""
    from django.contrib.auth.models import User

    from leaderboard.competitions.services import competition_create
    from leaderboard.submissions.models import Submission
    from leaderboard.submissions.services import submission_create, submission_score
    from leaderboard.submissions.teams import team_create
    from tests.site.factories import LABEL_SEED, N_ROWS, labels_csv, predictions_csv
    from tests.site.races import race

    labels = np.random.default_rng(LABEL_SEED).integers(0, 2, N_ROWS)
    competition = competition_create(slug="team-budget", labels_csv=labels_csv(labels), daily_limit=None,
                                     defenses=[BUDGET[0], {**BUDGET[1], "epsilon": 2.0}])
    members = [User.objects.create_user(name) for name in ("ann", "ben", "cat")]
    team = team_create(competition=competition, user=members[0], name="Racers")
    for member in members[1:]:
        _join(team, members[0], member)
    outsider = User.objects.create_user("out")
    rng = np.random.default_rng(2)
    for i in range(6):
        submission_create(competition=competition, participant=members[i % 3],
                          data=predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)))
    submission_create(competition=competition, participant=outsider,
                      data=predictions_csv(competition, rng.uniform(0.05, 0.95, N_ROWS)))
    ids = list(Submission.objects.filter(competition=competition).values_list("pk", flat=True))

    def score(pk: int) -> Callable[[], str]:
        return lambda: submission_score(submission_id=pk).action

    assert race([score(pk) for pk in ids]) == ["scored"] * len(ids)
    released = Submission.objects.filter(competition=competition, public_score__isnull=False)
    assert released.filter(participant__in=members).count() == 2
    assert released.filter(participant=outsider).count() == 1  # another team of one: its own budget


@pytest.mark.django_db
def test_the_admin_lists_team_states_read_only(make_competition: Callable[..., Any], participant: Any) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    from leaderboard.submissions.models import TeamDefenseState
    from leaderboard.submissions.teams import team_create

    competition = make_competition(daily_limit=None, defenses=LADDER)
    owls = team_create(competition=competition, user=participant, name="Owls")
    row = TeamDefenseState.objects.create(competition=competition, team=owls, split="public", state=[{"best": 0.3}])
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="x"))
    assert "Owls" in client.get("/admin/submissions/teamdefensestate/").content.decode()
    assert client.get(f"/admin/submissions/teamdefensestate/{row.pk}/change/").status_code == 200
    assert client.get("/admin/submissions/teamdefensestate/add/").status_code == 403
