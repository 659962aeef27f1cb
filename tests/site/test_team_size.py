"""The host's maximum team size (``Competition.max_team_size``): enforced on accepting and on merging with an
error naming the limit, set through the host API, the admin and ``update_competition``; and the quota refusal
worded for a team."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from leaderboard.errors import TeamConflict
from leaderboard.submissions.teams import invitation_accept, team_create, team_invite, team_merge
from tests.site.conftest import api_client


def _invite_and_accept(team: Any, inviter: Any, user: Any) -> Any:
    return invitation_accept(invitation_id=team_invite(team=team, inviter=inviter, username=user.username).pk,
                             user=user)


@pytest.mark.django_db
def test_accepting_and_merging_over_the_maximum_team_size_are_refused_naming_it(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any, clients: dict[str, Any],
) -> None:
    competition = make_competition(daily_limit=None)
    patched = clients["host"].patch(f"/api/v1/host/competitions/{competition.slug}/", {"max_team_size": 2},
                                    format="json")
    assert patched.status_code == 200, patched.json()
    assert clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/").json()["max_team_size"] == 2
    assert clients["host"].patch(f"/api/v1/host/competitions/{competition.slug}/", {"max_team_size": 0},
                                 format="json").status_code == 400
    competition.refresh_from_db()
    carol, dan = User.objects.create_user("carol"), User.objects.create_user("dan")
    owls = team_create(competition=competition, user=participant, name="Owls")
    _invite_and_accept(owls, participant, other_participant)
    invitation = team_invite(team=owls, inviter=participant, username="carol")
    with pytest.raises(TeamConflict, match="the team would have 3 members, over this competition's maximum team "
                                           "size of 2"):
        invitation_accept(invitation_id=invitation.pk, user=carol)
    # Through the API the same refusal is a 409 with that message.
    refused = api_client(carol).post(f"/api/v1/invitations/{invitation.pk}/accept/")
    assert refused.status_code == 409 and "maximum team size of 2" in refused.json()["detail"]
    larks = team_create(competition=competition, user=carol, name="Larks")
    with pytest.raises(TeamConflict, match="this merge is refused: the team would have 3 members"):
        team_merge(team=larks, other_id=owls.pk, user=carol)
    # Within the limit once the host raises it (the management command takes the option too).
    call_command("update_competition", competition.slug, "--max-team-size", "4", stdout=io.StringIO())
    competition.refresh_from_db()
    assert competition.max_team_size == 4
    _invite_and_accept(larks, carol, dan)
    assert team_merge(team=larks, other_id=owls.pk, user=carol).merged is False
    assert team_merge(team=owls, other_id=larks.pk, user=participant).merged is True


@pytest.mark.django_db
def test_the_admin_form_offers_the_maximum_team_size(competition: Any) -> None:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="x"))
    page = client.get(f"/admin/competitions/competition/{competition.pk}/change/").content.decode()
    assert 'name="max_team_size"' in page


@pytest.mark.django_db
def test_the_daily_quota_refusal_is_worded_for_a_team(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any, submit: Callable[..., Any],
) -> None:
    competition = make_competition(daily_limit=2)
    owls = team_create(competition=competition, user=participant, name="Owls")
    _invite_and_accept(owls, participant, other_participant)
    submit(competition, participant, np.full(competition.n_rows, 0.5))
    submit(competition, participant, np.full(competition.n_rows, 0.4))
    refused = api_client(other_participant).post(
        f"/api/v1/competitions/{competition.slug}/submissions/",
        {"predictions": [0.5] * competition.n_rows}, format="json",
    )
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("your team has used 2 of 2 submissions today; the daily limit resets")
    client = Client()
    client.force_login(other_participant)
    page = client.get(f"/c/{competition.slug}/submit/").content.decode()
    assert "your team has used 2 of 2 submissions today." in page
    # Alone, the wording is as before.
    solo = make_competition(daily_limit=1)
    carol = User.objects.create_user("carol")
    submit(solo, carol, np.full(solo.n_rows, 0.5))
    alone = api_client(carol).post(f"/api/v1/competitions/{solo.slug}/submissions/",
                                   {"predictions": [0.5] * solo.n_rows}, format="json")
    assert alone.json()["detail"].startswith("daily limit of 1 submissions reached")
