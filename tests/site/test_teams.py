"""Teams through the API, as on Kaggle: create, invite, accept, one quota and one board row per team, finals per
team, leave before the first submission, merge before the deadline within one quota; and the refusals (clear
4xx, never a 500, nothing of another team leaks)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from tests.site.conftest import api_client, predictions_csv

pytestmark = pytest.mark.django_db


def _user(name: str) -> Any:
    from django.contrib.auth.models import User

    return User.objects.create_user(name)


def _upload(client: Any, competition: Any, seed: int, capture: Any) -> Any:
    values = np.random.default_rng(seed).uniform(0.05, 0.95, competition.n_rows)
    with capture(execute=True):
        return client.post(
            f"/api/v1/competitions/{competition.slug}/submissions/",
            predictions_csv(competition, values),
            content_type="text/csv",
        )


def _create(client: Any, competition: Any, name: str) -> Any:
    return client.post(f"/api/v1/competitions/{competition.slug}/teams/", {"name": name}, format="json")


def _invite(client: Any, team_id: int, username: str) -> Any:
    return client.post(f"/api/v1/teams/{team_id}/invitations/", {"username": username}, format="json")


def _accept(client: Any, invitation_id: int) -> Any:
    return client.post(f"/api/v1/invitations/{invitation_id}/accept/")


@pytest.fixture
def duo(competition: Any, clients: dict[str, Any]) -> dict[str, Any]:
    """alice creates "Owls" and bob joins it through an invitation."""
    created = _create(clients["participant"], competition, "Owls")
    assert created.status_code == 201, created.json()
    team = created.json()
    invited = _invite(clients["participant"], team["id"], "bob")
    assert invited.status_code == 201, invited.json()
    accepted = _accept(clients["other"], invited.json()["id"])
    assert accepted.status_code == 200, accepted.json()
    return accepted.json()


def test_the_team_journey_one_quota_one_board_row(
    competition: Any, clients: dict[str, Any], duo: dict[str, Any], score_all: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    assert duo["name"] == "Owls" and duo["members"] == ["alice", "bob"] and duo["is_member"]
    # Submissions by either member count against the team's one quota (daily limit 5).
    for i, who in enumerate(["participant", "other", "participant", "other", "participant"]):
        response = _upload(clients[who], competition, i, django_capture_on_commit_callbacks)
        assert response.status_code == 202, response.json()
    for who in ("participant", "other"):
        refused = _upload(clients[who], competition, 99, django_capture_on_commit_callbacks)
        assert refused.status_code == 429, refused.json()
        quota = clients[who].get(f"/api/v1/competitions/{competition.slug}/quota/").json()
        assert quota["used_today"] == 5 and quota["remaining_today"] == 0
    assert set(score_all()) == {"scored"}
    # A solo participant keeps their own quota and row.
    carol = api_client(_user("carol"))
    assert _upload(carol, competition, 7, django_capture_on_commit_callbacks).status_code == 202
    score_all()
    board = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/leaderboard/").json()
    names = [row["participant"] for row in board["rows"]]
    assert sorted(names) == ["Owls", "carol"]
    owls = next(row for row in board["rows"] if row["participant"] == "Owls")
    assert owls["entries"] == 5
    csv_text = clients["anonymous"].get(
        f"/api/v1/competitions/{competition.slug}/leaderboard/", {"format": "csv"}
    ).content.decode()
    assert "Owls" in csv_text and "alice" not in csv_text and "bob" not in csv_text


def test_one_set_of_finals_per_team(
    competition: Any, clients: dict[str, Any], duo: dict[str, Any], score_all: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    ids = [
        _upload(clients[who], competition, i, django_capture_on_commit_callbacks).json()["id"]
        for i, who in enumerate(["participant", "participant", "other"])
    ]
    score_all()
    for who, pk in (("participant", ids[0]), ("participant", ids[1])):
        response = clients[who].post(f"/api/v1/submissions/{pk}/select/", {"selected": True}, format="json")
        assert response.status_code == 200, response.json()
    third = clients["other"].post(f"/api/v1/submissions/{ids[2]}/select/", {"selected": True}, format="json")
    assert third.status_code == 400 and "at most 2 final submissions" in third.json()["detail"]


def test_the_private_board_shows_the_team(
    make_competition: Any, score_all: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from leaderboard.submissions.selectors import leaderboard_rows

    competition = make_competition(slug="private-teams", daily_limit=None)
    alice, bob = api_client(_user("al")), api_client(_user("bo"))
    team = _create(alice, competition, "Ravens").json()
    _accept(bob, _invite(alice, team["id"], "bo").json()["id"])
    for i, who in enumerate([alice, bob, bob]):
        _upload(who, competition, i, django_capture_on_commit_callbacks)
    score_all()
    rows = leaderboard_rows(competition=competition, board="private", allow_private_before_close=True)
    assert [row.participant for row in rows] == ["Ravens"]


def test_a_duplicate_team_name_is_a_409(competition: Any, clients: dict[str, Any]) -> None:
    assert _create(clients["participant"], competition, "Owls").status_code == 201
    again = _create(clients["other"], competition, "owls ")
    assert again.status_code == 409 and "already exists" in again.json()["detail"]


def test_one_team_per_participant(competition: Any, clients: dict[str, Any], duo: dict[str, Any]) -> None:
    second = _create(clients["other"], competition, "Larks")
    assert second.status_code == 409 and "already in team" in second.json()["detail"]


def test_inviting_a_user_already_in_a_team_is_a_409(competition: Any, clients: dict[str, Any]) -> None:
    owls = _create(clients["participant"], competition, "Owls").json()
    assert _create(clients["other"], competition, "Larks").status_code == 201
    refused = _invite(clients["participant"], owls["id"], "bob")
    assert refused.status_code == 409 and "already in another team" in refused.json()["detail"]
    twice = _invite(clients["participant"], owls["id"], "alice")
    assert twice.status_code == 409


def test_invite_refusals(competition: Any, clients: dict[str, Any]) -> None:
    owls = _create(clients["participant"], competition, "Owls").json()
    assert _invite(clients["participant"], owls["id"], "nobody-here").status_code == 404
    assert _invite(clients["other"], owls["id"], "carol").status_code == 403  # not a member
    assert _invite(clients["anonymous"], owls["id"], "bob").status_code in (401, 403)
    assert _invite(clients["participant"], owls["id"], "").status_code == 400
    assert clients["participant"].post(f"/api/v1/teams/{owls['id']}/invitations/", "x", content_type="text/plain"
                                       ).status_code in (400, 415)
    assert _invite(clients["participant"], 99999, "bob").status_code == 404
    assert _invite(clients["participant"], owls["id"], "bob").status_code == 201
    assert _invite(clients["participant"], owls["id"], "bob").status_code == 409  # already invited


def test_accepting_someone_elses_invitation_is_refused(competition: Any, clients: dict[str, Any]) -> None:
    _user("carol")
    owls = _create(clients["participant"], competition, "Owls").json()
    invitation = _invite(clients["participant"], owls["id"], "carol").json()
    for who in ("other", "participant"):
        refused = _accept(clients[who], invitation["id"])
        assert refused.status_code == 404, refused.json()
    assert _accept(clients["anonymous"], invitation["id"]).status_code in (401, 403)
    assert _accept(clients["other"], 99999).status_code == 404


def test_invitations_are_seen_by_members_and_the_invitee_only(competition: Any, clients: dict[str, Any]) -> None:
    carol = api_client(_user("carol"))
    owls = _create(clients["participant"], competition, "Owls").json()
    _invite(clients["participant"], owls["id"], "carol")
    member_view = clients["participant"].get(f"/api/v1/teams/{owls['id']}/").json()
    assert [i["invitee"] for i in member_view["invitations"]] == ["carol"]
    for outsider in (clients["other"], clients["anonymous"]):
        view = outsider.get(f"/api/v1/teams/{owls['id']}/").json()
        assert view["invitations"] == [] and view["is_member"] is False
    assert [i["team_name"] for i in carol.get("/api/v1/invitations/").json()] == ["Owls"]
    assert clients["other"].get("/api/v1/invitations/").json() == []
    listing = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/teams/").json()
    assert listing == [{**listing[0], "name": "Owls", "members": ["alice"]}]
    assert "invitations" not in listing[0]


def test_leave_before_the_first_submission_only(
    competition: Any, clients: dict[str, Any], duo: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    team_id = duo["id"]
    assert clients["other"].post(f"/api/v1/teams/{team_id}/leave/").status_code == 204
    assert clients["participant"].get(f"/api/v1/teams/{team_id}/").json()["members"] == ["alice"]
    assert clients["other"].post(f"/api/v1/teams/{team_id}/leave/").status_code == 403  # no longer a member
    assert _upload(clients["participant"], competition, 1, django_capture_on_commit_callbacks).status_code == 202
    refused = clients["participant"].post(f"/api/v1/teams/{team_id}/leave/")
    assert refused.status_code == 409 and "after its first submission" in refused.json()["detail"]


def test_the_last_member_leaving_deletes_the_team(competition: Any, clients: dict[str, Any]) -> None:
    owls = _create(clients["participant"], competition, "Owls").json()
    assert clients["participant"].post(f"/api/v1/teams/{owls['id']}/leave/").status_code == 204
    assert clients["participant"].get(f"/api/v1/teams/{owls['id']}/").status_code == 404
    assert _create(clients["participant"], competition, "Owls").status_code == 201


def test_an_invitee_with_submissions_joins_only_as_a_merge_within_the_quota(
    make_competition: Any, django_capture_on_commit_callbacks: Any
) -> None:
    competition = make_competition(slug="merge-quota", daily_limit=3)
    alice, bob = api_client(_user("al")), api_client(_user("bo"))
    team = _create(alice, competition, "Owls").json()
    for i in range(2):
        _upload(alice, competition, i, django_capture_on_commit_callbacks)
        _upload(bob, competition, 10 + i, django_capture_on_commit_callbacks)
    invitation = _invite(alice, team["id"], "bo").json()
    refused = _accept(bob, invitation["id"])
    assert refused.status_code == 409
    assert "counts as a merge" in refused.json()["detail"] and "daily limit of 3" in refused.json()["detail"]
    # Within the quota the join is a merge and the submissions become the team's.
    roomy = make_competition(slug="merge-roomy", daily_limit=10)
    team = _create(alice, roomy, "Owls").json()
    _upload(alice, roomy, 1, django_capture_on_commit_callbacks)
    _upload(bob, roomy, 2, django_capture_on_commit_callbacks)
    assert _accept(bob, _invite(alice, team["id"], "bo").json()["id"]).status_code == 200
    assert bob.get(f"/api/v1/competitions/{roomy.slug}/quota/").json()["used_today"] == 2


def test_the_merger_deadline(make_competition: Any, clients: dict[str, Any]) -> None:
    competition = make_competition(slug="late")
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    set_by_host = clients["host"].patch(
        f"/api/v1/host/competitions/{competition.slug}/", {"team_merger_deadline": past}, format="json"
    )
    assert set_by_host.status_code == 200, set_by_host.json()
    assert clients["participant"].patch(
        f"/api/v1/host/competitions/{competition.slug}/", {"team_merger_deadline": None}, format="json"
    ).status_code == 403
    owls = _create(clients["participant"], competition, "Owls").json()
    invitation = _invite(clients["participant"], owls["id"], "bob").json()
    refused = _accept(clients["other"], invitation["id"])
    assert refused.status_code == 403 and "merger deadline" in refused.json()["detail"]
    detail = clients["anonymous"].get(f"/api/v1/competitions/{competition.slug}/").json()
    assert detail["team_merger_deadline"] is not None


def test_merging_two_teams_needs_both_sides_and_fits_one_quota(
    make_competition: Any, score_all: Any, django_capture_on_commit_callbacks: Any
) -> None:
    competition = make_competition(slug="merge", daily_limit=4)
    alice, bob, carol = (api_client(_user(name)) for name in ("al", "bo", "ca"))
    owls = _create(alice, competition, "Owls").json()
    larks = _create(bob, competition, "Larks").json()
    for client, seed in ((alice, 1), (bob, 2)):
        _upload(client, competition, seed, django_capture_on_commit_callbacks)
    score_all()
    # Not a member of either: refused; a bad body: 400.
    assert carol.post(f"/api/v1/teams/{owls['id']}/merge/", {"team": larks["id"]}, format="json").status_code == 403
    assert alice.post(f"/api/v1/teams/{owls['id']}/merge/", {"team": "x"}, format="json").status_code == 400
    assert alice.post(f"/api/v1/teams/{owls['id']}/merge/", {"team": owls["id"]}, format="json").status_code == 409
    assert alice.post(f"/api/v1/teams/{owls['id']}/merge/", {"team": 99999}, format="json").status_code == 404
    asked = alice.post(f"/api/v1/teams/{owls['id']}/merge/", {"team": larks["id"]}, format="json")
    assert asked.status_code == 202 and asked.json()["merged"] is False
    agreed = bob.post(f"/api/v1/teams/{larks['id']}/merge/", {"team": owls["id"]}, format="json")
    assert agreed.status_code == 200, agreed.json()
    assert agreed.json()["merged"] is True and agreed.json()["team"]["name"] == "Larks"
    assert sorted(agreed.json()["team"]["members"]) == ["al", "bo"]
    assert alice.get(f"/api/v1/competitions/{competition.slug}/quota/").json()["used_today"] == 2
    board = alice.get(f"/api/v1/competitions/{competition.slug}/leaderboard/").json()["rows"]
    assert [(row["participant"], row["entries"]) for row in board] == [("Larks", 2)]
    # Over one quota: refused.
    dave, erin = api_client(_user("da")), api_client(_user("er"))
    herons = _create(dave, competition, "Herons").json()
    for seed in range(3):
        _upload(dave, competition, 20 + seed, django_capture_on_commit_callbacks)
    refused = dave.post(f"/api/v1/teams/{herons['id']}/merge/", {"team": agreed.json()["team"]["id"]}, format="json")
    assert refused.status_code == 409 and "daily limit of 4" in refused.json()["detail"]
    assert erin.get("/api/v1/invitations/").status_code == 200


@pytest.mark.parametrize(
    "body",
    [{}, {"name": ""}, {"name": "   "}, {"name": "x" * 65}, {"name": ["a"]}, {"name": "a\u0000b"}, {"name": None}],
)
def test_bad_team_names_are_400(competition: Any, clients: dict[str, Any], body: dict[str, Any]) -> None:
    response = clients["participant"].post(
        f"/api/v1/competitions/{competition.slug}/teams/", body, format="json"
    )
    assert response.status_code == 400, response.content


def test_teams_need_a_login_and_an_existing_competition(clients: dict[str, Any], competition: Any) -> None:
    assert _create(clients["anonymous"], competition, "Owls").status_code in (401, 403)
    assert clients["participant"].post("/api/v1/competitions/nope/teams/", {"name": "a"}, format="json"
                                       ).status_code == 404
    assert clients["anonymous"].get("/api/v1/competitions/nope/teams/").status_code == 404
    assert clients["anonymous"].get("/api/v1/teams/123456/").status_code == 404


def test_a_closed_competition_refuses_team_changes(make_competition: Any, clients: dict[str, Any]) -> None:
    competition = make_competition(slug="closed")
    from leaderboard.competitions.models import Competition

    Competition.objects.filter(pk=competition.pk).update(
        opens_at=timezone.now() - timedelta(days=2), closes_at=timezone.now() - timedelta(days=1)
    )
    response = _create(clients["participant"], competition, "Owls")
    assert response.status_code == 403 and "closed" in response.json()["detail"]


def test_the_openapi_schema_lists_the_team_endpoints(clients: dict[str, Any]) -> None:
    schema = clients["anonymous"].get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/competitions/{slug}/teams/",
        "/api/v1/teams/{team_id}/invitations/",
        "/api/v1/invitations/{invitation_id}/accept/",
        "/api/v1/teams/{team_id}/merge/",
    ):
        assert path in paths


def test_the_admin_lists_teams_and_invitations(competition: Any, clients: dict[str, Any], client: Any) -> None:
    from django.contrib.auth.models import User

    owls = _create(clients["participant"], competition, "Owls").json()
    _invite(clients["participant"], owls["id"], "bob")
    client.force_login(User.objects.create_superuser("root", password="x"))
    for url in (
        "/admin/submissions/team/",
        f"/admin/submissions/team/{owls['id']}/change/",
        "/admin/submissions/invitation/",
    ):
        page = client.get(url)
        assert page.status_code == 200, url
    assert b"alice" in client.get(f"/admin/submissions/team/{owls['id']}/change/").content


def test_the_team_page_creates_invites_accepts_and_leaves(
    competition: Any, participant: Any, other_participant: Any, client: Any
) -> None:
    from django.test import Client

    url = f"/c/{competition.slug}/team/"
    assert client.get(url).status_code == 302  # sign in first
    alice, bob = client, Client()
    alice.force_login(participant)
    bob.force_login(other_participant)
    assert b"Create a team" in alice.get(url).content
    page = alice.post(url, {"action": "create", "team_name": "Owls"}, follow=True)
    assert b"Team &#x27;Owls&#x27; created." in page.content and b"<li>alice</li>" in page.content
    refused = bob.post(url, {"action": "create", "team_name": "owls"}, follow=True)
    assert b"already exists" in refused.content
    invited = alice.post(url, {"action": "invite", "username": "bob"}, follow=True)
    assert b'id="pending"' in invited.content and b"bob" in invited.content
    # The invitation is shown to the invitee, not to a third user.
    carol = Client()
    from django.contrib.auth.models import User

    carol.force_login(User.objects.create_user("carol"))
    assert b"Owls" not in carol.get(url).content
    from leaderboard.submissions.models import Invitation

    invitation = Invitation.objects.get(invitee=other_participant)
    assert b"Accept" in bob.get(url).content
    stolen = carol.post(url, {"action": "accept", "invitation": invitation.pk}, follow=True)
    assert b"no invitation" in stolen.content
    for bad in ({"action": "accept", "invitation": "x"}, {"action": "nope"}, {"action": "invite"}):
        assert carol.post(url, bad).status_code in (302, 404)
    joined = bob.post(url, {"action": "accept", "invitation": invitation.pk}, follow=True)
    assert b"You joined team" in joined.content and b"<li>bob</li>" in joined.content
    left = bob.post(url, {"action": "leave"}, follow=True)
    assert b"You left the team." in left.content
    assert b"My team" in alice.get(f"/c/{competition.slug}/").content


def test_out_of_range_ids_are_404_not_500(competition: Any, clients: dict[str, Any]) -> None:
    huge = 2**70
    owls = _create(clients["participant"], competition, "Owls").json()
    assert clients["anonymous"].get(f"/api/v1/teams/{huge}/").status_code == 404
    assert _invite(clients["participant"], huge, "bob").status_code == 404
    assert _accept(clients["other"], huge).status_code == 404
    assert clients["other"].post(f"/api/v1/invitations/{huge}/decline/").status_code == 404
    assert clients["participant"].post(f"/api/v1/teams/{huge}/leave/").status_code == 404
    merge = clients["participant"].post(f"/api/v1/teams/{owls['id']}/merge/", {"team": huge}, format="json")
    assert merge.status_code in (400, 404), merge.content


def test_listing_teams_takes_the_same_few_queries_for_any_number(competition: Any) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from leaderboard.submissions.teams import team_create

    client = api_client(None)
    url = f"/api/v1/competitions/{competition.slug}/teams/"
    counts: list[int] = []
    for n in (2, 8):
        for i in range(len(counts) * 2, n):
            team_create(competition=competition, user=_user(f"u{i}"), name=f"team {i}")
        with CaptureQueriesContext(connection) as queries:
            listing = client.get(url).json()
        assert len(listing) == n and all(len(team["members"]) == 1 for team in listing)
        counts.append(len(queries.captured_queries))
    assert counts[0] == counts[1]
