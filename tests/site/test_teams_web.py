"""The team pages beyond joining: merging two teams on the My team page (the API's rules and messages), and the
teammates' submissions on My submissions (names and the released score only)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.test import Client
from django.utils import timezone


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_team_page_merges_two_teams_when_both_ask(
    competition: Any, participant: Any, other_participant: Any
) -> None:
    from leaderboard.submissions.models import Participation
    from leaderboard.submissions.teams import team_create

    owls = team_create(competition=competition, user=participant, name="Owls")
    larks = team_create(competition=competition, user=other_participant, name="Larks")
    url = f"/c/{competition.slug}/team/"
    alice, bob = _client(participant), _client(other_participant)
    assert b'id="merge-form"' in alice.get(url).content
    asked = alice.post(url, {"action": "merge", "team": larks.pk}, follow=True)
    assert b"Merge requested" in asked.content and b"You asked to merge with: Larks" in asked.content
    offer = bob.get(url).content
    assert b"Owls asks to merge with your team" in offer
    merged = bob.post(url, {"action": "merge", "team": owls.pk}, follow=True)
    assert b"The teams merged: you are all in team &#x27;Larks&#x27;" in merged.content
    assert set(Participation.objects.filter(team=larks).values_list("participant__username", flat=True)) == {
        "alice", "bob"}
    assert b"choose the team" in alice.post(url, {"action": "merge", "team": "x"}, follow=True).content


@pytest.mark.django_db
def test_the_merge_form_shows_the_deadline_and_quota_refusals(
    make_competition: Callable[..., Any], participant: Any, other_participant: Any, submit: Callable[..., Any],
) -> None:
    from leaderboard.submissions.teams import team_create

    competition = make_competition(daily_limit=1)
    owls = team_create(competition=competition, user=participant, name="Owls")
    larks = team_create(competition=competition, user=other_participant, name="Larks")
    submit(competition, participant, np.full(competition.n_rows, 0.5))
    submit(competition, other_participant, np.full(competition.n_rows, 0.5))
    url = f"/c/{competition.slug}/team/"
    over = _client(participant).post(url, {"action": "merge", "team": larks.pk}, follow=True)
    assert b"over the daily limit of 1 for one team" in over.content
    competition.team_merger_deadline = timezone.now() - timedelta(hours=1)
    competition.save()
    late = _client(other_participant).post(url, {"action": "merge", "team": owls.pk}, follow=True)
    assert b"the team merger deadline passed" in late.content


@pytest.mark.django_db
def test_my_submissions_shows_teammates_released_scores_only(
    make_competition: Callable[..., Any], hidden_labels: np.ndarray, participant: Any, other_participant: Any,
    submit: Callable[..., Any], score_all: Any,
) -> None:
    from django.contrib.auth.models import User

    from leaderboard.submissions.models import Submission
    from leaderboard.submissions.teams import invitation_accept, team_create, team_invite

    competition = make_competition(daily_limit=None, defenses=[{"name": "rounding", "decimals": 2}])
    owls = team_create(competition=competition, user=participant, name="Owls")
    invitation_accept(invitation_id=team_invite(team=owls, inviter=participant, username="bob").pk,
                      user=other_participant)
    carol = User.objects.create_user("carol")
    bobs = submit(competition, other_participant, np.where(hidden_labels == 1, 0.8, 0.2))
    carols = submit(competition, carol, np.where(hidden_labels == 1, 0.7, 0.3))
    assert score_all() == ["scored", "scored"]
    bobs.refresh_from_db()
    page = _client(participant).get(f"/c/{competition.slug}/submissions/").content.decode()
    assert 'id="teammate-submissions"' in page and "<td>bob</td>" in page
    assert f"#{bobs.pk}" in page and bobs.public_score_text in page
    assert bobs.raw_public_text not in page and repr(bobs.raw_public) not in page  # never the raw score
    assert f"#{carols.pk}" not in page  # another team's
    # Carol, alone, has no teammates' table.
    assert 'id="teammate-submissions"' not in _client(carol).get(f"/c/{competition.slug}/submissions/").content.decode()
    assert Submission.objects.count() == 2
